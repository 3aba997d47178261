import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { beforeAll, describe, expect, it } from "vitest";
import { buildToolSearchDescription, CATALOG_TOKEN_BUDGET } from "../search/catalog.ts";
import { TOOLS_PER_SEARCH } from "../search/slots.ts";
import { mcpCallDefinition, toolSearchDefinition } from "../tool-search.ts";
import type { ToolMetadata } from "../types.ts";
import { loadCorpusTools, replicateCorpus } from "./fixtures/search-eval/corpus-tools.ts";

const tokens = (text: string) => encode(text).length;
/** A server's line starts the line: `name`, `name: words…` or `name (description)…`. */
const lineOf = (description: string, server: string) =>
  description.split("\n").find((line) => line === server || line.startsWith(`${server}:`) || line.startsWith(`${server} (`));

/**
 * What Pi's built-in MCP costs over Pi alone in its `deferred` mode at the corpus's 45 servers (measured on Pi 1.5.2,
 * issue 21): ours must not cost more, ToolSearch and McpCall together, at any scale.
 */
const BUILT_IN_DEFERRED_TOKENS = 641;
/** A tool as a provider receives it (name, description, JSON Schema), as bench/tokens.ts counts it. */
const toolTokens = (tool: { name: string; description: string; parameters: unknown }) =>
  tokens(JSON.stringify({ name: tool.name, description: tool.description, parameters: tool.parameters }));
const unused = () => {
  throw new Error("not called");
};
const MCP_CALL_TOKENS = toolTokens(mcpCallDefinition({ getActiveTools: unused, setActiveTools: unused }, unused, unused));
const alwaysOnTokens = (description: string) =>
  toolTokens(toolSearchDefinition({ getActiveTools: unused, setActiveTools: unused }, unused, description)) + MCP_CALL_TOKENS;

/** A seeded shuffle, so a failure can be replayed. */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  const copy = [...items];
  let state = seed;
  for (let i = copy.length - 1; i > 0; i--) {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    const j = state % (i + 1);
    [copy[i], copy[j]] = [copy[j], copy[i]];
  }
  return copy;
}

describe("ToolSearch description over the real corpus", () => {
  let corpus: ToolMetadata[];
  let serverNames: string[];
  beforeAll(() => {
    corpus = loadCorpusTools();
    serverNames = [...new Set(corpus.map((tool) => tool.serverName))];
  });
  const firstServers = (count: number) => {
    const chosen = new Set(serverNames.slice(0, count));
    return corpus.filter((tool) => chosen.has(tool.serverName));
  };

  it.each([1, 5, 15, 45])("stays within %i servers' budget and names every server", (count) => {
    const tools = firstServers(count);
    const description = buildToolSearchDescription({ tools });
    expect(tokens(JSON.stringify(description))).toBeLessThanOrEqual(CATALOG_TOKEN_BUDGET);
    expect(alwaysOnTokens(description)).toBeLessThanOrEqual(BUILT_IN_DEFERRED_TOKENS);
    for (const server of new Set(tools.map((tool) => tool.serverName))) expect(lineOf(description, server)).toBeDefined();
    expect(description).toContain(`${tools.length} tools on ${count} server`);
  });

  it("tells what each of the 45 servers is for: words of its tools (or their names) on every server's line", () => {
    const description = buildToolSearchDescription({ tools: corpus });
    for (const server of serverNames) expect(lineOf(description, server)).toMatch(/^\S+( \(\S+…\))?:( \S+){1,}$|^\S+ \(\S+…\):$/);
  });

  it("gives most of 45 servers the start of their description, none more while another has none, within budget", () => {
    const servers = serverNames.map((name) => ({
      name,
      description: `The team's everyday work, in the words of whoever set up ${name} for them`,
    }));
    const description = buildToolSearchDescription({ tools: corpus, servers });
    expect(alwaysOnTokens(description)).toBeLessThanOrEqual(BUILT_IN_DEFERRED_TOKENS);
    const lines = serverNames.map((server) => lineOf(description, server)!);
    const described = lines.filter((line) => line.includes(" (The team's"));
    expect(described.length).toBeGreaterThanOrEqual(serverNames.length * 0.8);
    expect(new Set(described.map((line) => line.slice(line.indexOf(" (")))).size).toBe(1);
  });

  it("stays within budget for each corpus server alone, the 201-tool one included", () => {
    for (const server of serverNames) {
      const description = buildToolSearchDescription({ tools: corpus.filter((tool) => tool.serverName === server) });
      expect(tokens(JSON.stringify(description))).toBeLessThanOrEqual(CATALOG_TOKEN_BUDGET);
      expect(alwaysOnTokens(description)).toBeLessThanOrEqual(BUILT_IN_DEFERRED_TOKENS);
      expect(lineOf(description, server)).toBeDefined();
    }
  });

  it("stays within budget at 10k tools on the same 45 servers, naming every server", () => {
    const tools = serverNames.flatMap((server) => {
      const own = corpus.filter((tool) => tool.serverName === server);
      return Array.from({ length: Math.ceil(10_000 / corpus.length) }, (_, copy) =>
        own.map((tool) => ({ ...tool, name: `${tool.name}_${copy}`, originalName: `${tool.originalName}_${copy}` })),
      ).flat();
    });
    expect(tools.length).toBeGreaterThanOrEqual(10_000);
    const description = buildToolSearchDescription({ tools });
    expect(tokens(JSON.stringify(description))).toBeLessThanOrEqual(CATALOG_TOKEN_BUDGET);
    expect(alwaysOnTokens(description)).toBeLessThanOrEqual(BUILT_IN_DEFERRED_TOKENS);
    for (const server of serverNames) expect(lineOf(description, server)).toBeDefined();
  });

  it("stays within budget at 10k tools on hundreds of servers, counting those it cannot name", () => {
    const tools = replicateCorpus(10_000);
    const servers = new Set(tools.map((tool) => tool.serverName));
    const description = buildToolSearchDescription({ tools });
    expect(tokens(JSON.stringify(description))).toBeLessThanOrEqual(CATALOG_TOKEN_BUDGET);
    expect(alwaysOnTokens(description)).toBeLessThanOrEqual(BUILT_IN_DEFERRED_TOKENS);
    const named = [...servers].filter((server) => lineOf(description, server)).length;
    expect(description).toContain(`\n… and ${servers.size - named} more servers`);
  });

  it("shows a small catalog whole: every tool name with a one-line description", () => {
    const tools = firstServers(1);
    const description = buildToolSearchDescription({ tools });
    expect(description).toContain("(everything__…):");
    for (const tool of tools) expect(description).toContain(`  ${tool.originalName}: ${tool.description.slice(0, 20)}`);
  });

  it("summarises big servers by their characteristic words when all 45 do not fit whole", () => {
    const description = buildToolSearchDescription({ tools: corpus });
    expect(description).toMatch(/\njira-cloud: [^\n]*sprint/);
    expect(description).toMatch(/\ngoogle-maps: [^\n]*geocode/);
    // Small servers by their tool names, space-separated.
    expect(description).toContain("\nredis: delete get list set\n");
  });

  it("is byte-stable: the same catalog in any order gives the same text", () => {
    const servers = serverNames.map((name) => ({ name, description: `${name} server` }));
    const reference = buildToolSearchDescription({ tools: corpus, servers });
    for (const seed of [1, 2, 3]) {
      expect(buildToolSearchDescription({ tools: shuffled(corpus, seed), servers: shuffled(servers, seed) })).toBe(reference);
    }
    const small = firstServers(5);
    expect(buildToolSearchDescription({ tools: shuffled(small, 7) })).toBe(buildToolSearchDescription({ tools: small }));
  });
});

describe("ToolSearch description", () => {
  const tool = (serverName: string, originalName: string, description: string, name = `${serverName}__${originalName}`): ToolMetadata => ({
    name,
    serverName,
    originalName,
    description,
    inputSchema: { type: "object" },
  });

  it("tells the model how many tools a call loads; the query's schema says how to search", () => {
    const description = buildToolSearchDescription({ tools: [tool("srv", "echo", "Echo")] });
    expect(description).toContain(`up to ${TOOLS_PER_SEARCH} per call`);
    expect(description).toContain("not in your tool list until loaded");
    const { parameters } = toolSearchDefinition({ getActiveTools: unused, setActiveTools: unused }, unused, description);
    expect(JSON.stringify(parameters)).toMatch(
      /"query":\{"type":"string","description":"Keywords or a plain request[^"]*select:name1,name2/,
    );
  });

  it("says when there is nothing to find", () => {
    expect(buildToolSearchDescription({ tools: [] })).toContain("No MCP tools are available.");
  });

  it("names servers whose tools are not known yet, and shows server descriptions", () => {
    const description = buildToolSearchDescription({
      tools: [tool("known", "echo", "Echo")],
      servers: [{ name: "known", description: "A server that echoes" }, { name: "later", toolsKnown: false }, { name: "all-direct" }],
    });
    expect(description).toContain("\nknown (A server that echoes)");
    expect(description).toContain("\nlater: tools not known yet");
    expect(description).not.toContain("all-direct");
  });

  it("keeps descriptions to their first line, cut at a word", () => {
    const long = `${"word ".repeat(40)}\nsecond line`;
    const description = buildToolSearchDescription({ tools: [tool("srv", "long", long)] });
    const line = description.split("\n").find((text) => text.startsWith("  long: "))!;
    expect(line.length).toBeLessThanOrEqual("  long: ".length + 80);
    expect(line.endsWith("word…")).toBe(true);
    expect(description).not.toContain("second line");
  });

  it("lists full names when the tools of a server do not share its prefix", () => {
    const description = buildToolSearchDescription({
      tools: [tool("srv", "alpha", "A", "alpha"), tool("srv", "beta", "B", "srv__beta")],
    });
    expect(description).toContain("  alpha: A");
    expect(description).toContain("  srv__beta: B");
  });
});

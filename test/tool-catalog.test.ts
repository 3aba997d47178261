import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { beforeAll, describe, expect, it } from "vitest";
import { buildToolSearchDescription, CATALOG_TOKEN_BUDGET } from "../search/catalog.ts";
import { TOOLS_PER_SEARCH } from "../search/slots.ts";
import type { ToolMetadata } from "../types.ts";
import { loadCorpusTools, replicateCorpus } from "./fixtures/search-eval/corpus-tools.ts";

const tokens = (text: string) => encode(text).length;

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
    expect(tokens(description)).toBeLessThanOrEqual(CATALOG_TOKEN_BUDGET);
    for (const server of new Set(tools.map((tool) => tool.serverName))) expect(description).toContain(`- ${server}`);
    expect(description).toContain(`${tools.length} tools on ${count} server`);
  });

  it("stays within budget for each corpus server alone, the 201-tool one included", () => {
    for (const server of serverNames) {
      const description = buildToolSearchDescription({ tools: corpus.filter((tool) => tool.serverName === server) });
      expect(tokens(description)).toBeLessThanOrEqual(CATALOG_TOKEN_BUDGET);
      expect(description).toContain(`- ${server}`);
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
    expect(tokens(description)).toBeLessThanOrEqual(CATALOG_TOKEN_BUDGET);
    for (const server of serverNames) expect(description).toContain(`- ${server}`);
  });

  it("stays within budget at 10k tools on hundreds of servers, counting those it cannot name", () => {
    const tools = replicateCorpus(10_000);
    const servers = new Set(tools.map((tool) => tool.serverName));
    const description = buildToolSearchDescription({ tools });
    expect(tokens(description)).toBeLessThanOrEqual(CATALOG_TOKEN_BUDGET);
    const named = [...servers].filter((server) => description.includes(`- ${server}:`)).length;
    expect(description).toContain(`- … and ${servers.size - named} more servers`);
  });

  it("shows a small catalog whole: every tool name with a one-line description", () => {
    const tools = firstServers(1);
    const description = buildToolSearchDescription({ tools });
    expect(description).toContain("(everything__…):");
    for (const tool of tools) expect(description).toContain(`  ${tool.originalName}: ${tool.description.slice(0, 20)}`);
  });

  it("summarises big servers by their characteristic words when all 45 do not fit whole", () => {
    const description = buildToolSearchDescription({ tools: corpus });
    expect(description).toMatch(/- jira-cloud: 91 tools, e\.g\. .*sprint/);
    expect(description).toMatch(/- google-maps[^\n]*geocode/);
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
  const tool = (
    serverName: string,
    originalName: string,
    description: string,
    name = `${serverName}__${originalName}`,
  ): ToolMetadata => ({
    name,
    serverName,
    originalName,
    description,
    inputSchema: { type: "object" },
  });

  it("tells the model how to search and how many tools a call loads", () => {
    const description = buildToolSearchDescription({ tools: [tool("srv", "echo", "Echo")] });
    expect(description).toContain("select:name1,name2");
    expect(description).toContain(`up to ${TOOLS_PER_SEARCH} tools`);
    expect(description).toContain("not active yet");
  });

  it("says when there is nothing to find", () => {
    expect(buildToolSearchDescription({ tools: [] })).toContain("No MCP tools are available.");
  });

  it("names servers whose tools are not known yet, and shows server descriptions", () => {
    const description = buildToolSearchDescription({
      tools: [tool("known", "echo", "Echo")],
      servers: [
        { name: "known", description: "A server that echoes" },
        { name: "later", toolsKnown: false },
        { name: "all-direct" },
      ],
    });
    expect(description).toContain("- known (A server that echoes)");
    expect(description).toContain("- later: tools not known yet");
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

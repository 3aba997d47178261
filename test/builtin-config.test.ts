/**
 * Pi 1.x's built-in MCP fields (its docs/mcp.md) mean the same here: configs are written as that page shows them
 * (its JSON examples, copied), then read, resolved and used by the parts that apply them.
 */
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createConfigSandbox, serversByName, type ConfigSandbox } from "./config-sandbox.ts";
import { configuredExposure } from "../tools/exposure.ts";
import { buildToolMetadata } from "../tool-metadata.ts";
import { selectDirectTools, wantsDirectTools } from "../direct-tools.ts";
import { callLimits, requestLimitLine, timeoutMessage } from "../calls/limits.ts";
import { withCommandValues } from "../connection/command-values.ts";
import { buildSearchIndex } from "../search/tool-index.ts";
import { currentToolSearchDescription } from "../tool-search.ts";
import { buildToolView } from "../tool-view.ts";
import type { ServerDefinition, ToolMetadata } from "../types.ts";
import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { buildToolSearchDescription, CATALOG_TOKEN_BUDGET } from "../search/catalog.ts";
import { loadCorpusTools } from "./fixtures/search-eval/corpus-tools.ts";

let sandbox: ConfigSandbox;
beforeEach(() => {
  sandbox = createConfigSandbox();
});
afterEach(() => sandbox.remove());

const userFile = () => path.join(sandbox.agentDir, "mcp.json");
const writeUser = (config: unknown) => sandbox.write("home/.pi/agent/mcp.json", config);
const writeProject = (config: unknown) => sandbox.write("project/.pi/mcp.json", config);

// docs/mcp.md, "Control tool exposure"
const GITHUB_EXAMPLE = {
  mcpServers: {
    github: {
      url: "https://api.githubcopilot.com/mcp/",
      exposure: "deferred",
      toolExposure: {
        search_code: "direct",
        "get_*": "codemode",
        "delete_*": "hidden",
      },
    },
  },
};

// docs/mcp.md, "Configure servers"
const FORMAT_EXAMPLE = {
  mcpServers: {
    filesystem: {
      command: "npx",
      args: ["-y", "@modelcontextprotocol/server-filesystem", "."],
    },
    docs: {
      url: "https://example.com/mcp",
      headers: { Authorization: "Bearer ${DOCS_TOKEN}" },
      description: "Search and read the product documentation",
    },
  },
};

function server(config: ReturnType<ConfigSandbox["load"]>, name: string): ServerDefinition {
  const found = config.servers.find((candidate) => candidate.name === name);
  if (!found) throw new Error(`no server ${name}: ${JSON.stringify(config.problems)}`);
  return found;
}

const mcpTool = (name: string, description = `${name} tool`) => ({ name, description, inputSchema: { type: "object" } });

describe("the built-in's fields are read, not reported as unknown", () => {
  it("reads exposure and toolExposure as the docs write them", () => {
    writeUser(GITHUB_EXAMPLE);
    const config = sandbox.load();
    expect(config.problems).toEqual([]);
    expect(serversByName(config).github).toMatchObject({
      exposure: "deferred",
      toolExposure: { search_code: "direct", "get_*": "codemode", "delete_*": "hidden" },
    });
  });

  it("reads description and timeout; the docs' format example loads without a problem", () => {
    writeUser({ ...FORMAT_EXAMPLE, mcpServers: { ...FORMAT_EXAMPLE.mcpServers, slow: { command: "node", timeout: 1 } } });
    const config = sandbox.load({ env: { DOCS_TOKEN: "t" } });
    expect(config.problems).toEqual([]);
    expect(server(config, "docs").description).toBe("Search and read the product documentation");
    expect(server(config, "slow").timeout).toBe(1);
  });

  it("resolves cwd against the session's directory and expands a leading ~/", () => {
    writeUser({ mcpServers: { rel: { command: "x", cwd: "tools" }, home: { command: "x", cwd: "~/servers" } } });
    const config = sandbox.load();
    expect(server(config, "rel").cwd).toBe(path.join(sandbox.project, "tools"));
    expect(server(config, "home").cwd).toBe(path.join(sandbox.home, "servers"));
  });

  it("reads codemode-deferred as codemode, and refuses an exposure it does not know (a typo must not show a hidden tool)", () => {
    writeUser({
      mcpServers: { old: { command: "x", exposure: "codemode-deferred" }, typo: { command: "x", toolExposure: { "delete_*": "hiden" } } },
    });
    const config = sandbox.load();
    expect(server(config, "old").exposure).toBe("codemode");
    expect(config.servers.map((s) => s.name)).toEqual(["old"]);
    expect(config.problems).toEqual([
      {
        level: "error",
        file: userFile(),
        server: "typo",
        field: "toolExposure.delete_*",
        message: expect.stringContaining(`(got "hiden")`),
      },
    ]);
  });

  it("lets a project entry without command or url override enabled, exposure and toolExposure of the user's server", () => {
    writeUser(GITHUB_EXAMPLE);
    writeProject({ mcpServers: { github: { exposure: "hidden", toolExposure: { search_code: "direct" } } } });
    const github = server(sandbox.load(), "github");
    expect(github).toMatchObject({
      url: "https://api.githubcopilot.com/mcp/",
      exposure: "hidden",
      toolExposure: { search_code: "direct" },
    });
    expect(github.source.kind).toBe("user");
  });

  it("reads the docs' oauth examples: callbackPort is our redirectPort; clientName and clientRegistration are kept", () => {
    writeUser({
      mcpServers: {
        example: {
          url: "https://mcp.example.com/mcp",
          oauth: { clientId: "my-client", clientSecret: "${EXAMPLE_SECRET}", callbackPort: 8765 },
        },
        figma: { url: "https://mcp.figma.com/mcp", oauth: { clientName: "Claude Code" } },
        dcr: { url: "https://mcp.example.com/mcp", oauth: { clientRegistration: "dcr" } },
        loopback: { url: "https://mcp.example.com/mcp", oauth: { callbackUrl: "http://127.0.0.1:9000/callback" } },
      },
    });
    const config = sandbox.load({ env: { EXAMPLE_SECRET: "s" } });
    expect(config.problems).toEqual([]);
    expect(server(config, "example").oauth).toEqual({ clientId: "my-client", clientSecret: "s", redirectPort: 8765 });
    expect(server(config, "figma").oauth).toEqual({ clientName: "Claude Code" });
    expect(server(config, "dcr").oauth).toEqual({ clientRegistration: "dcr" });
    expect(server(config, "loopback").oauth).toEqual({ redirectPort: 9000 });
  });

  it("reads authServerMetadataUrl (HTTPS, or http on loopback); a plain http one elsewhere is an error naming it", () => {
    writeUser({
      mcpServers: {
        okta: {
          url: "https://mcp.example.com/mcp",
          oauth: { authServerMetadataUrl: "https://example.okta.com/.well-known/openid-configuration" },
        },
        local: {
          url: "http://127.0.0.1:3000/mcp",
          oauth: { authServerMetadataUrl: "http://localhost:8080/.well-known/openid-configuration" },
        },
        plain: { url: "https://mcp.example.com/mcp", oauth: { authServerMetadataUrl: "http://auth.example.com/metadata" } },
      },
    });
    const config = sandbox.load();
    expect(server(config, "okta").oauth).toEqual({ authServerMetadataUrl: "https://example.okta.com/.well-known/openid-configuration" });
    expect(server(config, "local").oauth).toEqual({ authServerMetadataUrl: "http://localhost:8080/.well-known/openid-configuration" });
    expect(config.problems.map((problem) => `${problem.level} ${problem.message}`)).toEqual([
      `error ${userFile()}: server "plain": "oauth.authServerMetadataUrl": must be an https:// URL (http:// only on localhost, 127.0.0.1 or [::1])`,
    ]);
  });

  it("says which oauth fields it cannot honour, naming them, and refuses ports that disagree", () => {
    writeUser({
      mcpServers: {
        cimd: { url: "https://mcp.example.com/mcp", oauth: { clientRegistration: "cimd" } },
        path: { url: "https://mcp.example.com/mcp", oauth: { callbackUrl: "http://localhost:9000/oauth/done" } },
        ports: { url: "https://mcp.example.com/mcp", oauth: { callbackPort: 8765, callbackUrl: "http://127.0.0.1:9000/callback" } },
      },
    });
    const config = sandbox.load();
    const at = (name: string) =>
      config.problems.filter((problem) => problem.server === name).map(({ level, field }) => `${level} ${field}`);
    expect(at("cimd")).toEqual(["warning oauth.clientRegistration"]);
    expect(at("path")).toEqual(["warning oauth.callbackUrl"]);
    expect(at("ports")).toEqual(["error oauth.callbackPort"]);
    expect(config.servers.map((s) => s.name)).toEqual(["cimd", "path"]);
  });
});

describe("exposure: one resolver, applied by the filters and direct tools", () => {
  const rules = GITHUB_EXAMPLE.mcpServers.github as Pick<ServerDefinition, "exposure" | "toolExposure">;

  it("exact names win over patterns, the first matching pattern wins, else the server's exposure", () => {
    expect(configuredExposure(rules, "search_code")).toBe("direct");
    expect(configuredExposure(rules, "get_issue")).toBe("codemode");
    expect(configuredExposure(rules, "delete_repo")).toBe("hidden");
    expect(configuredExposure(rules, "list_issues")).toBe("deferred");
    expect(configuredExposure({ toolExposure: { "*": "hidden", "get_*": "direct", get_me: "codemode" } }, "get_me")).toBe("codemode");
    expect(configuredExposure({ toolExposure: { "*": "hidden", "get_*": "direct" } }, "get_issue")).toBe("hidden");
    expect(configuredExposure({}, "anything")).toBeUndefined();
  });

  it("hidden tools are never built (not registered, found or callable); direct ones are direct, deferred ones are not", () => {
    const definition: ServerDefinition = {
      name: "github",
      url: "https://x",
      source: { kind: "user", path: "f" },
      ...rules,
      directTools: true,
    };
    const tools = ["search_code", "get_issue", "delete_repo", "list_issues"].map((name) => mcpTool(name));
    const index = buildToolMetadata([{ definition, tools, resources: [{ uri: "gh://secret", name: "secret" }] }]);
    expect([...index.byName.keys()].sort()).toEqual([
      "github__get_issue",
      "github__get_secret",
      "github__list_issues",
      "github__search_code",
    ]);
    const direct = selectDirectTools(index.byName.values(), {
      servers: new Map([["github", definition]]),
      settings: {},
      override: undefined,
    });
    // `exposure` decides over `directTools: true` for the tools it names: here every one.
    expect(direct.map((tool) => tool.originalName)).toEqual(["search_code"]);
    const hiddenServer = { ...definition, exposure: "hidden" as const, toolExposure: { search_code: "direct" as const } };
    const onlyOne = buildToolMetadata([{ definition: hiddenServer, tools, resources: [{ uri: "gh://secret", name: "secret" }] }]);
    expect([...onlyOne.byName.keys()]).toEqual(["github__search_code"]);
    expect(
      wantsDirectTools(
        { ...definition, directTools: undefined, exposure: undefined, toolExposure: { x: "direct" } },
        { servers: new Map(), settings: {}, override: undefined },
      ),
    ).toBe(true);
  });
});

describe("timeout", () => {
  it("is the request limit in seconds unless requestTimeoutMs is set, which wins; status and the timeout message name it", () => {
    expect(callLimits({ timeout: 1 }, { requestTimeoutMs: 5000 })).toMatchObject({
      requestTimeoutMs: 1000,
      requestTimeoutSource: "timeout",
    });
    expect(callLimits({ timeout: 1, requestTimeoutMs: 250 }, {})).toMatchObject({
      requestTimeoutMs: 250,
      requestTimeoutSource: "requestTimeoutMs",
    });
    expect(requestLimitLine({ timeout: 1 }, {})).toBe("time limit: 1 s per request without an answer or progress (timeout)");
    expect(requestLimitLine({ timeout: 1, requestTimeoutMs: 250 }, {})).toContain(`(requestTimeoutMs) ("timeout" 1 s is not used)`);
    expect(requestLimitLine({}, {})).toBeUndefined();
    const message = timeoutMessage(`MCP tool "wait"`, "slow", callLimits({ timeout: 1 }, {}), { timeout: 1000 });
    expect(message).toContain(`(the timeout limit)`);
    expect(message).toContain(`mcpServers.slow.timeout, in seconds`);
  });
});

describe("description", () => {
  const docsTools: ToolMetadata[] = [
    { name: "docs__fetch_page", serverName: "docs", originalName: "fetch_page", description: "Fetches a page", inputSchema: {} },
    { name: "wiki__fetch_page", serverName: "wiki", originalName: "fetch_page", description: "Fetches a page", inputSchema: {} },
  ];

  it("is a search field of the server's tools", () => {
    const plain = buildSearchIndex(docsTools);
    expect(plain.search("household pantry")).toEqual([]);
    const described = buildSearchIndex(docsTools, new Map([["docs", "Keeps the household pantry"]]));
    expect(described.search("household pantry").map((hit) => hit.tool.name)).toEqual(["docs__fetch_page"]);
  });

  it("described, 45 servers still fit the catalog's budget, every one named, whatever the order they come in", () => {
    const tools = loadCorpusTools();
    const names = [...new Set(tools.map((tool) => tool.serverName))];
    const servers = names.map((name) => ({ name, description: `Everything the ${name} service offers to its users, in one sentence` }));
    const catalog = buildToolSearchDescription({ tools, servers });
    expect(encode(catalog).length).toBeLessThanOrEqual(CATALOG_TOKEN_BUDGET);
    for (const name of names) expect(catalog).toMatch(new RegExp(`^${name}\\b`, "m"));
    expect(catalog).toContain(`\n${names[0]} (Everything the`);
    expect(buildToolSearchDescription({ tools: [...tools].reverse(), servers: [...servers].reverse() })).toBe(catalog);
  });

  it("is the server's line in ToolSearch's catalog", () => {
    writeUser(FORMAT_EXAMPLE);
    const config = sandbox.load({ env: { DOCS_TOKEN: "t" } });
    const catalog = currentToolSearchDescription(buildToolView(config, { path: "", servers: new Map(), problems: [] }));
    expect(catalog).toContain("\ndocs (Search and read the product documentation): tools not known yet\n");
  });
});

describe("!command values", () => {
  const commandServer = { command: "node", env: { TOKEN: "!echo ${HOME_TOKEN}", PLAIN: "!!bang" } };

  it("are kept for the server's start in the user's file (not substituted: the shell reads its variables); !! is a literal !", () => {
    writeUser({ mcpServers: { own: commandServer } });
    const config = sandbox.load();
    expect(config.problems).toEqual([]);
    expect(server(config, "own")).toMatchObject({ env: { TOKEN: "!echo ${HOME_TOKEN}", PLAIN: "!bang" }, commandValues: ["env.TOKEN"] });
  });

  it("an oauth.clientSecret !command is kept for when the secret is needed, not substituted (the sign-in tests run it)", () => {
    writeUser({
      mcpServers: { remote: { url: "https://x.example/mcp", oauth: { clientId: "c", clientSecret: "!op read op://v/${ITEM}" } } },
    });
    const config = sandbox.load();
    expect(config.problems).toEqual([]);
    expect(server(config, "remote")).toMatchObject({
      oauth: { clientId: "c", clientSecret: "!op read op://v/${ITEM}" },
      commandValues: ["oauth.clientSecret"],
    });
  });

  it("do not run from an untrusted project's file: its server waits for trust, only noted", () => {
    writeProject({ mcpServers: { repo: { url: "https://x.example/mcp", headers: { Authorization: "!gh auth token" } } } });
    const untrusted = sandbox.load({ projectTrusted: false });
    expect(untrusted.servers).toEqual([]);
    expect(untrusted.project?.servers).toEqual(["repo"]);
    expect(untrusted.problems).toEqual([]);
    expect(server(sandbox.load({ projectTrusted: true }), "repo").commandValues).toEqual(["headers.Authorization"]);
  });

  it("never run from another tool's file", () => {
    sandbox.write("home/.claude.json", { mcpServers: { imported: { command: "x", env: { TOKEN: "!cat /etc/passwd" } } } });
    writeUser({ imports: ["claude-code"] });
    const imported = server(sandbox.load(), "imported");
    expect(imported.env).toEqual({ TOKEN: "!cat /etc/passwd" });
    expect(imported.commandValues).toBeUndefined();
  });

  const definition = (env: Record<string, string>): ServerDefinition => ({
    name: "own",
    command: "node",
    env,
    commandValues: Object.keys(env).map((key) => `env.${key}`),
    source: { kind: "user", path: "f" },
  });

  it("run when the server starts: the value is the command's output, trimmed", async () => {
    const resolved = await withCommandValues(definition({ TOKEN: "!printf '  Bearer %s \\n' abc" }), new AbortController().signal);
    expect(resolved.env).toEqual({ TOKEN: "Bearer abc" });
  });

  it("a failing, silent or slow command names the server and the field, never its output", async () => {
    const signal = new AbortController().signal;
    await expect(withCommandValues(definition({ TOKEN: "!echo hunter2; exit 3" }), signal)).rejects.toThrow(
      `MCP server "own": "env.TOKEN": the "!" command exited with code 3; its output is not shown`,
    );
    await expect(withCommandValues(definition({ TOKEN: "!echo hunter2; exit 3" }), signal)).rejects.not.toThrow(/hunter2/);
    await expect(withCommandValues(definition({ TOKEN: "!true" }), signal)).rejects.toThrow("printed nothing");
    await expect(withCommandValues(definition({ TOKEN: "!echo hunter2; sleep 5" }), signal, 300)).rejects.toThrow(
      "did not finish within 0.3 s",
    );
  });
});

/**
 * Configs written for pi-mcp-adapter 2.x (upstream), which reads the same files: its fields and values keep their
 * documented meaning here, what we lack costs a warning and never a server, and its shared `~/.config/mcp/mcp.json`
 * is read below our own files.
 */
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildToolMetadata, type ServerInventory } from "../tool-metadata.ts";
import type { McpResource, McpTool, ServerDefinition } from "../types.ts";
import { createConfigSandbox, serversByName, sourcesByName, type ConfigSandbox } from "./config-sandbox.ts";

let sandbox: ConfigSandbox;
beforeEach(() => {
  sandbox = createConfigSandbox();
});
afterEach(() => sandbox.remove());

const problemLines = (config: { problems: Array<{ level: string; message: string }> }) =>
  config.problems.map(({ level, message }) => `${level} ${message}`);

describe("upstream 2.x configs", () => {
  it("loads every server of upstream's README examples, with a warning naming each field we do not support", () => {
    const file = sandbox.place("upstream/mcp.json", "home/.pi/agent/mcp.json");
    const config = sandbox.load();
    expect(serversByName(config)).toEqual({
      "my-server": {
        enabled: true,
        command: "npx",
        args: ["-y", "some-mcp-server"],
        lifecycle: "lazy",
        idleTimeout: 10,
        requestTimeoutMs: 30000,
      },
      "chrome-devtools": {
        enabled: true,
        command: "npx",
        args: ["-y", "chrome-devtools-mcp@1.6.0"],
        directTools: true,
        lifecycle: "lazy-keep-alive",
      },
      github: {
        enabled: true,
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-github"],
        directTools: false,
        approveTools: ["delete_*", "merge_pull_request"],
        toolPrefix: "mcp",
      },
      docs: { enabled: true, url: "https://docs.example.com/mcp", approveTools: false },
      dokploy: { enabled: true, url: "http://localhost:3845/mcp", directTools: true, includeTools: ["get_*", "dokploy_list_apps"] },
      figma: {
        enabled: true,
        url: "http://localhost:3845/mcp",
        directTools: true,
        excludeTools: ["read_figjam", "figma_get_code_connect_map"],
      },
    });
    expect(config.settings).toEqual({
      toolPrefix: "server",
      idleTimeout: 10,
      requestTimeoutMs: 30000,
      outputGuard: { maxBytes: 51200, maxLines: 2000 },
      approveTools: ["github_delete_*", "notion_update_*"],
    });
    const unsupportedSettings = [
      "showStatusIcon",
      "mcpFooterStatus",
      "toolResultRendering",
      "collapsedResultLines",
      "notifyOnStartupConnect",
    ];
    expect(problemLines(config)).toEqual([
      `warning ${file}: server "figma": "searchKeywords": unknown field, ignored`,
      `warning ${file}: server "figma": "trace": unknown field, ignored`,
      ...[...unsupportedSettings, "warnOnLargeDirectTools", "hostConfigDiscovery", "oauthDir", "trace"].map(
        (key) => `warning ${file}: "settings.${key}": unknown setting, ignored`,
      ),
    ]);
  });

  it("falls back to a default, with a warning, for a value it does not know, and asks for approval when approveTools is unreadable", () => {
    const file = sandbox.write("home/.pi/agent/mcp.json", {
      mcpServers: {
        a: { command: "x", lifecycle: "sometimes", idleTimeout: -1, directTools: "all", toolPrefix: "long", debug: "yes" },
        b: { command: "x", approveTools: "delete_*" },
      },
      settings: { approveTools: { delete: true }, directTools: "search" },
    });
    const config = sandbox.load();
    expect(serversByName(config)).toEqual({ a: { enabled: true, command: "x" }, b: { enabled: true, command: "x", approveTools: true } });
    expect(config.settings).toEqual({ approveTools: true, directTools: false });
    expect(problemLines(config)).toEqual([
      `warning ${file}: server "a": "lifecycle": must be one of "lazy", "eager", "keep-alive", "lazy-keep-alive" (got "sometimes"); using "lazy"`,
      `warning ${file}: server "a": "idleTimeout": must be a number ≥ 0 (got the number -1); using the default`,
      `warning ${file}: server "a": "directTools": must be true, false, "search" or an array of strings (got "all"); ignored (tools are found through ToolSearch)`,
      `warning ${file}: server "a": "toolPrefix": must be one of "server", "short", "none", "mcp" (got "long"); ignored (settings.toolPrefix applies)`,
      `warning ${file}: server "a": "debug": must be true or false (got a string); ignored`,
      `warning ${file}: server "b": "approveTools": must be true, false or an array of tool names or patterns (got "delete_*"); every tool of this server asks before it runs`,
      `warning ${file}: "settings.approveTools": must be true, false or an array of tool names or patterns (got an object); every MCP tool asks before it runs`,
    ]);
  });

  it("runs env and headers !commands at the server's start (!! is a literal !); warns of a bearerToken !command, never run here", () => {
    const file = sandbox.write("home/.pi/agent/mcp.json", {
      mcpServers: {
        local: { command: "x", env: { TOKEN: "!op read op://vault/token", PLAIN: "value" } },
        remote: { url: "https://example.com/mcp", headers: { "X-Key": "!!literal" }, bearerToken: "!pass show api" },
      },
    });
    const config = sandbox.load();
    expect(Object.keys(serversByName(config))).toEqual(["local", "remote"]);
    expect(serversByName(config).local).toMatchObject({
      env: { TOKEN: "!op read op://vault/token", PLAIN: "value" },
      commandValues: ["env.TOKEN"],
    });
    expect(serversByName(config).remote).toMatchObject({ headers: { "X-Key": "!literal" } });
    const why = `begins with "!", which pi-mcp-adapter 2.x runs as a command for the secret; this adapter runs only the env, headers and oauth secret values of your own files (and a trusted project's) and passes this one as written (put the secret in an environment variable and use \${VAR})`;
    expect(problemLines(config)).toEqual([`warning ${file}: server "remote": "bearerToken": ${why}`]);
  });

  it("skips an rmcp-mux socket server with one error saying sockets are not supported; the others load", () => {
    const file = sandbox.write("home/.pi/agent/mcp.json", {
      mcpServers: { memory: { socket: "~/.rmcp-servers/rmcp-mux/sockets/memory.sock" }, local: { command: "x" } },
    });
    const config = sandbox.load();
    expect(Object.keys(serversByName(config))).toEqual(["local"]);
    expect(problemLines(config)).toEqual([
      `error ${file}: server "memory": "socket": an rmcp-mux socket (pi-mcp-adapter 2.x) is not supported here: give the server a "command" or a "url"`,
    ]);
  });

  it("reads requestTimeoutMs, maxTotalTimeoutMs and outputGuard per server and in settings: <= 0 is the default, a bad value a warning", () => {
    const file = sandbox.write("home/.pi/agent/mcp.json", {
      mcpServers: {
        a: { command: "x", requestTimeoutMs: 0, maxTotalTimeoutMs: -5, outputGuard: false },
        b: { command: "x", requestTimeoutMs: "soon", outputGuard: { maxBytes: 1.5 } },
      },
      settings: { requestTimeoutMs: 1500, maxTotalTimeoutMs: 0, outputGuard: "big" },
    });
    const config = sandbox.load();
    expect(serversByName(config)).toEqual({ a: { enabled: true, command: "x", outputGuard: false }, b: { enabled: true, command: "x" } });
    expect(config.settings).toEqual({ requestTimeoutMs: 1500 });
    expect(problemLines(config)).toEqual([
      `warning ${file}: server "b": "requestTimeoutMs": must be a number of milliseconds (got a string); settings.requestTimeoutMs applies`,
      `warning ${file}: server "b": "outputGuard.maxBytes": must be a whole number > 0 (got the number 1.5); settings.outputGuard applies`,
      `warning ${file}: "settings.outputGuard": must be true, false or { "maxBytes", "maxLines" } (got a string); ignored (the default applies)`,
    ]);
  });

  it("lets a project file override includeTools, approveTools and lifecycle alone", () => {
    sandbox.write("home/.pi/agent/mcp.json", { mcpServers: { fx: { command: "fx" } } });
    sandbox.write("project/.pi/mcp.json", {
      mcpServers: { fx: { lifecycle: "lazy-keep-alive", includeTools: ["ec*"], approveTools: ["delete_*"] } },
    });
    const config = sandbox.load();
    expect(config.problems).toEqual([]);
    expect(serversByName(config)).toEqual({
      fx: { enabled: true, command: "fx", lifecycle: "lazy-keep-alive", includeTools: ["ec*"], approveTools: ["delete_*"] },
    });
  });
});

describe("~/.config/mcp/mcp.json", () => {
  const sharedFile = () => path.join(sandbox.home, ".config", "mcp", "mcp.json");

  it("is read below the user file and above imports; its settings are the lowest", () => {
    sandbox.write("home/.config/mcp/mcp.json", {
      mcpServers: { shared: { command: "shared" }, both: { command: "from-shared" }, cursorToo: { command: "shared-cursor" } },
      settings: { idleTimeout: 1, toolPrefix: "short" },
    });
    sandbox.write("home/.pi/agent/mcp.json", {
      mcpServers: { both: { command: "from-user" } },
      settings: { idleTimeout: 2 },
      imports: ["cursor"],
    });
    sandbox.write("home/.cursor/mcp.json", { mcpServers: { cursorToo: { command: "cursor" }, cursorOnly: { command: "cursor-only" } } });
    const config = sandbox.load();
    expect(config.problems).toEqual([]);
    const user = path.join(sandbox.agentDir, "mcp.json");
    const cursor = path.join(sandbox.home, ".cursor", "mcp.json");
    expect(sourcesByName(config)).toEqual({
      both: `user:${user}`,
      shared: `user-shared:${sharedFile()}`,
      cursorToo: `user-shared:${sharedFile()}`,
      cursorOnly: `cursor:${cursor}`,
    });
    expect(config.servers.find((server) => server.name === "both")?.command).toBe("from-user");
    expect(config.settings).toEqual({ idleTimeout: 2, toolPrefix: "short" });
  });

  it("is read once when --mcp-config names it", () => {
    sandbox.write("home/.config/mcp/mcp.json", { mcpServers: { shared: { command: "shared" } } });
    const config = sandbox.load({ configPath: "~/.config/mcp/mcp.json" });
    expect(sourcesByName(config)).toEqual({ shared: `user:${sharedFile()}` });
  });
});

describe("includeTools / excludeTools / toolPrefix over tools", () => {
  const tool = (name: string): McpTool => ({ name, description: name, inputSchema: { type: "object", properties: {} } });
  const figjam: McpResource = { uri: "figma://figjam", name: "figjam" };
  const inventory = (name: string, extra: Partial<ServerDefinition>, tools: string[], resources: McpResource[] = []): ServerInventory => ({
    definition: { name, url: "http://localhost:3845/mcp", source: { kind: "user", path: "/u/mcp.json" }, ...extra },
    tools: tools.map(tool),
    resources,
  });
  const names = (inventories: ServerInventory[], toolPrefix?: "mcp") =>
    [...buildToolMetadata(inventories, { toolPrefix }).byName.keys()].sort();

  it("keeps only what includeTools matches: globs, MCP names, upstream's prefixed names and resource names", () => {
    const dokploy = inventory(
      "dokploy",
      { includeTools: ["get_*", "dokploy_list_apps"] },
      ["get_app", "get_logs", "list_apps", "list_users", "deploy"],
      [figjam],
    );
    expect(names([dokploy])).toEqual(["dokploy__get_app", "dokploy__get_figjam", "dokploy__get_logs", "dokploy__list_apps"]);
    const byUpstreamResourceName = inventory(
      "dokploy",
      { includeTools: ["read_figjam", "dokploy__deploy"] },
      ["deploy", "list_apps"],
      [figjam],
    );
    expect(names([byUpstreamResourceName])).toEqual(["dokploy__deploy", "dokploy__get_figjam"]);
  });

  it("applies excludeTools (globs too) after includeTools", () => {
    const figma = inventory(
      "figma",
      { excludeTools: ["read_figjam", "figma_get_code_connect_map"] },
      ["get_code", "get_code_connect_map"],
      [figjam],
    );
    expect(names([figma])).toEqual(["figma__get_code"]);
    const both = inventory("fx", { includeTools: ["ec*", "add"], excludeTools: ["*_all"] }, [
      "echo",
      "echo_all",
      "ecru",
      "add",
      "delete_item",
    ]);
    expect(names([both])).toEqual(["fx__add", "fx__echo", "fx__ecru"]);
    const single = inventory("fx", { includeTools: ["ech?"] }, ["echo", "echos", "Echo"]);
    expect(names([single])).toEqual(["fx__echo"]);
  });

  it('names tools mcp__<server>__<tool> under toolPrefix "mcp", in the settings or for one server', () => {
    expect(names([inventory("github", {}, ["create_issue"])], "mcp")).toEqual(["mcp__github__create_issue"]);
    const mixed = [inventory("github", { toolPrefix: "mcp" }, ["create_issue"]), inventory("fx", {}, ["echo"])];
    expect(names(mixed)).toEqual(["fx__echo", "mcp__github__create_issue"]);
  });
});

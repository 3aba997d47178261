/**
 * `/mcp status` and the footer's status line without Pi: a session view built by hand over a real server manager and
 * lifecycle (a fixture server that connects, one that dies at start), with config problems, cached and live tool
 * lists and call statistics. In the real Pi: status-print.e2e.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { join } from "node:path";
import { panelSummary, serverStatusReport, type StatusContext, statusReport, updateStatus } from "../commands/status-report.ts";
import { McpLifecycleManager } from "../lifecycle.ts";
import { createCacheEntry } from "../metadata-cache.ts";
import { McpServerManager } from "../server-manager.ts";
import { CallStats } from "../calls/stats.ts";
import { buildToolView, type ServerInventoryEntry } from "../tool-view.ts";
import type { ProtocolVerdict } from "../connection/session.ts";
import { SkillSession } from "../skills/session.ts";
import type { ConfigProblem, LoadedConfig, ServerDefinition, SkillEntry } from "../types.ts";
import { fixtureDef, killLeftovers, serverDef, STDIO_FIXTURE, tempDir } from "./server-manager-helpers.ts";
import { FixtureSkillServers } from "./helpers/skills-fixture.ts";

const HOUR_MS = 60 * 60_000;

let dir: ReturnType<typeof tempDir>;
let manager: McpServerManager;
let lifecycle: McpLifecycleManager;

beforeEach(() => {
  dir = tempDir();
  manager = new McpServerManager({ agentDir: dir.path });
  lifecycle = new McpLifecycleManager(manager);
});

afterEach(async () => {
  await manager.closeAll();
  killLeftovers(dir.path);
  dir.remove();
});

function inventory(
  definition: ServerDefinition,
  tools: string[],
  origin: ServerInventoryEntry["origin"],
  listedAt: number,
  protocol?: ProtocolVerdict,
): ServerInventoryEntry {
  const entry = createCacheEntry(
    definition,
    tools.map((name) => ({ name, description: `${name} it`, inputSchema: { type: "object" } })),
    [],
  );
  return { definition, ...entry, origin, listedAt, protocol };
}

const MODERN: ProtocolVerdict = {
  era: "modern",
  version: "2026-07-28",
  discover: { supportedVersions: ["2026-07-28"] } as any,
  checkedAt: 0,
};

function context(config: LoadedConfig, inventories: ServerInventoryEntry[], stats?: CallStats): StatusContext {
  lifecycle.registerServers(config.servers);
  const live = new Map(inventories.map((entry) => [entry.definition.name, entry]));
  const view = buildToolView(config, { path: join(dir.path, "cache.json"), servers: new Map(), problems: [] }, live);
  return { ...view, manager, lifecycle, stats, semantic: undefined };
}

const problem = (level: ConfigProblem["level"], message: string, server?: string): ConfigProblem => ({
  level,
  file: "/u/mcp.json",
  server,
  message,
});

describe("/mcp status", () => {
  it("lists each server with its state, target, source, problems, tools, calls and last error", async () => {
    const up = fixtureDef("up", {}, { lifecycle: "eager", source: { kind: "user", path: "/u/mcp.json" } });
    const down = fixtureDef("down", { FIXTURE_MODE: "exit-at-start" }, { source: { kind: "project", path: "/p/.pi/mcp.json" } });
    const off = serverDef("off", { command: "off-server", enabled: false });
    const muted = serverDef("muted", { command: "m", enabled: false, disabledIn: { kind: "project-shared", path: "/p/.mcp.json" } });
    const remote = serverDef("remote", { url: "https://example.com/mcp", bearerTokenEnv: "REMOTE_TOKEN" });
    const config: LoadedConfig = {
      servers: [up, down, off, muted, remote],
      settings: {},
      problems: [
        problem("warning", 'field "autoApprove" is not supported', "up"),
        problem("error", 'variable "${API_KEY}" is not set', "skipped"),
        problem("warning", "imports: no Cursor config found"),
        problem("error", "settings.toolPrefix must be a string"),
      ],
      userFile: "/u/mcp.json",
    };
    const stats = new CallStats(join(dir.path, "stats.json"), 60_000);
    stats.record("up", "echo", 10, true);
    stats.record("up", "echo", 30, false);
    const state = context(
      config,
      [inventory(up, ["echo", "wait"], "live", Date.now()), inventory(remote, ["fetch"], "cache", Date.now() - 2 * HOUR_MS, MODERN)],
      stats,
    );
    const connection = await lifecycle.ensureConnected("up");
    await lifecycle.ensureConnected("down").catch(() => {});

    // The pid and the backoff left vary from run to run.
    const report = statusReport(state)
      .replace(`pid ${connection.pid}`, "pid <pid>")
      .replace(/next attempt in \d+ s/, "next attempt in <n> s")
      .replace(/fixture server \d+ starting/, "fixture server <pid> starting");
    const command = `command: ${process.execPath} ${STDIO_FIXTURE}`;
    expect(report).toBe(
      [
        "MCP servers: 3 enabled, 2 disabled, 1 skipped",
        "✓ up: connected · eager · stdio · MCP 2025-11-25 · 2 tools · pid <pid>",
        `    ${command}`,
        "    source: /u/mcp.json (user)",
        '    warning: field "autoApprove" is not supported',
        "    tools/list entry #3 has no name; dropped",
        "    calls this session: 2 (1 failed), 20 ms on average",
        "✗ down: failed · lazy · stdio · tools not known yet",
        `    ${command} · env: FIXTURE_MODE`,
        "    source: /p/.pi/mcp.json (project)",
        '    last error: MCP server "down" failed to connect: the server process exited before it was ready (next attempt in <n> s)',
        // What it wrote to stderr before it exited stays in the status (the startup notice that showed it scrolls away).
        "      Last stderr lines:",
        "        fixture server <pid> starting",
        "        loading configuration",
        "        Error: API_KEY is not set",
        "            at main (server.js:10)",
        "- off: disabled · source: test (user)",
        // Disabled by an override: the file to edit is that one, not the definition's.
        "- muted: disabled in /p/.mcp.json (project-shared) · defined in test (user)",
        // What it spoke at its last connection, from the cache.
        "○ remote: not started · lazy · MCP 2026-07-28 last time · 1 tool (from the cache, listed 2 h ago)",
        "    url: https://example.com/mcp · token from $REMOTE_TOKEN",
        "    source: test (user)",
        "✗ skipped: skipped",
        '    error: variable "${API_KEY}" is not set',
        "Config errors:",
        "  settings.toolPrefix must be a string",
        "Config warnings:",
        "  imports: no Cursor config found",
      ].join("\n"),
    );
  });

  it("with no servers, offers the three ways in: import what was found, search the registry, add by hand (or says the errors stopped them)", () => {
    const empty: LoadedConfig = { servers: [], settings: {}, problems: [], userFile: "/u/mcp.json" };
    const found = [
      { kind: "claude-code" as const, servers: ["github", "memory"] },
      { kind: "cursor" as const, servers: ["docs"] },
    ];
    expect(statusReport(context(empty, []), found)).toBe(
      [
        "MCP: no servers configured. Three ways to add one:",
        "  1. Import what was found on this machine: /mcp import claude-code (servers: github, memory), /mcp import cursor (server: docs)",
        "  2. Search the MCP Registry (https://registry.modelcontextprotocol.io): /mcp search <words>, then /mcp add <registry name>",
        "  3. Add by command or URL: /mcp add <name> <command> [args…] or /mcp add <name> <url> (or edit /u/mcp.json)",
      ].join("\n"),
    );
    // Nothing found elsewhere, and a company's registry.
    const company = { ...empty, settings: { registry: { url: "https://mcp.example.com/registry" } } };
    expect(statusReport(context(company, [])).split("\n").slice(1, 3)).toEqual([
      "  1. Import from another tool: none of cursor, claude-code, claude-desktop, codex, windsurf, vscode configures a server here",
      "  2. Search the MCP registry at https://mcp.example.com/registry: /mcp search <words>, then /mcp add <registry name>",
    ]);
    const broken = { ...empty, problems: [problem("error", "/u/mcp.json: not valid JSON")] };
    expect(statusReport(context(broken, []))).toBe(
      [
        "MCP: no servers loaded (see the errors below). Your config file: /u/mcp.json",
        "Config errors:",
        "  /u/mcp.json: not valid JSON",
      ].join("\n"),
    );
  });
});

describe("/mcp status <server>: how it gets its token", () => {
  it("one line for each way, never a value; none for a server without auth", () => {
    const url = "https://mcp.example.com/mcp";
    const as = "https://login.example.com";
    const servers = [
      serverDef("env", { url, bearerTokenEnv: "ACME_TOKEN" }),
      serverDef("inline", { url, bearerToken: "sekrit-inline" }),
      serverDef("header", { url, headers: { Authorization: "Bearer sekrit-header" } }),
      serverDef("machine", {
        url,
        oauth: { grantType: "client_credentials", clientId: "c", clientSecret: "sekrit-cs", authorizationServer: as },
      }),
      serverDef("signed", { url, oauth: { grantType: "client_credentials", clientId: "c", privateKey: "sekrit-pem", dpop: true } }),
      serverDef("ci", { url, oauth: { workloadTokenFile: "/var/run/token", authorizationServer: as } }),
      serverDef("corp", {
        url,
        oauth: { identityProvider: { issuer: "https://idp.example.com", clientId: "i", idToken: "sekrit-id" }, authorizationServer: as },
      }),
      serverDef("sso", { url, oauth: { identityProvider: { issuer: "https://idp.example.com", clientId: "i" } } }),
      serverDef("login", { url, auth: "oauth" }),
      serverDef("open", { url }),
      serverDef("local", { command: "x", env: { API_KEY: "sekrit-env" } }),
    ];
    const state = context({ servers, settings: {}, problems: [], userFile: "/u/mcp.json" }, []);
    const authLine = (name: string) =>
      serverStatusReport(state, name)
        .split("\n")
        .find((line) => line.startsWith("    auth: "));
    expect(Object.fromEntries(servers.map(({ name }) => [name, authLine(name)]))).toEqual({
      env: '    auth: a bearer token from $ACME_TOKEN ("bearerTokenEnv")',
      inline: '    auth: the bearer token in its config ("bearerToken")',
      header: '    auth: the "Authorization" header in its config',
      machine: "    auth: OAuth client credentials (its client secret) at https://login.example.com/, no sign-in",
      signed: "    auth: OAuth client credentials (a JWT signed with its private key), no sign-in, bound to a DPoP key",
      ci: '    auth: workload identity: its own JWT ("oauth.workloadTokenFile") exchanged at https://login.example.com/, no sign-in',
      corp: "    auth: enterprise sign-in: the ID token in its config exchanged at the identity provider https://idp.example.com/ for a grant at https://login.example.com/",
      sso: "    auth: enterprise sign-in: your sign-in there (/mcp-auth sso) exchanged at the identity provider https://idp.example.com/ for a grant",
      login: "    auth: OAuth sign-in (/mcp-auth login)",
      open: undefined,
      local: undefined,
    });
    expect(servers.map(({ name }) => serverStatusReport(state, name)).join("\n")).not.toContain("sekrit");
    // The list of every server stays as it was.
    expect(statusReport(state)).not.toContain("auth: ");
  });
});

describe("/mcp status and the panel: skills", () => {
  it("list each server's offered skills and why others are not; a server with skills: false says they are off", async () => {
    const docs = serverDef("docs", { command: "docs", excludeSkills: ["old-*"] });
    const quiet = serverDef("quiet", { command: "quiet", skills: false });
    const config: LoadedConfig = { servers: [docs, quiet], settings: {}, problems: [], userFile: "/u/mcp.json" };
    const skill = (name: string): SkillEntry => ({
      uri: `skill://${name}/SKILL.md`,
      frontmatter: { name, description: `The ${name} skill.` },
      resources: [{ uri: `skill://${name}/SKILL.md`, digest: `sha256:${"0".repeat(64)}`, size: 1 }],
    });
    const entries = new Map([
      ["docs", [skill("pdf-tools"), skill("old-notes"), skill("release-notes")]],
      ["quiet", [skill("secret")]],
    ]);
    const servers = new FixtureSkillServers([], {});
    const skills = new SkillSession({
      agentDir: dir.path,
      servers,
      listings: () => config.servers.map((server) => ({ server, entries: entries.get(server.name) ?? [] })),
      notify: () => {},
    });
    await skills.discover();
    const state = { ...context(config, []), skills };
    expect(
      statusReport(state)
        .split("\n")
        .filter((line) => line.includes("skill")),
    ).toEqual([
      "    skills: pdf-tools, release-notes",
      "    skill old-notes not offered: left out by includeSkills / excludeSkills",
      "    skills: off (skills: false), 1 listed",
    ]);
    expect(panelSummary(state, docs)).toBe("not started · tools not known yet · 2 skills");
    expect(panelSummary(state, quiet)).toBe("not started · tools not known yet");
  });
});

describe("the footer's status line", () => {
  it("counts the servers up, the tools and the servers failing; nothing without an enabled server", async () => {
    const up = fixtureDef("up", {});
    const down = fixtureDef("down", { FIXTURE_MODE: "exit-at-start" });
    const config: LoadedConfig = {
      servers: [up, down, serverDef("off", { command: "x", enabled: false })],
      settings: {},
      problems: [],
      userFile: "/u/mcp.json",
    };
    const shown: (string | undefined)[] = [];
    const ui = { setStatus: (text: string | undefined) => void shown.push(text) };
    const state = { ...context(config, [inventory(up, ["echo", "wait", "crash"], "cache", 0)]), ui };
    updateStatus(state);
    await lifecycle.ensureConnected("up");
    await lifecycle.ensureConnected("down").catch(() => {});
    updateStatus(state);
    updateStatus({ ...state, servers: new Map([["off", config.servers[2]!]]) });
    expect(shown).toEqual(["MCP 0/2 up · 3 tools", "MCP 1/2 up · 3 tools · 1 failing", undefined]);
  });
});

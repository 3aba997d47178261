/**
 * Servers from where a user gets them besides their own files, with upstream 2.x's meaning: Pi packages that declare
 * `pi.mcp` (named `<package>__<server>`, only packages Pi's settings list, below every file of ours, a project's only
 * once trusted), Claude Code plugin folders in `claudePlugins` (names as written, the first plugin wins, below our
 * files, `${CLAUDE_PLUGIN_ROOT}`, skills; nothing read outside the folder), and servers other extensions register
 * for the session through upstream's event (refused on a name the config has; gone when disposed).
 */
import { copyFileSync, mkdirSync, symlinkSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RuntimeRegistrations, type RuntimeServer } from "../config.ts";
import type { InterpolationContext } from "../config/interpolation.ts";
import { REPO_ROOT } from "./helpers/hosts.ts";
import { type ConfigSandbox, createConfigSandbox, serversByName } from "./config-sandbox.ts";

let sandbox: ConfigSandbox;
beforeEach(() => {
  sandbox = createConfigSandbox();
});
afterEach(() => sandbox.remove());

const messages = (config: { problems: Array<{ message: string }> }) => config.problems.map((problem) => problem.message);
const sources = (config: { servers: Array<{ name: string; source: object }> }) =>
  Object.fromEntries(config.servers.map((server) => [server.name, server.source]));

/** A package folder with a manifest and its MCP config. */
function writePackage(dir: string, manifest: Record<string, unknown>, files: Record<string, unknown>): string {
  sandbox.write(`${dir}/package.json`, manifest);
  for (const [name, content] of Object.entries(files)) sandbox.write(`${dir}/${name}`, content);
  return path.join(sandbox.root, dir);
}

describe("Pi packages that ship MCP servers (pi.mcp)", () => {
  it("takes the servers of the packages Pi's settings list, named <package>__<server>, below the user's files", () => {
    writePackage(
      "home/.pi/agent/pkgs/acme",
      { name: "@acme/tools", pi: { mcp: "./mcp.json", extensions: [] } },
      {
        "mcp.json": {
          mcpServers: { docs: { command: "docs-mcp" }, "web.search": { url: "https://acme.example/mcp" } },
          settings: { toolPrefix: "none" },
        },
      },
    );
    writePackage(
      "home/.pi/agent/pkgs/other",
      { name: "other", pi: { mcp: ["servers/a.json", "../escape.json"] } },
      {
        "servers/a.json": { mcpServers: { a: { command: "a-mcp" } } },
      },
    );
    // Not listed: never read.
    writePackage(
      "home/.pi/agent/pkgs/unlisted",
      { name: "unlisted", pi: { mcp: "./mcp.json" } },
      {
        "mcp.json": { mcpServers: { x: { command: "x" } } },
      },
    );
    sandbox.write("home/.pi/agent/settings.json", { packages: ["./pkgs/acme", { source: "./pkgs/other", skills: [] }] });
    sandbox.write("home/.pi/agent/mcp.json", { mcpServers: { acme_tools__docs: { command: "mine" } } });

    const config = sandbox.load();
    expect(serversByName(config)).toEqual({
      acme_tools__docs: { enabled: true, command: "mine" },
      acme_tools__web_search: { enabled: true, url: "https://acme.example/mcp" },
      other__a: { enabled: true, command: "a-mcp" },
    });
    const pkgs = path.join(sandbox.agentDir, "pkgs");
    expect(sources(config)).toEqual({
      acme_tools__docs: { kind: "user", path: path.join(sandbox.agentDir, "mcp.json") },
      acme_tools__web_search: { kind: "pi-package", path: path.join(pkgs, "acme", "mcp.json"), label: "./pkgs/acme" },
      other__a: { kind: "pi-package", path: path.join(pkgs, "other", "servers", "a.json"), label: "./pkgs/other" },
    });
    expect(config.settings).toEqual({}); // a package's settings are not the user's
    expect(messages(config)).toEqual([
      `${path.join(pkgs, "acme", "mcp.json")}: "settings": ignored: a package brings servers only (settings and imports are yours to set)`,
      `${path.join(pkgs, "other", "package.json")}: "pi.mcp": "../escape.json" is not a file inside the package; ignored`,
    ]);
  });

  it("a project's packages (.pi/settings.json, installed under .pi/npm) count once the project is trusted", () => {
    writePackage(
      "project/.pi/npm/node_modules/team-mcp",
      { name: "team-mcp", pi: { mcp: "mcp.json" } },
      {
        "mcp.json": { mcpServers: { db: { command: "db-mcp" } } },
      },
    );
    sandbox.write("project/.pi/settings.json", { packages: ["npm:team-mcp@1.2.0"] });
    const file = path.join(sandbox.project, ".pi", "npm", "node_modules", "team-mcp", "mcp.json");

    const untrusted = sandbox.load({ projectTrusted: false });
    expect(untrusted.servers).toEqual([]);
    expect(untrusted.project).toEqual({ trusted: false, files: [file], servers: ["team-mcp__db"] });

    const trusted = sandbox.load();
    expect(sources(trusted)).toEqual({ "team-mcp__db": { kind: "pi-package", path: file, label: "npm:team-mcp@1.2.0" } });
  });
});

describe("Claude Code plugin folders (claudePlugins)", () => {
  const FIXTURES = path.join(REPO_ROOT, "test/fixtures/claude-plugins");
  const plugin = (dir: string, mcp: string, manifest?: string) => {
    const root = path.join(sandbox.root, dir);
    mkdirSync(root, { recursive: true });
    copyFileSync(path.join(FIXTURES, mcp), path.join(root, ".mcp.json"));
    if (manifest) {
      mkdirSync(path.join(root, ".claude-plugin"));
      copyFileSync(path.join(FIXTURES, manifest), path.join(root, ".claude-plugin", "plugin.json"));
    }
    return root;
  };

  it("reads a plugin's .mcp.json in both shapes, with ${CLAUDE_PLUGIN_ROOT}; names as written, below our files", () => {
    const telegram = plugin("plugins/telegram", "telegram.mcp.json", "telegram.plugin.json");
    const github = plugin("plugins/github", "github.mcp.json");
    const serena = plugin("plugins/serena", "serena.mcp.json");
    sandbox.write("home/.pi/agent/mcp.json", {
      mcpServers: { serena: { command: "my-serena" } },
      claudePlugins: [
        { path: "../plugins/telegram", mcp: true },
        { path: github, mcp: true, skills: false },
        { path: serena, mcp: true },
      ],
    });
    const config = sandbox.load({ env: { GITHUB_PERSONAL_ACCESS_TOKEN: "ghp_x" } });
    expect(messages(config)).toEqual([]);
    expect(serversByName(config)).toEqual({
      serena: { enabled: true, command: "my-serena" },
      telegram: {
        enabled: true,
        command: "tsx",
        args: [path.join(telegram, "server.ts")],
        env: { CLAUDE_PLUGIN_ROOT: telegram },
      },
      github: {
        enabled: true,
        transport: "http",
        url: "https://api.githubcopilot.com/mcp/",
        headers: {
          Authorization: "Bearer ghp_x",
          "X-MCP-Toolsets": "repos,issues,pull_requests,actions,code_security,dependabot,secret_protection",
        },
      },
    });
    expect(sources(config)).toMatchObject({
      telegram: { kind: "claude-plugin", path: path.join(telegram, ".mcp.json"), label: "telegram" },
      github: { kind: "claude-plugin", path: path.join(github, ".mcp.json"), label: "github" },
    });
  });

  it("gives Pi the plugin's skills/**/SKILL.md, nothing outside the folder; the first plugin wins a name", () => {
    const first = plugin("plugins/first", "serena.mcp.json");
    const second = plugin("plugins/second", "serena.mcp.json");
    sandbox.write("plugins/first/skills/review/SKILL.md", "---\nname: review\ndescription: Reviews\n---\n");
    sandbox.write("plugins/first/skills/group/deploy/SKILL.md", "---\nname: deploy\ndescription: Deploys\n---\n");
    sandbox.write("plugins/first/skills/group/deploy/nested/SKILL.md", "a skill inside a skill is not another skill");
    sandbox.write("outside/SKILL.md", "---\nname: outside\ndescription: Not the plugin's\n---\n");
    symlinkSync(path.join(sandbox.root, "outside"), path.join(first, "skills", "escape"));
    sandbox.write("home/.pi/agent/mcp.json", {
      claudePlugins: [
        { path: first, mcp: true, skills: true },
        { path: second, mcp: true },
      ],
    });
    const config = sandbox.load();
    expect(config.pluginSkills).toEqual([
      path.join(first, "skills", "group", "deploy", "SKILL.md"),
      path.join(first, "skills", "review", "SKILL.md"),
    ]);
    expect(sources(config)).toEqual({ serena: { kind: "claude-plugin", path: path.join(first, ".mcp.json"), label: "first" } });
  });

  it("a higher file's list replaces a lower one's; a project's counts once trusted; bad entries are named", () => {
    const github = plugin("plugins/github", "github.mcp.json");
    const telegram = plugin("plugins/telegram", "telegram.mcp.json");
    sandbox.write("home/.pi/agent/mcp.json", { claudePlugins: [{ path: github, mcp: true }] });
    sandbox.write("project/.pi/mcp.json", {
      claudePlugins: [{ path: telegram, mcp: true }, { path: "" }, { path: telegram }, { path: "/nowhere", mcp: true }],
    });
    const trusted = sandbox.load({ env: { GITHUB_PERSONAL_ACCESS_TOKEN: "x" } });
    expect(Object.keys(serversByName(trusted))).toEqual(["telegram"]);
    const projectFile = path.join(sandbox.project, ".pi", "mcp.json");
    expect(messages(trusted)).toEqual([
      `${projectFile}: "claudePlugins[1]": must be an object with a non-empty "path" (got an object); this plugin is not loaded`,
      `${projectFile}: "claudePlugins[2]": turns on neither "mcp" nor "skills"; this plugin is not loaded`,
      `${projectFile}: "claudePlugins": /nowhere does not exist; this plugin is not loaded`,
    ]);

    const untrusted = sandbox.load({ projectTrusted: false, env: { GITHUB_PERSONAL_ACCESS_TOKEN: "x" } });
    expect(Object.keys(serversByName(untrusted))).toEqual(["github"]);
    expect(untrusted.project?.files).toEqual([projectFile]);
  });

  it("a broken manifest keeps the plugin out; its .mcp.json's '!' values are not commands", () => {
    const root = plugin("plugins/bad", "serena.mcp.json");
    sandbox.write("plugins/bad/.claude-plugin/plugin.json", { name: "Not Kebab" });
    const bang = plugin("plugins/bang", "serena.mcp.json");
    sandbox.write("plugins/bang/.mcp.json", { runner: { command: "r", env: { TOKEN: "!cat ~/.secret" } } });
    sandbox.write("home/.pi/agent/mcp.json", {
      claudePlugins: [
        { path: root, mcp: true },
        { path: bang, mcp: true },
      ],
    });
    const config = sandbox.load();
    expect(serversByName(config)).toEqual({
      runner: { enabled: true, command: "r", env: { CLAUDE_PLUGIN_ROOT: bang, TOKEN: "!cat ~/.secret" } },
    });
    expect(messages(config)[0]).toBe(
      `${path.join(root, ".claude-plugin", "plugin.json")}: "name" must be kebab-case (got a string); the plugin listed in ${path.join(sandbox.agentDir, "mcp.json")} is not loaded`,
    );
    expect(messages(config)[1]).toMatch(/server "runner": "env\.TOKEN": begins with "!", which pi-mcp-adapter 2\.x runs as a command/);
  });
});

describe("servers other extensions register through upstream's event", () => {
  const context: InterpolationContext = { env: {}, homeDir: "/home/u", cwd: "/p", platform: "linux" };
  const ITEMS = { command: "node", args: ["items.mjs"] };

  function registrations(configured: string[] = []) {
    const changes: string[][] = [];
    const runtime: RuntimeRegistrations = new RuntimeRegistrations({
      configured: () => new Set(configured),
      context: () => context,
      changed: async () => void changes.push(runtime.servers().map((server) => server.name)),
    });
    const register = (request: Record<string, unknown>) => {
      runtime.handle(request);
      return request.result as { ok: boolean; error?: Error; registration?: { dispose(): Promise<void> } };
    };
    return { runtime, changes, register };
  }

  it("answers in the same call: registered until disposed, the session told each time", async () => {
    const { runtime, changes, register } = registrations();
    const result = register({ version: 1, name: "acme__docs", definition: ITEMS });
    expect(result.ok).toBe(true);
    expect(runtime.servers()).toEqual([{ name: "acme__docs", config: ITEMS }]);
    await result.registration!.dispose();
    await result.registration!.dispose(); // twice: nothing more happens
    expect(runtime.servers()).toEqual([]);
    expect(changes).toEqual([["acme__docs"], []]);
  });

  it("refuses, with why, a name the config has or another registration has, an unknown version, a bad definition", () => {
    const { register, runtime } = registrations(["github"]);
    expect(register({ version: 1, name: "first", definition: ITEMS }).ok).toBe(true);
    const refusal = (request: Record<string, unknown>) => register(request).error?.message;
    expect(refusal({ version: 1, name: "github", definition: ITEMS })).toBe(
      'MCP server registration refused: a configured server is named "github" (it stays as configured)',
    );
    expect(refusal({ version: 1, name: "first", definition: ITEMS })).toBe(
      'MCP server registration refused: a server named "first" is registered already',
    );
    expect(refusal({ version: 2, name: "x", definition: ITEMS })).toBe(
      "MCP server registration refused: version the number 2 is not supported (this adapter reads version 1)",
    );
    expect(refusal({ version: 1, name: "a b", definition: ITEMS })).toMatch(/the name must use letters, digits/);
    expect(refusal({ version: 1, name: "both", definition: { command: "x", url: "https://x" } })).toBe(
      'MCP server registration refused: event pi-mcp-adapter:runtime-register:v1: server "both": "url": has both "command" and "url"; a server is either a process (command) or an endpoint (url)',
    );
    // Answered already by another listener: left alone.
    const answered = { version: 1, name: "second", definition: ITEMS, result: "theirs" };
    runtime.handle(answered);
    expect(answered.result).toBe("theirs");
    runtime.clear();
    expect(runtime.servers()).toEqual([]);
  });

  it("are the lowest source: a configured server of the same name keeps it, and the registration is named", () => {
    sandbox.write("home/.pi/agent/mcp.json", { mcpServers: { github: { command: "mine" } } });
    const runtime: RuntimeServer[] = [
      { name: "github", config: ITEMS },
      { name: "acme__docs", config: ITEMS },
    ];
    const config = sandbox.load({ runtime });
    expect(sources(config)).toEqual({
      github: { kind: "user", path: path.join(sandbox.agentDir, "mcp.json") },
      acme__docs: { kind: "runtime", path: "event pi-mcp-adapter:runtime-register:v1" },
    });
    expect(messages(config)).toEqual([
      'event pi-mcp-adapter:runtime-register:v1: server "github": registered at runtime by another extension, but a configured server has this name: the configured one is used',
    ]);
  });
});

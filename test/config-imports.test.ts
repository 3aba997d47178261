import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hostConfigFiles } from "../config/imports.ts";
import type { InterpolationContext } from "../config/interpolation.ts";
import type { ImportKind, LoadedConfig } from "../types.ts";
import { createConfigSandbox, serversByName, sourcesByName, type ConfigSandbox } from "./config-sandbox.ts";

let sandbox: ConfigSandbox;
beforeEach(() => {
  sandbox = createConfigSandbox();
});
afterEach(() => sandbox.remove());

function importing(kind: ImportKind, env: NodeJS.ProcessEnv = {}, platform: NodeJS.Platform = "linux"): LoadedConfig {
  sandbox.write("home/.pi/agent/mcp.json", { imports: [kind] });
  return sandbox.load({ env, platform });
}
const messages = (config: LoadedConfig) => config.problems.map(({ level, message }) => `${level} ${message}`);

describe("hostConfigFiles: where each host keeps its servers", () => {
  const kinds: ImportKind[] = ["cursor", "claude-code", "claude-desktop", "codex", "windsurf", "vscode"];
  const all = (context: InterpolationContext) => Object.fromEntries(kinds.map((kind) => [kind, hostConfigFiles(kind, context)]));

  it("on Linux (XDG config dir for the desktop apps)", () => {
    expect(all({ platform: "linux", homeDir: "/home/ada", cwd: "/work/app", env: {} })).toEqual({
      cursor: ["/work/app/.cursor/mcp.json", "/home/ada/.cursor/mcp.json"],
      "claude-code": ["/home/ada/.claude.json"],
      "claude-desktop": ["/home/ada/.config/Claude/claude_desktop_config.json"],
      codex: ["/work/app/.codex/config.toml", "/home/ada/.codex/config.toml"],
      windsurf: ["/home/ada/.codeium/windsurf/mcp_config.json"],
      vscode: [
        "/work/app/.vscode/mcp.json",
        "/work/app/.vscode/settings.json",
        "/home/ada/.config/Code/User/mcp.json",
        "/home/ada/.config/Code/User/settings.json",
      ],
    });
    const relocated = all({
      platform: "linux",
      homeDir: "/home/ada",
      cwd: "/work/app",
      env: { XDG_CONFIG_HOME: "/xdg", CLAUDE_CONFIG_DIR: "~/claude-work", CODEX_HOME: "/opt/codex" },
    });
    expect(relocated["claude-desktop"]).toEqual(["/xdg/Claude/claude_desktop_config.json"]);
    expect(relocated.vscode).toEqual([
      "/work/app/.vscode/mcp.json",
      "/work/app/.vscode/settings.json",
      "/xdg/Code/User/mcp.json",
      "/xdg/Code/User/settings.json",
    ]);
    expect(relocated["claude-code"]).toEqual(["/home/ada/claude-work/.claude.json"]);
    expect(relocated.codex).toEqual(["/work/app/.codex/config.toml", "/opt/codex/config.toml"]);
  });

  it("on macOS (Application Support)", () => {
    const files = all({ platform: "darwin", homeDir: "/Users/ada", cwd: "/Users/ada/app", env: { XDG_CONFIG_HOME: "/ignored" } });
    expect(files["claude-desktop"]).toEqual(["/Users/ada/Library/Application Support/Claude/claude_desktop_config.json"]);
    expect(files.vscode).toEqual([
      "/Users/ada/app/.vscode/mcp.json",
      "/Users/ada/app/.vscode/settings.json",
      "/Users/ada/Library/Application Support/Code/User/mcp.json",
      "/Users/ada/Library/Application Support/Code/User/settings.json",
    ]);
    expect(files.windsurf).toEqual(["/Users/ada/.codeium/windsurf/mcp_config.json"]);
  });

  it("on Windows (%APPDATA%, %USERPROFILE%, any case of the variable name)", () => {
    const context: InterpolationContext = {
      platform: "win32",
      homeDir: "C:\\Users\\ada",
      cwd: "D:\\src\\app",
      env: { AppData: "C:\\Users\\ada\\AppData\\Roaming", codex_home: "E:\\codex" },
    };
    expect(all(context)).toEqual({
      cursor: ["D:\\src\\app\\.cursor\\mcp.json", "C:\\Users\\ada\\.cursor\\mcp.json"],
      "claude-code": ["C:\\Users\\ada\\.claude.json"],
      "claude-desktop": ["C:\\Users\\ada\\AppData\\Roaming\\Claude\\claude_desktop_config.json"],
      codex: ["D:\\src\\app\\.codex\\config.toml", "E:\\codex\\config.toml"],
      windsurf: ["C:\\Users\\ada\\.codeium\\windsurf\\mcp_config.json"],
      vscode: [
        "D:\\src\\app\\.vscode\\mcp.json",
        "D:\\src\\app\\.vscode\\settings.json",
        "C:\\Users\\ada\\AppData\\Roaming\\Code\\User\\mcp.json",
        "C:\\Users\\ada\\AppData\\Roaming\\Code\\User\\settings.json",
      ],
    });
    expect(hostConfigFiles("claude-desktop", { ...context, env: {} })).toEqual([
      "C:\\Users\\ada\\AppData\\Roaming\\Claude\\claude_desktop_config.json",
    ]);
  });
});

describe("import: cursor", () => {
  it("reads the user and project files, the project winning a name, with Cursor's ${env:} and predefined variables", () => {
    const user = sandbox.place("cursor/user-mcp.json", "home/.cursor/mcp.json");
    const project = sandbox.place("cursor/project-mcp.json", "project/.cursor/mcp.json");
    const config = importing("cursor", { GITHUB_TOKEN: "ghp_1", CONTEXT7_API_KEY: "c7" });
    expect(config.problems).toEqual([]);
    expect(sourcesByName(config)).toEqual({
      github: `cursor:${project}`,
      filesystem: `cursor:${project}`,
      linear: `cursor:${user}`,
      context7: `cursor:${user}`,
    });
    expect(serversByName(config)).toEqual({
      github: {
        enabled: true,
        command: "docker",
        args: ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"],
        env: { GITHUB_PERSONAL_ACCESS_TOKEN: "ghp_1" },
      },
      filesystem: {
        enabled: true,
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-filesystem", sandbox.project, `${sandbox.home}/notes`],
      },
      linear: { enabled: true, url: "https://mcp.linear.app/sse", transport: "sse" },
      context7: { enabled: true, url: "https://mcp.context7.com/mcp", headers: { CONTEXT7_API_KEY: "c7" } },
    });
  });

  it("an unset ${env:VAR} is hinted in terms Cursor's file allows (it has no ${VAR:-default}); a secret is for the environment", () => {
    const project = sandbox.place("cursor/project-mcp.json", "project/.cursor/mcp.json");
    expect(messages(importing("cursor"))).toEqual([
      `error ${project}: server "github": "env.GITHUB_PERSONAL_ACCESS_TOKEN": environment variable GITHUB_TOKEN is not set ` +
        `(it holds a secret: set it in Pi's environment, not in a config file, and start Pi again)`,
    ]);
    sandbox.write("project/.cursor/mcp.json", { mcpServers: { ghe: { command: "gh-mcp", args: ["--host", "${env:GHE_HOST}"] } } });
    expect(messages(importing("cursor"))).toEqual([
      `error ${project}: server "ghe": "args[1]": environment variable GHE_HOST is not set ` +
        `(set it before starting Pi, or define the server in your Pi config, where \${GHE_HOST:-default} gives a default)`,
    ]);
  });
});

describe("import: claude-code", () => {
  it("reads user-scope servers and this project's local-scope servers, local winning", () => {
    const file = sandbox.place("claude-code/claude.json", "home/.claude.json");
    const config = importing("claude-code", { AIRTABLE_TOKEN: "pat1" });
    expect(config.problems).toEqual([]);
    expect(config.servers.map((server) => server.source)).toEqual(Array(3).fill({ kind: "claude-code", path: file }));
    expect(serversByName(config)).toEqual({
      sentry: { enabled: true, url: "https://mcp.sentry.dev/mcp", transport: "http" },
      memory: {
        enabled: true,
        transport: "stdio",
        command: "node",
        args: ["/opt/memory/dist/index.js"],
        env: { MEMORY_FILE_PATH: "/tmp/memory.json" },
      },
      airtable: { enabled: true, url: "https://airtable.example.com/sse", transport: "sse", headers: { Authorization: "Bearer pat1" } },
    });
  });

  it("matches the project key whatever its trailing slash", () => {
    sandbox.write("home/.claude.json", { projects: { [`${sandbox.project}/`]: { mcpServers: { local: { command: "x" } } } } });
    expect(Object.keys(serversByName(importing("claude-code")))).toEqual(["local"]);
  });

  it("gives its servers the limits of MCP_TIMEOUT (startup) and MCP_TOOL_TIMEOUT (tool calls); a bad value is a warning", () => {
    const file = sandbox.write("home/.claude.json", { mcpServers: { slow: { command: "x" } } });
    sandbox.write("home/.pi/agent/mcp.json", { imports: ["claude-code"], mcpServers: { own: { command: "y" } } });
    const config = sandbox.load({ env: { MCP_TIMEOUT: "45000", MCP_TOOL_TIMEOUT: "900000" }, platform: "linux" });
    expect(serversByName(config)).toEqual({
      own: { enabled: true, command: "y" },
      slow: { enabled: true, command: "x", startupTimeoutMs: 45000, requestTimeoutMs: 900000 },
    });
    const bad = importing("claude-code", { MCP_TOOL_TIMEOUT: "soon" });
    expect(serversByName(bad)).toEqual({ slow: { enabled: true, command: "x" } });
    expect(messages(bad)).toEqual([
      `warning ${file}: environment variable MCP_TOOL_TIMEOUT must be a number of milliseconds > 0 (got "soon"); ignored`,
    ]);
  });

  it("follows CLAUDE_CONFIG_DIR", () => {
    sandbox.place("claude-code/claude.json", "home/.claude.json");
    const relocated = sandbox.write("elsewhere/.claude.json", { mcpServers: { relocated: { type: "stdio", command: "x" } } });
    const config = importing("claude-code", { CLAUDE_CONFIG_DIR: path.dirname(relocated) });
    expect(sourcesByName(config)).toEqual({ relocated: `claude-code:${relocated}` });
  });

  it("reports a missing variable as Claude Code does (no default: that server fails)", () => {
    const file = sandbox.place("claude-code/claude.json", "home/.claude.json");
    const config = importing("claude-code");
    expect(Object.keys(serversByName(config))).toEqual(["sentry", "memory"]);
    expect(messages(config)).toEqual([
      `error ${file}: server "airtable": "headers.Authorization": environment variable AIRTABLE_TOKEN is not set (it holds a secret: set it in Pi's environment, not in a config file, and start Pi again)`,
    ]);
  });

  it("is quiet about a ~/.claude.json without MCP servers", () => {
    sandbox.write("home/.claude.json", { numStartups: 3, projects: { [sandbox.project]: { allowedTools: [] } } });
    expect(importing("claude-code")).toMatchObject({ servers: [], settings: {}, problems: [] });
  });
});

describe("import: claude-desktop", () => {
  const expected = {
    filesystem: {
      enabled: true,
      command: "npx",
      args: ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop", "/Users/me/Downloads"],
    },
    "brave-search": {
      enabled: true,
      command: "npx",
      args: ["-y", "@modelcontextprotocol/server-brave-search"],
      env: { BRAVE_API_KEY: "BSA-literal-key" },
    },
  };

  it("reads ~/.config/Claude on Linux, or $XDG_CONFIG_HOME/Claude", () => {
    sandbox.place("claude-desktop/claude_desktop_config.json", "home/.config/Claude/claude_desktop_config.json");
    expect(serversByName(importing("claude-desktop"))).toEqual(expected);
    const xdg = sandbox.place("claude-desktop/claude_desktop_config.json", "xdg/Claude/claude_desktop_config.json");
    const config = importing("claude-desktop", { XDG_CONFIG_HOME: path.join(sandbox.root, "xdg") });
    expect(new Set(config.servers.map((server) => server.source.path))).toEqual(new Set([xdg]));
  });

  it("reads ~/Library/Application Support/Claude on macOS", () => {
    sandbox.place("claude-desktop/claude_desktop_config.json", "home/Library/Application Support/Claude/claude_desktop_config.json");
    expect(serversByName(importing("claude-desktop", {}, "darwin"))).toEqual(expected);
    expect(importing("claude-desktop", {}, "linux").servers).toEqual([]);
  });
});

describe("import: codex", () => {
  const env = { CONTEXT7_API_KEY: "c7", FIGMA_ORG: "acme", NOT_INTERPOLATED: "oops" };

  it("maps every Codex field and keeps values literal", () => {
    const user = sandbox.place("codex/config.toml", "home/.codex/config.toml");
    const config = importing("codex", env);
    expect(config.problems).toEqual([]);
    expect(new Set(config.servers.map((server) => `${server.source.kind}:${server.source.path}`))).toEqual(new Set([`codex:${user}`]));
    expect(serversByName(config)).toEqual({
      context7: {
        enabled: true,
        command: "npx",
        args: ["-y", "@upstash/context7-mcp"],
        env: { CONTEXT7_API_KEY: "c7" },
        startupTimeoutMs: 20000,
        requestTimeoutMs: 60000,
      },
      figma: {
        enabled: true,
        url: "https://mcp.figma.com/mcp",
        transport: "http",
        bearerTokenEnv: "FIGMA_OAUTH_TOKEN",
        headers: { "X-Figma-Region": "us-east-1", "X-Org": "acme" },
      },
      "chrome-devtools": { enabled: false, command: "npx", args: ["-y", "chrome-devtools-mcp@latest"] },
      docs: {
        enabled: true,
        command: "docs-server",
        cwd: `${sandbox.home}/work/docs`,
        env: { DOCS_LOG: "debug", LITERAL: "${NOT_INTERPOLATED}" },
        startupTimeoutMs: 15000,
        excludeTools: ["delete_page"],
      },
    });
  });

  it("reads the project's .codex/config.toml only when the project is trusted, the project winning", () => {
    const project = sandbox.place("codex/project-config.toml", "project/.codex/config.toml");
    const user = sandbox.place("codex/config.toml", "codex-home/config.toml");
    const trusted = importing("codex", { ...env, CODEX_HOME: path.dirname(user) });
    expect(trusted.problems).toEqual([]);
    expect(trusted.servers.map((server) => server.name)).toEqual(["docs", "context7", "figma", "chrome-devtools"]);
    expect(sourcesByName(trusted).docs).toBe(`codex:${project}`);
    expect(serversByName(trusted).docs).toEqual({ enabled: true, command: "./scripts/docs-mcp", args: ["--project"] });

    sandbox.write("codex-home/config.toml", '[mcp_servers.docs]\ncommand = "docs-server"\n');
    const untrusted = importing("codex", { CODEX_HOME: path.dirname(user) });
    expect(sourcesByName(untrusted)).toEqual({ docs: `codex:${user}` });
    expect(messages(untrusted)).toEqual([
      `warning ${project}: skipped: Codex reads a project's config only once the project is trusted (trust_level = "trusted" in ${user})`,
    ]);
  });

  it("names the TOML line and column of a syntax error", () => {
    const file = sandbox.write("home/.codex/config.toml", '[mcp_servers.a]\ncommand = "x"\nargs = [1,\n');
    expect(messages(importing("codex"))).toEqual([`error ${file}: invalid TOML at line 4, column 1: invalid value`]);
  });

  it("rejects an inline bearer_token as Codex does, and reports Codex fields by their own names", () => {
    const file = sandbox.write(
      "home/.codex/config.toml",
      [
        "[mcp_servers.inline]",
        'url = "https://example.com/mcp"',
        'bearer_token = "secret"',
        "[mcp_servers.slow]",
        'command = "x"',
        'startup_timeout_sec = "soon"',
        "[mcp_servers.hasty]",
        'command = "x"',
        "tool_timeout_sec = 0",
        "[mcp_servers.headers]",
        'url = "https://example.com/mcp"',
        "http_headers = { A = 1 }",
        "[mcp_servers.allow]",
        'command = "x"',
        'enabled_tools = ["a"]',
        "[mcp_servers.mixed]",
        'command = "x"',
        'url = "https://example.com/mcp"',
      ].join("\n"),
    );
    const config = importing("codex");
    expect(serversByName(config)).toEqual({ allow: { enabled: true, command: "x", includeTools: ["a"] } });
    expect(messages(config)).toEqual([
      `error ${file}: server "inline": "bearer_token": is rejected by Codex; put the token in an environment variable and name it in bearer_token_env_var`,
      `error ${file}: server "slow": "startup_timeout_sec": must be a number > 0 (got a string)`,
      `error ${file}: server "hasty": "tool_timeout_sec": must be a number > 0 (got the number 0)`,
      `error ${file}: server "headers": "http_headers.A": must be a string (got the number 1)`,
      `error ${file}: server "mixed": "url": has both "command" and "url"; a server is either a process (command) or an endpoint (url)`,
    ]);
  });
});

describe("import: windsurf", () => {
  it("maps serverUrl, disabled and disabledTools", () => {
    sandbox.place("windsurf/mcp_config.json", "home/.codeium/windsurf/mcp_config.json");
    const config = importing("windsurf", { GITHUB_TOKEN: "ghp_2", FIGMA_TOKEN: "fig" });
    expect(config.problems).toEqual([]);
    expect(serversByName(config)).toEqual({
      github: {
        enabled: true,
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-github"],
        env: { GITHUB_PERSONAL_ACCESS_TOKEN: "ghp_2" },
        excludeTools: ["create_repository", "fork_repository"],
      },
      figma: { enabled: true, url: "https://mcp.figma.com/sse", headers: { Authorization: "Bearer fig" } },
      puppeteer: { enabled: false, command: "npx", args: ["-y", "@modelcontextprotocol/server-puppeteer"] },
    });
  });

  it("names Windsurf's own field in a problem", () => {
    const file = sandbox.write("home/.codeium/windsurf/mcp_config.json", {
      mcpServers: { a: { serverUrl: "mailto:x@example.com" }, b: { command: "x", disabledTools: "all" } },
    });
    expect(messages(importing("windsurf"))).toEqual([
      `error ${file}: server "a": "serverUrl": must be an http:// or https:// URL (got mailto:)`,
      `error ${file}: server "b": "disabledTools": must be an array of strings (got a string)`,
    ]);
  });
});

describe("import: vscode", () => {
  it("reads `servers` from the workspace and user files (JSONC), skipping servers that need VS Code inputs", () => {
    const workspace = sandbox.place("vscode/workspace-mcp.json", "project/.vscode/mcp.json");
    const user = sandbox.place("vscode/user-mcp.json", "home/.config/Code/User/mcp.json");
    const config = importing("vscode");
    expect(sourcesByName(config)).toEqual({ playwright: `vscode:${workspace}`, fetch: `vscode:${workspace}`, github: `vscode:${user}` });
    expect(serversByName(config)).toEqual({
      playwright: { enabled: true, command: "npx", args: ["@playwright/mcp@latest"] },
      fetch: { enabled: true, transport: "stdio", command: "uvx", args: ["mcp-server-fetch", "--ignore-robots-txt"] },
      github: { enabled: true, transport: "http", url: "https://api.githubcopilot.com/mcp/" },
    });
    expect(messages(config)).toEqual([
      `warning ${workspace}: server "playwright": "envFile": is not supported: variables from that file are not set for this server`,
      `warning ${workspace}: server "perplexity": "env.PERPLEXITY_API_KEY": uses \${input:perplexity-key}, a value only VS Code can prompt for; server skipped (define it in your Pi config with \${env:VAR} instead)`,
    ]);
  });

  it('reads servers kept in settings.json under "mcp" (VS Code before 1.102), each scope\'s mcp.json winning a name', () => {
    const workspace = sandbox.place("vscode/workspace-mcp.json", "project/.vscode/mcp.json");
    const workspaceSettings = sandbox.write(
      "project/.vscode/settings.json",
      `{
      // JSONC, as VS Code writes it
      "editor.tabSize": 2,
      "mcp": { "servers": { "fetch": { "command": "older-fetch" }, "time": { "command": "uvx", "args": ["mcp-server-time"] } } },
    }`,
    );
    const userSettings = sandbox.write("home/.config/Code/User/settings.json", {
      mcp: { servers: { memory: { command: "npx", args: ["-y", "server-memory"] } } },
    });
    const config = importing("vscode");
    expect(sourcesByName(config)).toEqual({
      playwright: `vscode:${workspace}`,
      fetch: `vscode:${workspace}`,
      time: `vscode:${workspaceSettings}`,
      memory: `vscode:${userSettings}`,
    });
    expect(serversByName(config).time).toEqual({ enabled: true, command: "uvx", args: ["mcp-server-time"] });
  });

  it('a settings.json without "mcp" is no problem; an "mcp" that is not an object is reported', () => {
    sandbox.write("project/.vscode/settings.json", { "editor.tabSize": 2 });
    const user = sandbox.write("home/.config/Code/User/settings.json", { mcp: ["servers"] });
    expect(messages(importing("vscode"))).toEqual([`error ${user}: "mcp": must be an object with "servers" (got an array)`]);
  });

  it("reads the user profile under Application Support on macOS", () => {
    sandbox.place("vscode/user-mcp.json", "home/Library/Application Support/Code/User/mcp.json");
    expect(Object.keys(serversByName(importing("vscode", {}, "darwin")))).toEqual(["fetch", "github"]);
  });
});

describe("imports: bad host files", () => {
  it("reports a broken host file and still loads the other hosts and our own servers", () => {
    sandbox.write("home/.pi/agent/mcp.json", { mcpServers: { mine: { command: "m" } }, imports: ["cursor", "windsurf", "claude-code"] });
    const cursor = sandbox.write("home/.cursor/mcp.json", '{ "mcpServers": { "a": { "command": "x" } ');
    const windsurf = sandbox.write("home/.codeium/windsurf/mcp_config.json", { mcpServers: ["not", "a", "map"] });
    sandbox.place("claude-code/claude.json", "home/.claude.json");
    const config = sandbox.load({ env: { AIRTABLE_TOKEN: "t" } });
    expect(config.servers.map((server) => server.name)).toEqual(["mine", "sentry", "memory", "airtable"]);
    expect(messages(config)).toEqual([
      `error ${cursor}: invalid JSON at end of file: close brace expected`,
      `error ${windsurf}: "mcpServers": must be an object mapping server names to servers (got an array)`,
    ]);
  });
});

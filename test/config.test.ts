import { mkdirSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../config.ts";
import { samplingSettings } from "../calls/sampling.ts";
import { createConfigSandbox, serversByName, sourcesByName, type ConfigSandbox } from "./config-sandbox.ts";

let sandbox: ConfigSandbox;
beforeEach(() => {
  sandbox = createConfigSandbox();
});
afterEach(() => sandbox.remove());

const userFile = () => path.join(sandbox.agentDir, "mcp.json");
const writeUser = (content: unknown) => sandbox.write("home/.pi/agent/mcp.json", content);
const writeProject = (content: unknown) => sandbox.write("project/.pi/mcp.json", content);
const messages = (config: { problems: Array<{ message: string }> }) => config.problems.map((problem) => problem.message);

describe("loadConfig: our own files", () => {
  it("reads every server field and setting of the user file", () => {
    const file = sandbox.place("pi/user-mcp.json", "home/.pi/agent/mcp.json");
    const config = sandbox.load();
    expect(config.problems).toEqual([]);
    expect(serversByName(config)).toEqual({
      everything: {
        enabled: true,
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-everything"],
        lifecycle: "lazy",
        idleTimeout: 5,
      },
      github: {
        enabled: true,
        url: "https://api.githubcopilot.com/mcp/",
        auth: "bearer",
        bearerTokenEnv: "GITHUB_TOKEN",
        directTools: ["search_code"],
        excludeTools: ["delete_repository"],
      },
      "jetbrains-index": {
        enabled: true,
        command: `${sandbox.home}/bin/jetbrains-mcp`,
        cwd: `${sandbox.home}/work`,
        lifecycle: "keep-alive",
        startupTimeoutMs: 60000,
        exposeResources: false,
        debug: true,
      },
    });
    expect(config.servers.map((server) => server.source)).toEqual(Array(3).fill({ kind: "user", path: file }));
    expect(config.settings).toEqual({
      toolPrefix: "short",
      idleTimeout: 10,
      toonEncode: ["jetbrains-index"],
      captureStats: { path: `${sandbox.home}/.pi/agent/mcp-stats.json`, flushDelayMs: 500 },
    });
  });

  it("merges .pi/mcp.json over .mcp.json over the user file; behaviour-only entries adjust a lower definition", () => {
    const user = sandbox.place("pi/user-mcp.json", "home/.pi/agent/mcp.json");
    const shared = sandbox.place("pi/shared-mcp.json", "project/.mcp.json");
    const project = sandbox.place("pi/project-mcp.json", "project/.pi/mcp.json");
    const config = sandbox.load({ env: { GITHUB_TOKEN: "unused" } });
    expect(config.problems).toEqual([]);
    expect(config.servers.map((server) => server.name)).toEqual(["project-db", "everything", "sentry", "github", "jetbrains-index"]);
    expect(sourcesByName(config)).toEqual({
      "project-db": `project:${project}`,
      everything: `project-shared:${shared}`,
      sentry: `project-shared:${shared}`,
      github: `user:${user}`,
      "jetbrains-index": `user:${user}`,
    });
    const servers = serversByName(config);
    // A higher file with a command replaces the whole definition: nothing of the user's entry leaks into it.
    expect(servers.everything).toEqual({
      enabled: true,
      transport: "stdio",
      command: "node",
      args: [`${sandbox.project}/tools/everything.js`],
    });
    expect(servers.sentry).toEqual({
      enabled: true,
      transport: "http",
      url: "https://mcp.sentry.dev/mcp",
      headers: { Authorization: "Bearer anonymous" },
    });
    expect(servers["project-db"]).toEqual({
      enabled: true,
      command: "uvx",
      args: ["mcp-server-sqlite", "--db-path", "./data/dev.sqlite"],
      cwd: `${sandbox.project}/tools`,
    });
    expect(servers.github).toMatchObject({ enabled: false, url: "https://api.githubcopilot.com/mcp/" });
    expect(servers["jetbrains-index"]).toEqual({
      enabled: true,
      command: `${sandbox.home}/bin/jetbrains-mcp`,
      cwd: `${sandbox.home}/work`,
      lifecycle: "eager",
      idleTimeout: 0,
      startupTimeoutMs: 60000,
      exposeResources: false,
      debug: true,
    });
    expect(config.settings).toEqual({
      toolPrefix: "server",
      idleTimeout: 10,
      toonEncode: true,
      captureStats: { path: `${sandbox.home}/.pi/agent/mcp-stats.json`, flushDelayMs: 500 },
    });
  });

  it("lets --mcp-config replace the user file (relative to the project, ~ expanded)", () => {
    writeUser({ mcpServers: { ignored: { command: "a" } } });
    const custom = sandbox.write("project/conf/mcp.json", { mcpServers: { custom: { command: "b" } } });
    for (const configPath of ["conf/mcp.json", custom, "~/../project/conf/mcp.json"]) {
      const config = sandbox.load({ configPath });
      expect(sourcesByName(config)).toEqual({ custom: `user:${custom}` });
      expect(config.problems).toEqual([]);
    }
  });

  it("warns when the --mcp-config file does not exist, but an absent default file is simply absent", () => {
    expect(sandbox.load()).toEqual({ servers: [], settings: {}, problems: [], userFile: userFile() });
    const missing = path.join(sandbox.project, "nope.json");
    expect(sandbox.load({ configPath: missing })).toEqual({
      servers: [],
      settings: {},
      problems: [{ level: "warning", file: missing, message: `${missing}: the file given with --mcp-config does not exist` }],
      userFile: missing,
    });
  });

  it("a --mcp-config file that cannot be read is reported once, for what is wrong with it (not as missing)", () => {
    const broken = sandbox.write("project/broken.json", '{"mcpServers": {');
    const list = sandbox.write("project/list.json", "[]");
    expect(messages(sandbox.load({ configPath: broken }))).toEqual([`${broken}: invalid JSON at end of file: close brace expected`]);
    expect(messages(sandbox.load({ configPath: list }))).toEqual([`${list}: the top level must be a JSON object`]);
  });

  it("takes the Windows home from %USERPROFILE% and builds Windows paths", () => {
    const config = loadConfig({
      agentDir: "C:\\Users\\ada\\.pi\\agent",
      cwd: "D:\\src\\app",
      configPath: "~/mcp.json",
      platform: "win32",
      env: { USERPROFILE: "C:\\Users\\ada" },
    });
    expect(config.problems.map((problem) => problem.file)).toEqual(["C:\\Users\\ada\\mcp.json"]);
  });

  it("accepts the mcp-servers spelling, and prefers mcpServers when a file has both", () => {
    writeUser({ "mcp-servers": { kebab: { command: "k" } } });
    expect(Object.keys(serversByName(sandbox.load()))).toEqual(["kebab"]);
    writeUser({ mcpServers: { camel: { command: "c" } }, "mcp-servers": { kebab: { command: "k" } } });
    const config = sandbox.load();
    expect(Object.keys(serversByName(config))).toEqual(["camel"]);
    expect(messages(config)).toEqual([`${userFile()}: "mcp-servers": ignored: the file also has "mcpServers"`]);
  });

  it("keeps disabled servers (enabled: false or disabled: true) listed", () => {
    writeUser({
      mcpServers: {
        a: { command: "a", enabled: false },
        b: { url: "http://127.0.0.1:1/mcp", disabled: true },
        c: { command: "c", enabled: true },
      },
    });
    expect(sandbox.load().servers.map(({ name, enabled }) => [name, enabled])).toEqual([
      ["a", false],
      ["b", false],
      ["c", true],
    ]);
  });

  it("records the override that disabled a server, apart from the file that defines it", () => {
    const user = writeUser({
      mcpServers: { a: { command: "a" }, b: { command: "b" }, c: { command: "c", enabled: false }, d: { command: "d" } },
    });
    const shared = sandbox.write("project/.mcp.json", {
      mcpServers: { a: { enabled: false }, b: { enabled: false }, c: { lifecycle: "eager" }, d: { disabled: true } },
    });
    // The highest file that says something about `enabled` decides: .pi/mcp.json turns b back on, and disables a too.
    writeProject({ mcpServers: { a: { enabled: false }, b: { enabled: true } } });
    const project = path.join(sandbox.project, ".pi", "mcp.json");
    const config = sandbox.load();
    expect(config.problems).toEqual([]);
    expect(config.servers.map(({ name, enabled, source, disabledIn }) => [name, enabled, source.path, disabledIn])).toEqual([
      ["a", false, user, { kind: "project", path: project }],
      ["b", true, user, undefined],
      ["c", false, user, undefined],
      ["d", false, user, { kind: "project-shared", path: shared }],
    ]);
  });

  it("maps every type spelling to a transport and leaves it unset when the file does not say", () => {
    writeUser({
      mcpServers: {
        s: { type: "stdio", command: "x" },
        h: { type: "http", url: "http://127.0.0.1:1/" },
        sh: { type: "streamable-http", url: "http://127.0.0.1:1/" },
        sc: { type: "streamableHttp", url: "http://127.0.0.1:1/" },
        su: { transport: "streamable_http", url: "http://127.0.0.1:1/" },
        e: { type: "sse", url: "http://127.0.0.1:1/sse" },
        u: { url: "https://example.com/mcp" },
        c: { command: "x" },
      },
    });
    const config = sandbox.load();
    expect(config.problems).toEqual([]);
    expect(Object.fromEntries(config.servers.map((server) => [server.name, server.transport]))).toEqual({
      s: "stdio",
      h: "http",
      sh: "http",
      sc: "http",
      su: "http",
      e: "sse",
      u: undefined,
      c: undefined,
    });
  });

  it("reads JSON with comments and trailing commas, and an empty file as an empty config", () => {
    writeUser('{\n  // mine\n  "mcpServers": { "a": { "command": "x", }, },\n}\n');
    writeProject("");
    const config = sandbox.load();
    expect(config.problems).toEqual([]);
    expect(Object.keys(serversByName(config))).toEqual(["a"]);
  });
});

describe("loadConfig: imports", () => {
  it("adds imported servers only under names no file of ours defines", () => {
    writeUser({ mcpServers: { github: { command: "my-github" } }, imports: ["cursor"] });
    const cursor = sandbox.place("cursor/user-mcp.json", "home/.cursor/mcp.json");
    const config = sandbox.load({ env: { CONTEXT7_API_KEY: "k7" } });
    expect(config.problems).toEqual([]);
    expect(sourcesByName(config)).toEqual({ github: `user:${userFile()}`, linear: `cursor:${cursor}`, context7: `cursor:${cursor}` });
    expect(serversByName(config).github).toEqual({ enabled: true, command: "my-github" });
  });

  it("honours imports listed in project files, the first listed host winning a name clash", () => {
    writeUser({ imports: ["windsurf"] });
    writeProject({ imports: ["cursor", "windsurf"] });
    const windsurf = sandbox.place("windsurf/mcp_config.json", "home/.codeium/windsurf/mcp_config.json");
    sandbox.place("cursor/user-mcp.json", "home/.cursor/mcp.json");
    const config = sandbox.load({ env: { GITHUB_TOKEN: "t", FIGMA_TOKEN: "f", CONTEXT7_API_KEY: "k" } });
    expect(config.problems).toEqual([]);
    expect(sourcesByName(config).github).toBe(`windsurf:${windsurf}`);
    expect(config.servers.map((server) => `${server.source.kind}/${server.name}`)).toEqual([
      "windsurf/github",
      "windsurf/figma",
      "windsurf/puppeteer",
      "cursor/linear",
      "cursor/context7",
    ]);
  });

  it("lets a project file disable or tune an imported server", () => {
    writeProject({ mcpServers: { linear: { enabled: false }, context7: { lifecycle: "eager" } }, imports: ["cursor"] });
    sandbox.place("cursor/user-mcp.json", "home/.cursor/mcp.json");
    const config = sandbox.load({ env: { GITHUB_TOKEN: "t", CONTEXT7_API_KEY: "k" } });
    expect(config.problems).toEqual([]);
    const servers = serversByName(config);
    expect(servers.linear).toEqual({
      enabled: false,
      url: "https://mcp.linear.app/sse",
      transport: "sse",
      disabledIn: { kind: "project", path: path.join(sandbox.project, ".pi", "mcp.json") },
    });
    expect(servers.context7).toEqual({
      enabled: true,
      url: "https://mcp.context7.com/mcp",
      headers: { CONTEXT7_API_KEY: "k" },
      lifecycle: "eager",
    });
  });

  it("reports imports that are not a list or name unknown hosts", () => {
    writeUser({ imports: "cursor" });
    writeProject({ imports: ["cursor", "zed", 3] });
    const project = path.join(sandbox.project, ".pi", "mcp.json");
    expect(sandbox.load().problems).toEqual([
      {
        level: "warning",
        file: project,
        field: "imports[1]",
        message: `${project}: "imports[1]": unknown host "zed", ignored (known: "cursor", "claude-code", "claude-desktop", "codex", "windsurf", "vscode")`,
      },
      {
        level: "warning",
        file: project,
        field: "imports[2]",
        message: `${project}: "imports[2]": unknown host the number 3, ignored (known: "cursor", "claude-code", "claude-desktop", "codex", "windsurf", "vscode")`,
      },
      {
        level: "error",
        file: userFile(),
        field: "imports",
        message: `${userFile()}: "imports": must be an array of host names ("cursor", "claude-code", "claude-desktop", "codex", "windsurf", "vscode") (got a string)`,
      },
    ]);
  });
});

describe("loadConfig: interpolation in server fields", () => {
  it("substitutes variables in command, args, env, cwd, url, headers and bearerToken; expands ~ in paths", () => {
    writeUser({
      mcpServers: {
        local: {
          command: "${TOOLS}/server",
          args: ["~/data", "--key=${KEY}", "--port=${PORT:-8080}", "${workspaceFolder}/src", "--literal=~/x"],
          env: { API_KEY: "$env:KEY", HOME_DIR: "${userHome}" },
          cwd: "~/work/${NAME}",
        },
        remote: { url: "https://${HOST}/mcp", headers: { Authorization: "Bearer ${env:KEY}" }, bearerToken: "${KEY}" },
      },
    });
    const config = sandbox.load({ env: { TOOLS: "/opt/tools", KEY: "k3y", NAME: "proj", HOST: "mcp.example.com" } });
    expect(config.problems).toEqual([]);
    expect(serversByName(config)).toEqual({
      local: {
        enabled: true,
        command: "/opt/tools/server",
        args: [`${sandbox.home}/data`, "--key=k3y", "--port=8080", `${sandbox.project}/src`, "--literal=~/x"],
        env: { API_KEY: "k3y", HOME_DIR: sandbox.home },
        cwd: `${sandbox.home}/work/proj`,
      },
      remote: { enabled: true, url: "https://mcp.example.com/mcp", headers: { Authorization: "Bearer k3y" }, bearerToken: "k3y" },
    });
  });

  it("does not treat a ~ that comes out of a variable as the home directory", () => {
    writeUser({ mcpServers: { a: { command: "${DIR}/run" } } });
    expect(serversByName(sandbox.load({ env: { DIR: "~" } })).a).toEqual({ enabled: true, command: "~/run" });
  });

  it("skips only the server whose variable is missing, naming the server, the field and the variable", () => {
    writeUser({ mcpServers: { needsToken: { command: "x", env: { TOKEN: "${GITHUB_TOKEN}" } }, fine: { command: "y" } } });
    const config = sandbox.load();
    expect(config.servers.map((server) => server.name)).toEqual(["fine"]);
    expect(config.problems).toEqual([
      {
        level: "error",
        file: userFile(),
        server: "needsToken",
        field: "env.TOKEN",
        message: `${userFile()}: server "needsToken": "env.TOKEN": environment variable GITHUB_TOKEN is not set (it holds a secret: set it in Pi's environment, not in a config file, and start Pi again)`,
      },
    ]);
  });

  it("offers a default only for a variable that holds no secret; both servers are skipped, with their file", () => {
    writeUser({
      mcpServers: {
        region: { command: "x", args: ["--region", "${MCP_REGION}"] },
        keyed: { command: "y", env: { KEY: "${ACME_API_KEY}" } },
      },
    });
    const config = sandbox.load();
    expect(messages(config)).toEqual([
      `${userFile()}: server "region": "args[1]": environment variable MCP_REGION is not set (write \${MCP_REGION:-default} to give a default)`,
      `${userFile()}: server "keyed": "env.KEY": environment variable ACME_API_KEY is not set (it holds a secret: set it in Pi's environment, not in a config file, and start Pi again)`,
    ]);
    expect(config.skipped).toEqual([
      { name: "region", source: { kind: "user", path: userFile() } },
      { name: "keyed", source: { kind: "user", path: userFile() } },
    ]);
  });

  it("does not complain about variables of a disabled server", () => {
    writeUser({ mcpServers: { off: { command: "x", args: ["${MISSING}"], enabled: false } } });
    const config = sandbox.load();
    expect(config.problems).toEqual([]);
    expect(serversByName(config)).toEqual({ off: { enabled: false, command: "x", args: ["${MISSING}"] } });
  });

  it("reports a variable missing from a server a project file enables", () => {
    writeUser({ mcpServers: { off: { command: "x", args: ["${MISSING}"], enabled: false } } });
    writeProject({ mcpServers: { off: { enabled: true } } });
    const config = sandbox.load();
    expect(config.servers).toEqual([]);
    expect(config.problems.map(({ server, field }) => [server, field])).toEqual([["off", "args[0]"]]);
  });

  it("rejects unknown ${x:y} forms instead of turning them into empty strings", () => {
    writeUser({ mcpServers: { a: { command: "x", args: ["${file:/run/secrets/token}"] } } });
    const config = sandbox.load();
    expect(config.servers).toEqual([]);
    expect(messages(config)).toEqual([
      `${userFile()}: server "a": "args[0]": \${file:/run/secrets/token} is not a supported substitution (supported: \${VAR}, \${VAR:-default}, \${env:VAR}, $env:VAR, \${workspaceFolder}, \${userHome}; write $\${ for a literal \${)`,
    ]);
  });
});

describe("loadConfig: bad input", () => {
  it("names the file, line and column of invalid JSON, and still loads the other files", () => {
    writeUser({ mcpServers: { good: { command: "x" } } });
    const project = writeProject('{\n  "mcpServers": {\n    "a": { "command": "x" }\n    "b": {}\n  }\n}');
    const config = sandbox.load();
    expect(Object.keys(serversByName(config))).toEqual(["good"]);
    expect(config.problems).toEqual([
      { level: "error", file: project, message: `${project}: invalid JSON at line 4, column 5: comma expected` },
    ]);
  });

  it("says end of file for what a file ended without, not the line after its last", () => {
    const user = writeUser('{\n  "mcpServers": {}\n');
    expect(messages(sandbox.load())).toEqual([`${user}: invalid JSON at end of file: close brace expected`]);
  });

  it("reports a file that cannot be read, naming it", () => {
    mkdirSync(path.join(sandbox.project, ".mcp.json"));
    writeUser({ mcpServers: { good: { command: "x" } } });
    const shared = path.join(sandbox.project, ".mcp.json");
    const config = sandbox.load();
    expect(Object.keys(serversByName(config))).toEqual(["good"]);
    expect(config.problems).toEqual([{ level: "error", file: shared, message: `${shared}: cannot read the file (EISDIR)` }]);
  });

  it("reports a top level that is not an object, and mcpServers that is not an object", () => {
    writeUser([{ command: "x" }]);
    writeProject({ mcpServers: [{ command: "x" }] });
    const project = path.join(sandbox.project, ".pi", "mcp.json");
    expect(messages(sandbox.load())).toEqual([
      `${project}: "mcpServers": must be an object mapping server names to servers (got an array)`,
      `${userFile()}: the top level must be a JSON object`,
    ]);
  });

  it("skips each broken server with a message naming file, server and field, and loads every other one", () => {
    writeUser({
      mcpServers: {
        wrongType: { command: "x", args: ["--port", 8080] },
        envNumber: { command: "x", env: { DEBUG: true } },
        both: { command: "x", url: "http://127.0.0.1:1/" },
        neither: { args: ["x"] },
        badInclude: { command: "x", includeTools: "ec*" },
        notObject: "npx server",
        emptyCommand: { command: "" },
        badUrl: { url: "not a url" },
        // Quoted without what may carry a credential (user info, query).
        secretUrl: { url: "https://me:pw@ho st/mcp?key=s3cret" },
        ftp: { url: "ftp://example.com/" },
        stdioUrl: { type: "stdio", url: "http://127.0.0.1:1/" },
        httpCommand: { type: "http", command: "x" },
        websocket: { type: "ws", url: "ws://127.0.0.1:1/" },
        badAuth: { url: "http://127.0.0.1:1/", auth: "basic" },
        badExclude: { command: "x", excludeTools: [1] },
        "": { command: "x" },
        ok: { command: "ok" },
      },
    });
    const config = sandbox.load();
    expect(config.servers.map((server) => server.name)).toEqual(["ok"]);
    const f = userFile();
    expect(messages(config)).toEqual([
      `${f}: server "wrongType": "args[1]": must be a string (got the number 8080)`,
      `${f}: server "envNumber": "env.DEBUG": must be a string (got the boolean true)`,
      `${f}: server "both": "url": has both "command" and "url"; a server is either a process (command) or an endpoint (url)`,
      `${f}: server "neither": "command": has "args" but needs "command" (a process) or "url" (an HTTP endpoint)`,
      `${f}: server "badInclude": "includeTools": must be an array of strings (got a string)`,
      `${f}: server "notObject": must be an object (got a string)`,
      `${f}: server "emptyCommand": "command": must be a non-empty string (got an empty string)`,
      `${f}: server "badUrl": "url": "not a url" is not a valid URL`,
      `${f}: server "secretUrl": "url": "https://ho st/mcp?…" is not a valid URL`,
      `${f}: server "ftp": "url": must be an http:// or https:// URL (got ftp:)`,
      `${f}: server "stdioUrl": "type": is "stdio" but the server has a "url" and no "command"`,
      `${f}: server "httpCommand": "type": is an HTTP transport but the server has a "command" and no "url"`,
      `${f}: server "websocket": "type": must be "stdio", "http" (or "streamable-http") or "sse" (got "ws")`,
      `${f}: server "badAuth": "auth": must be "bearer", "oauth" or false (got "basic")`,
      `${f}: server "badExclude": "excludeTools[0]": must be a string (got the number 1)`,
      `${f}: server "": a server needs a non-empty name`,
    ]);
    expect(config.problems.every((problem) => problem.level === "error" && problem.file === f)).toBe(true);
  });

  it("warns about unknown fields and fields of the other transport, and drops them", () => {
    writeUser({
      mcpServers: {
        a: { command: "x", timeoutSec: 30, headers: { A: "b" } },
        b: { url: "http://127.0.0.1:1/mcp", env: { A: "b" }, cwd: "/tmp" },
      },
      servers: {},
    });
    const config = sandbox.load();
    expect(serversByName(config)).toEqual({ a: { enabled: true, command: "x" }, b: { enabled: true, url: "http://127.0.0.1:1/mcp" } });
    const f = userFile();
    expect(config.problems.map(({ level, message }) => `${level} ${message}`)).toEqual([
      `warning ${f}: "servers": unknown top-level field, ignored`,
      `warning ${f}: server "a": "timeoutSec": unknown field, ignored`,
      `warning ${f}: server "a": "headers": only applies to an HTTP server (url); ignored`,
      `warning ${f}: server "b": "env": only applies to a process (command); ignored`,
      `warning ${f}: server "b": "cwd": only applies to a process (command); ignored`,
    ]);
  });

  it("does not let a lower file stand in for a server that is broken in a higher one", () => {
    writeUser({ mcpServers: { db: { command: "user-db" } } });
    writeProject({ mcpServers: { db: { command: "project-db", args: "--fast" } } });
    const config = sandbox.load();
    expect(config.servers).toEqual([]);
    expect(config.problems.map((problem) => problem.field)).toEqual(["args"]);
  });

  it("does not start a server whose project override is broken", () => {
    writeUser({ mcpServers: { db: { command: "user-db" } } });
    writeProject({ mcpServers: { db: { enabled: "no" } } });
    const config = sandbox.load();
    expect(config.servers).toEqual([]);
    expect(config.problems.map((problem) => `${problem.server}.${problem.field}`)).toEqual(["db.enabled"]);
  });

  it("reports an override of a server nobody defines, and one that tries to change the connection", () => {
    writeUser({ mcpServers: { base: { command: "b" } } });
    writeProject({ mcpServers: { ghost: { enabled: false }, base: { env: { A: "1" } } } });
    const project = path.join(sandbox.project, ".pi", "mcp.json");
    const config = sandbox.load();
    expect(config.servers).toEqual([]);
    expect(messages(config)).toEqual([
      `${project}: server "base": "command": has "env" but needs "command" (a process) or "url" (an HTTP endpoint)`,
      `${project}: server "ghost": changes a server (no command or url) that no lower-precedence file defines`,
    ]);
  });

  it("keeps valid settings when one is invalid (a warning: its default applies), and warns about unknown ones", () => {
    writeUser({
      settings: { toolPrefix: "long", idleTimeout: 3, directTools: true, toonEncode: ["a", 1], captureStats: { path: 5 }, colour: "red" },
    });
    const config = sandbox.load();
    expect(config.settings).toEqual({ idleTimeout: 3, directTools: true });
    const f = userFile();
    expect(config.problems.map(({ level, field }) => `${level} ${field}`)).toEqual([
      "warning settings.toolPrefix",
      "warning settings.toonEncode[1]",
      "warning settings.captureStats.path",
      "warning settings.colour",
    ]);
    expect(config.problems[0]!.message).toBe(
      `${f}: "settings.toolPrefix": must be one of "server", "short", "none", "mcp" (got "long"); ignored (the default applies)`,
    );
  });

  it("settings.script: true, false or { enabled, timeoutMs, memoryMb }; a bad field warns and keeps the rest", () => {
    writeUser({ settings: { script: { timeoutMs: 0, memoryMb: 32, active: true } } });
    const config = sandbox.load();
    expect(config.settings).toEqual({ script: { memoryMb: 32 } });
    expect(messages(config)).toEqual([
      `${userFile()}: "settings.script.timeoutMs": must be a number > 0 (got the number 0); ignored (the default applies)`,
      `${userFile()}: "settings.script.active": unknown field, ignored`,
    ]);
    writeUser({ settings: { script: "yes" } });
    expect(messages(sandbox.load())).toEqual([
      `${userFile()}: "settings.script": must be true, false or { "enabled", "timeoutMs", "memoryMb" } (got a string); ignored (the default applies)`,
    ]);
  });

  it("settings.sampling: true, false or { enabled, maxTokens }; maxTokens a whole number > 0; on by default, 4096 tokens", () => {
    writeUser({ settings: { sampling: { maxTokens: 1.5, enabled: true, model: "x" } } });
    const config = sandbox.load();
    expect(config.settings).toEqual({ sampling: { enabled: true } });
    expect(messages(config)).toEqual([
      `${userFile()}: "settings.sampling.maxTokens": must be a whole number > 0 (got the number 1.5); ignored (the default applies)`,
      `${userFile()}: "settings.sampling.model": unknown field, ignored`,
    ]);
    expect(samplingSettings(config.settings)).toEqual({ enabled: true, maxTokens: 4096 });
    writeUser({ settings: { sampling: "off" } });
    expect(messages(sandbox.load())).toEqual([
      `${userFile()}: "settings.sampling": must be true, false or { "enabled", "maxTokens" } (got a string); ignored (the default applies)`,
    ]);
    expect(samplingSettings({})).toEqual({ enabled: true, maxTokens: 4096 });
    expect(samplingSettings({ sampling: false }).enabled).toBe(false);
    expect(samplingSettings({ sampling: { enabled: false } }).enabled).toBe(false);
    expect(samplingSettings({ sampling: { maxTokens: 50 } })).toEqual({ enabled: true, maxTokens: 50 });
  });

  it("never throws, whatever the files hold", () => {
    for (const content of ["null", "42", '"text"', "{", "[]", '{"mcpServers": null}', '{"mcpServers": {"a": null}}', '{"settings": []}']) {
      writeUser(content);
      expect(() => sandbox.load()).not.toThrow();
      expect(sandbox.load().problems.length).toBeGreaterThan(0);
    }
  });
});

describe("loadConfig: skills fields", () => {
  it("reads skills, includeSkills and excludeSkills; a project file may turn a server's skills off alone", () => {
    writeUser({
      mcpServers: { docs: { command: "docs", includeSkills: ["pdf-*"], excludeSkills: ["pdf-old"] }, notes: { command: "notes" } },
    });
    writeProject({ mcpServers: { notes: { skills: false } } });
    const config = sandbox.load({ projectTrusted: true });
    expect(config.problems).toEqual([]);
    expect(serversByName(config)).toEqual({
      notes: { enabled: true, command: "notes", skills: false },
      docs: { enabled: true, command: "docs", includeSkills: ["pdf-*"], excludeSkills: ["pdf-old"] },
    });
  });

  it("a skills value that is not a boolean keeps the skills out, with a warning; a list that is not strings skips the server", () => {
    writeUser({ mcpServers: { docs: { command: "docs", skills: "no" }, bad: { command: "x", excludeSkills: "pdf-*" } } });
    const config = sandbox.load();
    expect(serversByName(config)).toEqual({ docs: { enabled: true, command: "docs", skills: false } });
    expect(messages(config)).toEqual([
      `${userFile()}: server "docs": "skills": must be true or false (got a string); its skills are not offered`,
      `${userFile()}: server "bad": "excludeSkills": must be an array of strings (got a string)`,
    ]);
  });
});

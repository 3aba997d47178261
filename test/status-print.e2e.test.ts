/**
 * `/mcp status`, `/mcp reconnect` and `/mcp tools` as a newcomer first runs them: in print mode (`pi -p`), where
 * there is no later, with broken servers, a broken `--mcp-config` file, an agent dir of its own, a VS Code server
 * that needs an input. In the real CLI of both hosts.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { currentHost, REPO_ROOT } from "./helpers/hosts.ts";
import { mcpDirs, type McpDirs, trustProject } from "./helpers/mcp-setup.ts";
import { runPrint } from "./helpers/pi-print.ts";

const host = currentHost();
const FIXTURE = join(REPO_ROOT, "test/fixtures/servers/stdio-server.mjs");
const fixture = (env: Record<string, string> = {}, fields: Record<string, unknown> = {}) => ({
  command: process.execPath,
  args: [FIXTURE],
  env,
  ...fields,
});

let dirs: McpDirs | undefined;
afterEach(async () => {
  await dirs?.cleanup();
  dirs = undefined;
});

/** Pi keeps stdout for the answer: in print mode command output and warnings arrive on stderr. */
async function print(config: Record<string, unknown>, prompts: string[], args: string[] = []) {
  dirs = await mcpDirs(config);
  const result = await runPrint({ extensions: [REPO_ROOT], script: [], prompts, agentDir: dirs.agentDir, cwd: dirs.cwd, args });
  expect(result.exitCode).toBe(0);
  return result.stderr;
}

describe(`/mcp in print mode on Pi ${host.version}`, () => {
  test("status waits for the startup: a missing command, a refused URL and a crash at start show as failed, with why", async () => {
    const output = await print(
      {
        mcpServers: {
          good: fixture(),
          missing: { command: "pi-mcp-no-such-command" },
          refused: { url: "http://127.0.0.1:1/mcp" },
          crash: fixture({ FIXTURE_MODE: "exit-at-start" }),
        },
      },
      ["/mcp status"],
    );
    expect(output).not.toContain("connecting");
    expect(output).toMatch(/○ good: stopped · lazy · stdio · MCP 2025-11-25 last time · \d+ tools \(listed just now\)\n/);
    expect(output).toMatch(
      /✗ missing: failed · lazy · [^\n]+\n(    [^\n]+\n)+    last error: [^\n]*command not found: pi-mcp-no-such-command/,
    );
    expect(output).toMatch(
      /✗ refused: failed · lazy · [^\n]+\n    url: http:\/\/127\.0\.0\.1:1\/mcp\n(    [^\n]+\n)*    last error: [^\n]*cannot reach/,
    );
    expect(output).toMatch(/✗ crash: failed · lazy · [^\n]+\n(    [^\n]+\n)+    last error: [^\n]*exited before it was ready/);
  });

  test("reconnect, status and /mcp tools count the same tools (resource tools too); /mcp tools lists servers as status does", async () => {
    const output = await print(
      {
        mcpServers: {
          // Listed last (it starts slowly), but first in the file: every command lists it first.
          slow: fixture({ FIXTURE_START_DELAY_MS: "800" }, { lifecycle: "eager" }),
          withResources: fixture({ FIXTURE_RESOURCES: "ok" }, { lifecycle: "eager" }),
        },
      },
      ["/mcp reconnect", "/mcp status", "/mcp tools"],
    );
    expect(output).not.toContain("closed while it was still connecting");
    const reconnected = /✓ withResources: connected \((\d+) tools\)/.exec(output)?.[1];
    const status = /✓ withResources: connected · eager · stdio · MCP 2025-11-25 · (\d+) tools · pid/.exec(output)?.[1];
    const listed = /\nwithResources \((\d+) tools\):/.exec(output)?.[1];
    expect(reconnected).toBeDefined();
    expect([status, listed]).toEqual([reconnected, reconnected]);
    expect(output).toMatch(/withResources__get_[^\n]+\n/); // the resource tools are among them
    const order = (pattern: RegExp) => [...output.matchAll(pattern)].map((match) => match[1]);
    expect(order(/^✓ (\w+): connected \(/gm)).toEqual(["slow", "withResources"]);
    expect(order(/^[✓○✗] (\w+): connected ·/gm)).toEqual(["slow", "withResources"]);
    expect(order(/^(\w+) \(\d+ tools\):$/gm)).toEqual(["slow", "withResources"]);
  });

  test("a --mcp-config file with a syntax error: its error once, no false 'does not exist', status names that file", async () => {
    dirs = await mcpDirs({});
    const broken = join(dirs.cwd, "broken.json");
    await writeFile(broken, '{ "mcpServers": { "a": { "command": "x" } ');
    const result = await runPrint({
      extensions: [REPO_ROOT],
      script: [],
      prompts: ["/mcp status"],
      agentDir: dirs.agentDir,
      cwd: dirs.cwd,
      args: ["--mcp-config", broken],
    });
    const syntaxError = `${broken}: invalid JSON at end of file: close brace expected`;
    expect(result.stderr).not.toContain("does not exist");
    expect(result.stderr).toContain(`[mcp] MCP config: ${syntaxError}\n`);
    expect(result.stderr).toContain(
      `MCP: no servers loaded (see the errors below). Your config file: ${broken}\nConfig errors:\n  ${syntaxError}\n`,
    );
  });

  test("with no servers, status names the config file of Pi's agent dir ($PI_CODING_AGENT_DIR), not ~/.pi/agent", async () => {
    const output = await print({}, ["/mcp status"]);
    expect(output).toContain("MCP: no servers configured. Three ways to add one:\n");
    expect(output).toContain(
      `  3. Add by command or URL: /mcp add <name> <command> [args…] or /mcp add <name> <url> (or edit ${join(dirs!.agentDir, "mcp.json")})\n`,
    );
  });

  test("a VS Code server that needs an ${input:…} is listed as skipped, with the reason", async () => {
    dirs = await mcpDirs({ mcpServers: { good: fixture() }, imports: ["vscode"] });
    const vscodeFile = join(dirs.cwd, ".vscode", "mcp.json");
    await mkdir(join(dirs.cwd, ".vscode"));
    await writeFile(
      vscodeFile,
      JSON.stringify({ servers: { github: { command: "github-mcp", env: { TOKEN: "${input:github-token}" } } } }),
    );
    await trustProject(dirs); // a project's VS Code file is the project's: read once the user trusts it
    const result = await runPrint({
      extensions: [REPO_ROOT],
      script: [],
      prompts: ["/mcp status"],
      agentDir: dirs.agentDir,
      cwd: dirs.cwd,
    });
    expect(result.stderr).toContain("MCP servers: 1 enabled, 1 skipped\n");
    expect(result.stderr).toContain(
      `\n✗ github: skipped\n    warning: ${vscodeFile}: server "github": "env.TOKEN": uses \${input:github-token}`,
    );
  });
});

/**
 * MCP Apps where no browser can open, in the real Pi of this run's host:
 * - `pi -p`: the run ends with its reply, so no page is served and the browser is not started; one line on stderr
 *   says the tool's view cannot be shown in print mode. With `settings.apps: false` nothing of it happens: no line,
 *   and servers are not told the client renders views.
 * - a session with Pi's UI on a machine without a display and without $BROWSER, and one whose $BROWSER fails: the
 *   user is told plainly that no browser could be opened, and why, with the page's address, which works.
 */
import { existsSync } from "node:fs";
import { chmod, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { type ModelReply, type ModelRequest, offeredToolNames } from "./helpers/faux-script.ts";
import { currentHost, REPO_ROOT } from "./helpers/hosts.ts";
import { type McpDirs, mcpDirs } from "./helpers/mcp-setup.ts";
import { runPrint } from "./helpers/pi-print.ts";
import { startSession } from "./helpers/pi-session.ts";
import { processesWithMarker } from "./helpers/processes.ts";

const host = currentHost();
const BASIC = join(REPO_ROOT, "node_modules/@modelcontextprotocol/server-basic-vanillajs/dist/index.js");
const VIEWS = join(REPO_ROOT, "test/fixtures/servers/views-server.mjs");
const PRINT_LINE =
  /^\[mcp\] MCP: get-time \(MCP server "basic"\) has a view, which print mode cannot show: the run ends with its reply, before a page could be opened \(in Pi's TUI it opens in your browser\)$/m;
const ADDRESS = /open (http:\/\/127\.0\.0\.1:\d+\/[\w-]{32}\/) in a browser on this machine; it works while this Pi session runs$/;

let dirs: McpDirs | undefined;
afterEach(async () => {
  await dirs?.cleanup();
  dirs = undefined;
});

/** The model loads the tools, then calls them (through McpCall where the host shows new tools only from the next prompt). */
function callsOf(tools: string[]): ModelReply[] {
  const call = (name: string) =>
    host.refreshesToolsEachTurn ? { name, arguments: {} } : { name: "McpCall", arguments: { tool: name, arguments: {} } };
  return [
    { toolCalls: [{ name: "ToolSearch", arguments: { query: `select:${tools.join(",")}` } }] },
    { toolCalls: tools.map(call) },
    "done",
  ];
}

async function printRun(settings: Record<string, unknown>) {
  dirs = await mcpDirs({
    settings,
    mcpServers: {
      basic: { command: process.execPath, args: [BASIC, "--stdio"] },
      views: { command: process.execPath, args: [VIEWS] },
    },
  });
  const browser = join(dirs.cwd, "browser.sh");
  await writeFile(browser, `#!/bin/sh\necho "$1" >> "${join(dirs.cwd, "opened.log")}"\n`);
  await chmod(browser, 0o755);
  const result = await runPrint({
    extensions: [REPO_ROOT],
    script: callsOf(["basic__get-time", "views__client_caps"]),
    prompts: ["what time is it?"],
    agentDir: dirs.agentDir,
    cwd: dirs.cwd,
    env: { BROWSER: browser },
  });
  expect(result.exitCode).toBe(0);
  expect(existsSync(join(dirs.cwd, "opened.log"))).toBe(false);
  expect(result.stderr).not.toContain("http://127.0.0.1");
  expect(await processesWithMarker(dirs.agentDir)).toEqual([]);
  // The two calls run side by side: their results come in either order.
  const time = result.toolResults.find((call) => /^\d{4}-\d\d-\d\dT/.test(call.text));
  const caps = result.toolResults.find((call) => call.text.startsWith("{"));
  expect(time?.isError).toBe(false);
  return { stderr: result.stderr, capabilities: JSON.parse(caps!.text) as Record<string, unknown> };
}

describe(`MCP Apps without a browser, on Pi ${host.version}`, () => {
  test("print mode: the tool's result as ever, and one line saying its view cannot be shown, no dead address", async () => {
    const { stderr, capabilities } = await printRun({});
    expect(stderr.match(new RegExp(PRINT_LINE, "gm"))).toHaveLength(1);
    expect(capabilities).toHaveProperty(["extensions", "io.modelcontextprotocol/ui"]);
  });

  test("settings.apps false: no view, no line, and servers are not told the client renders views", async () => {
    const { stderr, capabilities } = await printRun({ apps: false });
    expect(stderr).not.toContain("has a view");
    expect(capabilities).not.toHaveProperty("extensions");
  });

  test("no display and no $BROWSER, then a $BROWSER that fails: said plainly, with the address, which works", async () => {
    const saved = Object.fromEntries(ENVIRONMENT.map((name) => [name, process.env[name]]));
    for (const name of ENVIRONMENT) delete process.env[name];
    try {
      const headless = await viewNotice();
      expect(headless).toMatch(
        /^MCP: no browser can be opened here \(no display: [^)]*\) for the view of get-time \(MCP server "basic"\): /,
      );
      const failing = join(dirs!.cwd, "failing-browser.sh");
      await writeFile(failing, "#!/bin/sh\nexit 3\n");
      await chmod(failing, 0o755);
      process.env.BROWSER = failing;
      const failed = await viewNotice();
      expect(
        failed.startsWith(
          `MCP: no browser could be opened for the view of get-time (MCP server "basic") (${failing} exited with status 3): `,
        ),
      ).toBe(true);
    } finally {
      for (const name of ENVIRONMENT) {
        if (saved[name] === undefined) delete process.env[name];
        else process.env[name] = saved[name];
      }
    }
  });
});

/** What tells a browser opener where to open (or that it would not reach the user): unset for the headless case. */
const ENVIRONMENT = ["BROWSER", "DISPLAY", "WAYLAND_DISPLAY", "SSH_CONNECTION", "SSH_TTY", "WSL_DISTRO_NAME"];

/** A session with Pi's UI calls get-time: what it told the user about the view, checked to give a working address. */
async function viewNotice(): Promise<string> {
  dirs ??= await mcpDirs({ mcpServers: { basic: { command: process.execPath, args: [BASIC, "--stdio"] } } });
  const callGetTime = (request: ModelRequest) =>
    offeredToolNames(request).includes("basic__get-time")
      ? { toolCalls: [{ name: "basic__get-time", arguments: {} }] }
      : { toolCalls: [{ name: "McpCall", arguments: { tool: "basic__get-time", arguments: {} } }] };
  const pi = await startSession({
    extensions: ["pi-mcp-adapter.ts"],
    agentDir: dirs.agentDir,
    cwd: dirs.cwd,
    script: [{ toolCalls: [{ name: "ToolSearch", arguments: { query: "select:basic__get-time" } }] }, callGetTime, "Shown."],
  });
  try {
    await pi.prompt("what time is it on the server?");
    expect(pi.toolResults.at(-1)?.isError).toBe(false);
    const notices = () =>
      pi.ui.flatMap((entry) => (entry.kind === "notify" && entry.message.includes("view of get-time") ? [entry.message] : []));
    await expect.poll(notices, { timeout: 10_000 }).toHaveLength(1);
    const notice = notices()[0]!;
    const address = ADDRESS.exec(notice)?.[1];
    expect(address, notice).toBeDefined();
    expect((await fetch(address!)).status).toBe(200);
    return notice;
  } finally {
    await pi.dispose();
  }
}

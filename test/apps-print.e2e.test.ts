/**
 * MCP Apps where no browser can open, in the real `pi -p` of this run's host: the view's page is served all the
 * same, the browser is not started, and one line on stderr gives its address. With `settings.apps: false` nothing
 * of it happens: no line, no page, and servers are not told the client renders views.
 */
import { existsSync } from "node:fs";
import { chmod, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import type { ModelReply } from "./helpers/faux-script.ts";
import { currentHost, REPO_ROOT } from "./helpers/hosts.ts";
import { type McpDirs, mcpDirs } from "./helpers/mcp-setup.ts";
import { runPrint } from "./helpers/pi-print.ts";
import { processesWithMarker } from "./helpers/processes.ts";

const host = currentHost();
const BASIC = join(REPO_ROOT, "node_modules/@modelcontextprotocol/server-basic-vanillajs/dist/index.js");
const VIEWS = join(REPO_ROOT, "test/fixtures/servers/views-server.mjs");
const ADDRESS_LINE =
  /^\[mcp\] MCP: the view of get-time \(MCP server "basic"\) is at (http:\/\/127\.0\.0\.1:\d+\/[\w-]{32}\/) \(open it in a browser on this machine; it works while this Pi session runs\)$/m;

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
  expect(await processesWithMarker(dirs.agentDir)).toEqual([]);
  // The two calls run side by side: their results come in either order.
  const time = result.toolResults.find((call) => /^\d{4}-\d\d-\d\dT/.test(call.text));
  const caps = result.toolResults.find((call) => call.text.startsWith("{"));
  expect(time?.isError).toBe(false);
  return { stderr: result.stderr, capabilities: JSON.parse(caps!.text) as Record<string, unknown> };
}

describe(`MCP Apps without a browser, on Pi ${host.version}`, () => {
  test("print mode: the tool's result as ever, and one line with the view's address instead of a browser", async () => {
    const { stderr, capabilities } = await printRun({});
    expect(stderr.match(new RegExp(ADDRESS_LINE, "gm"))).toHaveLength(1);
    expect(capabilities).toHaveProperty(["extensions", "io.modelcontextprotocol/ui"]);
  });

  test("settings.apps false: no view, no line, and servers are not told the client renders views", async () => {
    const { stderr, capabilities } = await printRun({ apps: false });
    expect(stderr).not.toContain("MCP: the view");
    expect(capabilities).not.toHaveProperty("extensions");
  });
});

/**
 * Pi 1.x's `codemode` scripts call the adapter's MCP tools whether or not they are loaded, through the adapter's
 * executor: a lazy server that is not running starts for the call, an `approveTools` tool still asks (and is refused
 * where no one can answer). Real Pi (SDK session; the CLI in print mode), server-everything, a scripted model.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import type { ScriptStep } from "./helpers/faux-script.ts";
import { currentHost } from "./helpers/hosts.ts";
import { mcpDirs, REAL_SERVERS } from "./helpers/mcp-setup.ts";
import { runPrint } from "./helpers/pi-print.ts";
import { type PiSession, startSession } from "./helpers/pi-session.ts";
import { descendantProcesses } from "./helpers/processes.ts";

const host = currentHost();
const hasCodemode = !host.version.startsWith("0.");
const EVERYTHING_MARKER = "server-everything/dist/index.js";
const CONFIG = {
  mcpServers: { everything: { ...REAL_SERVERS.everything, lifecycle: "lazy", approveTools: ["get-sum"] } },
};
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const script = (code: string) => ({ toolCalls: [{ name: "codemode", arguments: { code } }] }) satisfies ScriptStep;
const ECHO_SCRIPT = 'return await tools.everything__echo({ message: "from a script" });';
const SUM_SCRIPT = "return await tools.everything__get_sum({ a: 2, b: 3 });";

async function session(steps: ScriptStep[], answer?: string): Promise<PiSession> {
  const dirs = await mcpDirs(CONFIG);
  cleanups.push(dirs.cleanup);
  const pi = await startSession({
    extensions: ["test/fixtures/extensions/codemode.ts", "pi-mcp-adapter.ts"],
    agentDir: dirs.agentDir,
    cwd: dirs.cwd,
    script: steps,
    dialogs: { select: () => answer },
  });
  cleanups.push(() => pi.dispose());
  return pi;
}

/** Startup listed the lazy server (no cache yet) and ended it again. */
async function listedAndStopped(pi: PiSession): Promise<void> {
  await expect.poll(async () => (await pi.command("/mcp status")).text, { timeout: 30_000 }).toMatch(/everything.*\b\d+ tools\b/s);
  await expect.poll(() => descendantProcesses(EVERYTHING_MARKER), { timeout: 10_000 }).toEqual([]);
}

describe.skipIf(!hasCodemode)(`codemode over the adapter's MCP tools on Pi ${host.version}`, () => {
  test("a script calls a tool of a lazy server that is not running and not loaded: it starts, the call returns", async () => {
    const pi = await session([script(ECHO_SCRIPT), "done", script(ECHO_SCRIPT), "done again"]);
    await listedAndStopped(pi);
    expect(pi.activeToolNames()).not.toContain("everything__echo");

    await pi.prompt("echo through a script");
    // The nested call is recorded too: as a call of the MCP tool, with the script's call id and `/1`.
    expect(pi.toolResults.map(({ toolName, isError }) => ({ toolName, isError }))).toEqual([
      { toolName: "everything__echo", isError: false },
      { toolName: "codemode", isError: false },
    ]);
    expect(pi.toolResults[1]!.text).toContain("Echo: from a script");
    expect(await descendantProcesses(EVERYTHING_MARKER)).toHaveLength(1);
    expect(pi.activeToolNames()).not.toContain("everything__echo");

    // A new Pi: the tool is registered from the cache at startup, the server again not running.
    await pi.restart();
    await expect.poll(() => descendantProcesses(EVERYTHING_MARKER), { timeout: 10_000 }).toEqual([]);
    await pi.prompt("again");
    expect(pi.toolResults.at(-1)).toMatchObject({
      toolName: "codemode",
      isError: false,
      text: expect.stringContaining("Echo: from a script"),
    });
  }, 90_000);

  test("an approveTools tool called from a script still asks; allowed, it runs", async () => {
    const pi = await session([script(SUM_SCRIPT), "done"], "Allow once");
    await listedAndStopped(pi);
    await pi.prompt("add through a script");
    const asked = pi.ui.filter((record) => record.kind === "dialog" && record.dialog === "select");
    expect(asked).toEqual([expect.objectContaining({ title: expect.stringContaining("get-sum"), answer: "Allow once" })]);
    expect(pi.toolResults.at(-1)).toMatchObject({ toolName: "codemode", isError: false, text: expect.stringContaining("5") });
  }, 90_000);

  test("with no one to ask (print mode), the script's call is refused and says why", async () => {
    const dirs = await mcpDirs(CONFIG);
    cleanups.push(dirs.cleanup);
    await writeFile(
      join(dirs.agentDir, "settings.json"),
      JSON.stringify({ retry: { enabled: false }, cacheWarming: "off", defaultTools: ["+codemode"] }),
    );
    const result = await runPrint({
      extensions: ["pi-mcp-adapter.ts"],
      agentDir: dirs.agentDir,
      cwd: dirs.cwd,
      script: [script(SUM_SCRIPT), "done"],
      prompts: ["add through a script"],
      timeoutMs: 60_000,
    });
    expect(result.exitCode).toBe(0);
    // The nested call is recorded too (Pi reports it with the script's call id and `/1`).
    expect(result.toolResults.filter((record) => record.toolName === "codemode")).toEqual([
      expect.objectContaining({
        toolName: "codemode",
        isError: true,
        text: expect.stringContaining("needs the user's approval, and there is no one to ask"),
      }),
    ]);
  }, 90_000);

  test("a script gets the whole result, the server's structured content in it, and the namespace's description; a disabled server's tools leave the scripts' reach", async () => {
    const dirs = await mcpDirs({
      mcpServers: { everything: { ...CONFIG.mcpServers.everything, description: "Every MCP feature, for tests" } },
    });
    cleanups.push(dirs.cleanup);
    const reach = 'ALL_TOOLS.filter((tool) => tool.name.startsWith("everything__")).length';
    const weather = [
      'const weather = await tools.everything__get_structured_content({ location: "New York" });',
      'const space = await describeNamespace("everything");',
      // The server's output schema is in the tool's declaration: its result fields are named there.
      'const declared = JSON.stringify(await describeTool("everything__get_structured_content")).includes("humidity");',
      `return [typeof weather.structuredContent.temperature, weather.content[0].type, space.description, declared, ${reach}].join(" | ");`,
    ].join("\n");
    const pi = await startSession({
      extensions: ["test/fixtures/extensions/codemode.ts", "pi-mcp-adapter.ts"],
      agentDir: dirs.agentDir,
      cwd: dirs.cwd,
      script: [script(weather), "done", script(`return "reach " + ${reach};`), "done again"],
      dialogs: { select: (_title, options) => options[0] },
    });
    cleanups.push(() => pi.dispose());
    await listedAndStopped(pi);

    await pi.prompt("the weather through a script");
    expect(pi.toolResults.at(-1)).toMatchObject({ toolName: "codemode", isError: false });
    expect(pi.toolResults.at(-1)!.text).toMatch(/number \| text \| Every MCP feature, for tests \| true \| [1-9]\d*/);

    expect((await pi.command("/mcp disable everything")).text).toContain('Disabled MCP server "everything"');
    await pi.prompt("what can a script reach now");
    expect(pi.toolResults.at(-1)).toMatchObject({ toolName: "codemode", isError: false, text: expect.stringContaining("reach 0") });
  }, 90_000);

  test("one search tool: Pi's tool_search, active with nothing but our tools to load, is switched off; ToolSearch stays", async () => {
    process.env.PI_TEST_TOOL_SEARCH = "1";
    cleanups.push(async () => void delete process.env.PI_TEST_TOOL_SEARCH);
    const pi = await session([]);
    await listedAndStopped(pi);
    await pi.restart(); // the tools known at startup (from the cache), so tool_search could load them
    expect(pi.activeToolNames()).toEqual(expect.arrayContaining(["codemode", "ToolSearch"]));
    expect(pi.activeToolNames()).not.toContain("tool_search");
    expect(pi.ui).toContainEqual({
      kind: "notify",
      level: "info",
      message: "MCP: Pi's tool_search is off in this session: ToolSearch finds the same MCP tools.",
    });
  }, 90_000);
});

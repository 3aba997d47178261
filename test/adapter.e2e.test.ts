/**
 * The adapter in the real Pi (the host of this vitest run), with real MCP servers (server-everything,
 * server-memory) and a scripted model.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { callEcho, ECHO_MESSAGE, ECHO_TOOL, echoSteps } from "./fixtures/faux-scripts/mcp-echo-steps.ts";
import { type ModelRequest, offeredToolNames, type ScriptStep } from "./helpers/faux-script.ts";
import { currentHost } from "./helpers/hosts.ts";
import { type McpDirs, mcpDirs, REAL_SERVERS } from "./helpers/mcp-setup.ts";
import { type PiSession, startSession } from "./helpers/pi-session.ts";
import { type PrintResult, runPrint, runRpc } from "./helpers/pi-print.ts";
import { CACHE_VERSION } from "../metadata-cache.ts";
import { descendantProcesses } from "./helpers/processes.ts";

const ENTRY = "pi-mcp-adapter.ts";
const host = currentHost();
const BUILTINS = ["read", "bash", "edit", "write"];
const ADAPTER_TOOLS = ["ToolSearch", ...(host.refreshesToolsEachTurn ? [] : ["McpCall"])];
const EVERYTHING_MARKER = "server-everything/dist/index.js";
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function dirsWith(servers: Record<string, unknown>, settings: Record<string, unknown> = {}): Promise<McpDirs> {
  const dirs = await mcpDirs({ mcpServers: servers, settings });
  cleanups.push(dirs.cleanup);
  return dirs;
}

async function session(dirs: McpDirs, script: ScriptStep[] = []): Promise<PiSession> {
  const pi = await startSession({ extensions: [ENTRY], agentDir: dirs.agentDir, cwd: dirs.cwd, script });
  cleanups.push(() => pi.dispose());
  return pi;
}

function withEnv(name: string, value: string): void {
  const previous = process.env[name];
  process.env[name] = value;
  cleanups.push(async () => {
    if (previous === undefined) delete process.env[name];
    else process.env[name] = previous;
  });
}

async function readCache(agentDir: string): Promise<{ version: number; servers: Record<string, { tools: { name: string }[] }> }> {
  return JSON.parse(await readFile(join(agentDir, "mcp-cache.json"), "utf8"));
}

const search = (query: string): ScriptStep => ({ toolCalls: [{ name: "ToolSearch", arguments: { query } }] });
const toolSummary = (pi: PiSession) => pi.toolResults.map((result) => [result.toolName, result.isError]);

describe(`adapter on Pi ${host.version}`, () => {
  test("the first request has builtins + ToolSearch only; search then call within one prompt; nothing left after shutdown", async () => {
    const dirs = await dirsWith({ everything: REAL_SERVERS.everything });
    const pi = await session(dirs, echoSteps);
    await pi.prompt("echo something");

    expect(offeredToolNames(pi.requests[0]!)).toEqual([...BUILTINS, ...ADAPTER_TOOLS]);
    expect(pi.requests[0]!.tools.find((tool) => tool.name === "ToolSearch")?.description).toContain("everything");
    expect(toolSummary(pi)).toEqual([
      ["ToolSearch", false],
      [host.refreshesToolsEachTurn ? ECHO_TOOL : "McpCall", false],
    ]);
    expect(pi.toolResults[0]!.text).toContain(ECHO_TOOL);
    expect(pi.toolResults[1]!.text).toBe(`Echo: ${ECHO_MESSAGE}`);

    await pi.dispose();
    const cache = await readCache(dirs.agentDir);
    expect(cache.version).toBe(CACHE_VERSION);
    expect(cache.servers.everything!.tools.map((tool) => tool.name)).toContain("echo");
    expect(await descendantProcesses(EVERYTHING_MARKER)).toEqual([]);
  });

  test("a tool loaded in one prompt is called directly in the next; captureStats counts the calls", async () => {
    const dirs = await dirsWith({ everything: REAL_SERVERS.everything }, { captureStats: true });
    const pi = await session(dirs, [...echoSteps, callEcho, "Again."]);
    await pi.prompt("echo something");
    await pi.prompt("echo it again");
    expect(offeredToolNames(pi.requests[3]!)).toContain(ECHO_TOOL);
    expect(pi.toolResults.at(-1)).toMatchObject({ toolName: ECHO_TOOL, isError: false, text: `Echo: ${ECHO_MESSAGE}` });
    expect((await pi.command("/mcp status")).text).toMatch(/calls this session: 2, \d+ ms on average/);

    await pi.dispose();
    const stats = JSON.parse(await readFile(join(dirs.agentDir, "mcp-stats.json"), "utf8"));
    expect(stats.tools["everything/echo"]).toMatchObject({ calls: 2, errors: 0 });
  });

  test("select: loads exact names from several servers, and says which names it does not know", async () => {
    const dirs = await dirsWith({ everything: REAL_SERVERS.everything, memory: REAL_SERVERS.memory });
    const pi = await session(dirs, [search("select:everything__echo,memory__read_graph,no_such_tool"), "ok"]);
    await pi.prompt("load two tools");

    const result = pi.toolResults[0]!;
    expect(result.isError).toBe(false);
    expect(result.details).toMatchObject({ loaded: ["everything__echo", "memory__read_graph"] });
    expect(result.text).toContain('No MCP tool is named "no_such_tool"');
    expect(pi.activeToolNames()).toEqual(expect.arrayContaining(["everything__echo", "memory__read_graph"]));
  });

  test("MCP_DIRECT_TOOLS: the next session offers the tool at the first request from the cache, starting no server until the call", async () => {
    const dirs = await dirsWith({ everything: REAL_SERVERS.everything });
    const first = await session(dirs, [search("echo"), "learned"]);
    await first.prompt("learn the tools");
    await first.dispose();

    withEnv("MCP_DIRECT_TOOLS", "everything/echo");
    const pi = await session(dirs, [callEcho, "done"]);
    expect(await descendantProcesses(EVERYTHING_MARKER)).toEqual([]);
    await pi.prompt("echo now");

    expect(offeredToolNames(pi.requests[0]!)).toEqual([...BUILTINS, ECHO_TOOL, ...ADAPTER_TOOLS]);
    expect(pi.toolResults).toMatchObject([{ toolName: ECHO_TOOL, isError: false, text: `Echo: ${ECHO_MESSAGE}` }]);
    expect(await descendantProcesses(EVERYTHING_MARKER)).toHaveLength(1);
  });

  test("a killed server is started again by the next call", async () => {
    const dirs = await dirsWith({ everything: REAL_SERVERS.everything });
    withEnv("MCP_DIRECT_TOOLS", "everything");
    const learn = await session(dirs, [search("echo"), "learned"]);
    await learn.prompt("learn the tools");
    await learn.dispose();

    const pi = await session(dirs, [callEcho, "first", callEcho, "second"]);
    await pi.prompt("echo");
    const [server] = await descendantProcesses(EVERYTHING_MARKER);
    expect(server).toBeDefined();
    process.kill(server!.pid, "SIGKILL");
    // As in real life, the next call comes after the process is gone (not within the microseconds of the kill).
    await expect.poll(async () => (await descendantProcesses(EVERYTHING_MARKER)).map((info) => info.pid)).not.toContain(server!.pid);
    await pi.prompt("echo again");

    expect(toolSummary(pi)).toEqual([
      [ECHO_TOOL, false],
      [ECHO_TOOL, false],
    ]);
    const now = await descendantProcesses(EVERYTHING_MARKER);
    expect(now.map((process) => process.pid)).not.toContain(server!.pid);
    expect(now).toHaveLength(1);
  });

  test("/mcp status reports every server: state, lifecycle, tools, source file, and config errors", async () => {
    const dirs = await dirsWith({
      everything: { ...REAL_SERVERS.everything, lifecycle: "eager" },
      memory: REAL_SERVERS.memory,
      off: { ...REAL_SERVERS.memory, enabled: false },
      broken: { command: "definitely-not-a-command-xyz" },
      invalid: { command: "x", url: "http://127.0.0.1:1/mcp" },
    });
    const pi = await session(dirs, [search("memory graph"), "ok"]);
    await pi.prompt("find memory tools"); // waits for startup: everything connected, memory and broken tried
    const { text } = await pi.command("/mcp status");

    const configFile = join(dirs.agentDir, "mcp.json");
    expect(text).toMatch(
      /✓ everything: connected · eager · stdio · MCP 2025-11-25 · \d+ tools · pid \d+\n    command: \S+ \S+server-everything\S+ stdio\n/,
    );
    expect(text).toMatch(
      /○ memory: stopped · lazy · stdio · MCP 2025-11-25 last time · \d+ tools \(listed (just now|\d+ min ago)\)\n    command: [^\n]+ · env: MEMORY_FILE_PATH\n/,
    );
    expect(text).toContain("- off: disabled");
    expect(text).toMatch(/✗ broken: failed · lazy/);
    expect(text).toContain("last error:");
    expect(text).toContain(`source: ${configFile} (user)`);
    expect(text).toMatch(/\n✗ invalid: skipped\n    error: [^\n]+: server "invalid": /);
  });

  test("print mode with the real pi CLI: search and call within one prompt; /mcp status prints", async () => {
    const result = await findAndCallWithCli(runPrint);
    expect(result.stdout).toBe("Echoed.\n");
    // Pi sends what extensions write to stdout to stderr in print mode, keeping stdout for the answer.
    expect(result.stderr).toMatch(/✓ everything: connected · lazy · stdio · MCP 2025-11-25 · \d+ tools · pid \d+\n    command: /);
  });
});

/** The real CLI in a non-interactive mode: one prompt that finds and calls echo, then `/mcp status`; nothing left after. */
async function findAndCallWithCli(run: typeof runPrint): Promise<PrintResult> {
  const dirs = await dirsWith({ everything: REAL_SERVERS.everything });
  const result = await run({
    extensions: [ENTRY],
    script: "test/fixtures/faux-scripts/mcp-echo.ts",
    prompts: ["echo something", "/mcp status"],
    agentDir: dirs.agentDir,
    cwd: dirs.cwd,
  });
  expect(result.exitCode).toBe(0);
  expect(result.toolResults.map((record) => [record.toolName, record.isError])).toEqual([
    ["ToolSearch", false],
    [host.refreshesToolsEachTurn ? ECHO_TOOL : "McpCall", false],
  ]);
  expect(result.toolResults[1]!.text).toBe(`Echo: ${ECHO_MESSAGE}`);
  expect(await descendantProcesses(EVERYTHING_MARKER)).toEqual([]);
  return result;
}

describe(`adapter across /reload on Pi ${host.version}`, () => {
  test("tools loaded before a reload stay loaded; the old servers are ended, one process serves the new session", async () => {
    const dirs = await dirsWith({ everything: { ...REAL_SERVERS.everything, lifecycle: "keep-alive" } });
    const pi = await session(dirs, [search("select:everything__echo"), "loaded", callEcho, "called"]);
    await pi.prompt("load echo");
    const [before] = await descendantProcesses(EVERYTHING_MARKER);
    expect(before).toBeDefined();

    await pi.reload();
    await pi.prompt("echo after the reload");

    expect(offeredToolNames(pi.requests[2]!)).toEqual(expect.arrayContaining([ECHO_TOOL, "ToolSearch"]));
    expect(offeredToolNames(pi.requests[2]!).filter((name) => name.startsWith("everything__"))).toEqual([ECHO_TOOL]);
    expect(pi.toolResults.at(-1)).toMatchObject({ toolName: ECHO_TOOL, isError: false });
    const after = await descendantProcesses(EVERYTHING_MARKER);
    expect(after).toHaveLength(1);
    expect(after[0]!.pid).not.toBe(before!.pid);
  });
});

describe(`adapter in RPC mode on Pi ${host.version}`, () => {
  test("the real pi CLI in --mode rpc: search and call within one prompt; notifications and status reach the client", async () => {
    const result = await findAndCallWithCli(runRpc);
    const uiRequests = (result.rpcLines ?? []).filter((line) => line.type === "extension_ui_request");
    expect(uiRequests).toContainEqual(
      expect.objectContaining({ method: "setStatus", statusKey: "mcp", statusText: expect.stringMatching(/^MCP \d\/1 up · \d+ tools$/) }),
    );
    expect(uiRequests).toContainEqual(
      expect.objectContaining({
        method: "notify",
        message: expect.stringMatching(/✓ everything: connected · lazy · stdio · MCP 2025-11-25 · \d+ tools/),
      }),
    );
  });
});

describe(`adapter result shaping on Pi ${host.version}`, () => {
  test("toonEncode: a listed server's JSON results reach the model as shorter TOON; others stay JSON", async () => {
    const dirs = await dirsWith({ everything: REAL_SERVERS.everything, memory: REAL_SERVERS.memory }, { toonEncode: ["memory"] });
    const graph = { entities: [{ name: "Ada", entityType: "person", observations: ["wrote the first program"] }] };
    const callLoaded = (name: string, args: Record<string, unknown>) => (request: ModelRequest) =>
      offeredToolNames(request).includes(name)
        ? { toolCalls: [{ name, arguments: args }] }
        : { toolCalls: [{ name: "McpCall", arguments: { tool: name, arguments: args } }] };
    const pi = await session(dirs, [
      search("select:memory__create_entities,memory__read_graph,everything__get-structured-content"),
      callLoaded("memory__create_entities", graph),
      callLoaded("memory__read_graph", {}),
      callLoaded("everything__get-structured-content", { location: "New York" }),
      "done",
    ]);
    await pi.prompt("remember and read back");

    const [, created, read, structured] = pi.toolResults;
    expect([created!.isError, read!.isError, structured!.isError]).toEqual([false, false, false]);
    expect(read!.details).toMatchObject({ toonEncoded: true });
    expect(read!.text).toContain("entities[1]");
    expect(read!.text).not.toContain('"entities"');
    expect(structured!.details).toMatchObject({ toonEncoded: false });
  });
});

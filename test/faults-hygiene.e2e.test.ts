/**
 * What is left after a session ends (quit, /reload, /new, and the end of a `pi -p` process): no server process of
 * ours, grandchildren started through `sh -c` included (checked in the OS process table), no timer of the adapter's
 * still pending, no temp or lock file.
 */
import { mkdir, readdir } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { trackAdapterTimers } from "./helpers/adapter-timers.ts";
import { currentHost, REPO_ROOT } from "./helpers/hosts.ts";
import { ENTRY, FAULTY_SERVER, callLoaded, faultHarness, faulty, search, startedPids } from "./helpers/fault-setup.ts";
import { readEvents } from "./helpers/fixture-log.ts";
import { runPrint } from "./helpers/pi-print.ts";
import { descendantProcesses } from "./helpers/processes.ts";
import { isRunning } from "./server-manager-helpers.ts";

const host = currentHost();
const harness = faultHarness();
const NEW_SESSION_COMMAND = join(REPO_ROOT, "test/fixtures/extensions/new-session.ts");

/**
 * An eager server started through `sh -c` that starts a grandchild, a keep-alive one, and a lazy one; each logs
 * its pids to a file in the project dir.
 */
function servers(): Record<string, unknown> {
  // The shell logs its own pid and stays the server's parent (a command after the server keeps it from exec'ing).
  const wrapped = `echo '{"event":"shell","pid":'$$'}' >> wrapped.log; "${process.execPath}" "${FAULTY_SERVER}"; echo "server ended" >&2`;
  return {
    wrapped: {
      command: "sh",
      args: ["-c", wrapped],
      env: { FAULT_LOG: "wrapped.log", FAULT_GRANDCHILD: "1" },
      lifecycle: "eager",
      cwd: ".",
    },
    steady: faulty({ FAULT_LOG: "steady.log" }, { lifecycle: "keep-alive", cwd: "." }),
    lazy: faulty({ FAULT_LOG: "lazy.log" }, { cwd: "." }),
  };
}

/** Every pid the servers logged: the shell, the servers, the grandchild. */
function loggedPids(cwd: string): number[] {
  return ["wrapped.log", "steady.log", "lazy.log"].flatMap((file) =>
    readEvents(join(cwd, file)).flatMap((entry) => (entry.pid !== undefined && entry.event !== "call" ? [entry.pid] : [])),
  );
}

/** This process's descendants that are servers of these tests, their shells or their grandchildren. */
async function ourProcesses(): Promise<number[]> {
  const found = await Promise.all([descendantProcesses(FAULTY_SERVER), descendantProcesses("setInterval(() => {}, 1000)")]);
  return [...new Set(found.flat().map((info) => info.pid))];
}

describe(`lifecycle hygiene on Pi ${host.version}`, () => {
  test("after /reload, /new and quit: every process of the previous session is gone, no adapter timer is pending, no temp file is left", async () => {
    const timers = trackAdapterTimers();
    harness.onCleanup(() => timers.stop());
    const dirs = await harness.dirs(servers(), { captureStats: true });
    const pi = await harness.session(
      dirs,
      [search("select:lazy__echo"), callLoaded("lazy__echo", { text: "used" }), "first", search("echo"), "second"],
      [NEW_SESSION_COMMAND],
    );
    await pi.prompt("use the lazy server"); // ToolSearch waits for startup: the lazy server's tools are not cached yet
    expect(pi.toolResults.at(-1)).toMatchObject({ isError: false, text: "used" });
    const first = loggedPids(dirs.cwd);
    // sh, the server and its grandchild; the keep-alive server; the lazy one (learned, ended, started by the call).
    expect(first).toHaveLength(6);
    expect(first.filter(isRunning)).toHaveLength(5);
    expect((await ourProcesses()).sort()).toEqual(first.filter(isRunning).sort());

    await pi.reload();
    await pi.prompt("after the reload");
    expect(first.filter(isRunning)).toEqual([]);
    // The new session starts its eager and keep-alive servers in the background (every tool is cached, so nothing
    // waits for them): sh, server, grandchild; keep-alive (lazy: from the cache).
    const started = () => loggedPids(dirs.cwd).filter((pid) => !first.includes(pid));
    await waitForPids(() => started().filter(isRunning).length === 4);
    const second = started();
    expect(second.filter(isRunning)).toHaveLength(4);

    await pi.command("/test-new");
    await waitForPids(() => loggedPids(dirs.cwd).length === first.length + second.length + 4);
    expect(second.filter(isRunning)).toEqual([]);

    await pi.dispose();
    expect(loggedPids(dirs.cwd).filter(isRunning)).toEqual([]);
    expect(await ourProcesses()).toEqual([]);
    expect(timers.pending()).toEqual([]);
    expect(await adapterFiles(dirs.agentDir)).toEqual(["mcp-cache.json", "mcp-stats.json", "mcp.json"]);
  });

  test("pi -p: when the process ends, so do its servers and their grandchildren; it leaves nothing in its temp dir", async () => {
    const dirs = await harness.dirs(servers());
    const tempDir = join(dirs.cwd, "tmp");
    await mkdir(tempDir);
    const callEcho = host.refreshesToolsEachTurn
      ? { name: "lazy__echo", arguments: { text: "printed" } }
      : { name: "McpCall", arguments: { tool: "lazy__echo", arguments: { text: "printed" } } };
    const result = await runPrint({
      extensions: [ENTRY],
      script: [{ toolCalls: [{ name: "ToolSearch", arguments: { query: "select:lazy__echo" } }] }, { toolCalls: [callEcho] }, "done"],
      prompts: ["use the lazy server", "/mcp status"],
      agentDir: dirs.agentDir,
      cwd: dirs.cwd,
      env: { TMPDIR: tempDir },
    });

    expect(result.exitCode).toBe(0);
    expect(result.toolResults.at(-1)).toMatchObject({ isError: false, text: "printed" });
    expect(result.stderr).toMatch(/✓ wrapped: connected · eager/);
    expect(startedPids(join(dirs.cwd, "steady.log"))).toHaveLength(1);
    const pids = loggedPids(dirs.cwd);
    expect(pids).toHaveLength(6);
    expect(pids.filter(isRunning)).toEqual([]);
    // Pi's extension loader (jiti) keeps its transpile cache there; nothing else may be left.
    expect((await readdir(tempDir)).filter((name) => name !== "jiti")).toEqual([]);
    expect(await adapterFiles(dirs.agentDir)).toEqual(["mcp-cache.json", "mcp.json"]);
  });
});

/** The adapter's entries in the agent dir (its temp and lock files would be named after them too), not Pi's. */
async function adapterFiles(agentDir: string): Promise<string[]> {
  return (await readdir(agentDir)).filter((name) => name.startsWith("mcp")).sort();
}

async function waitForPids(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("the new session's servers did not start");
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * Concurrency through the whole extension: many calls at once to one server, sessions replaced while their
 * servers are still connecting, and thousands of tools or resources listed for the first time (how long Pi stalls
 * for them is measured by bench/registration-stall.ts). (Many processes writing the cache at once:
 * metadata-cache-concurrency.test.ts.)
 */
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { currentHost } from "./helpers/hosts.ts";
import {
  callLoaded,
  FAULTY_SERVER,
  faultHarness,
  faulty,
  notifications,
  search,
  startedPids,
  waitForStatus,
} from "./helpers/fault-setup.ts";
import type { PiSession } from "./helpers/pi-session.ts";
import { descendantProcesses } from "./helpers/processes.ts";
import { isRunning } from "./server-manager-helpers.ts";

const host = currentHost();
const harness = faultHarness();
const CALLS = 50;

describe(`load on Pi ${host.version}`, () => {
  test(`${CALLS} calls at once to a server that is not running: all answered, by one process`, async () => {
    const dirs = await harness.dirs({ busy: faulty({ FAULT_LOG: "busy.log" }, { cwd: "." }) });
    const log = join(dirs.cwd, "busy.log");
    const pi = await harness.session(dirs, [search("select:busy__echo"), "loaded"]);
    await pi.prompt("load echo"); // learns the tools: the lazy server is started once and ended again
    expect(startedPids(log)).toHaveLength(1);
    expect(isRunning(startedPids(log)[0]!)).toBe(false);

    // Pi runs the tool calls of one message in parallel.
    const calls = Array.from({ length: CALLS }, (_, i) => ({ name: "busy__echo", arguments: { text: `call ${i}` } }));
    pi.script([{ toolCalls: calls }, "all done"]);
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on("warning", onWarning);
    harness.onCleanup(() => void process.off("warning", onWarning));
    await pi.prompt("call it fifty times");

    const results = pi.toolResults.filter((result) => result.toolName === "busy__echo");
    expect(results.filter((result) => result.isError)).toEqual([]);
    expect(results.map((result) => result.text).sort()).toEqual(calls.map((call) => call.arguments.text).sort());
    const pids = startedPids(log);
    expect(pids).toHaveLength(2);
    expect(isRunning(pids[1]!)).toBe(true);
    expect((await pi.command("/mcp status")).text).toMatch(
      new RegExp(`✓ busy: connected · lazy · stdio · MCP 2025-11-25 · 6 tools · pid ${pids[1]}`),
    );
    // All calls of a run share Pi's abort signal: listeners left on it would make Node warn of a leak on stderr.
    await new Promise((resolve) => setImmediate(resolve));
    expect(warnings).toEqual([]);
  });

  test("/reload twice while the servers are still connecting: the newest config wins, no process is left behind, nothing is registered twice", async () => {
    // Every server answers nothing while the file `held` exists, and each reload waits until the session's servers
    // have started: every reload lands while the previous session is connecting, however slow the machine.
    const slow = (name: string) => faulty({ FAULT_LOG: `${name}.log`, FAULT_WAIT_WHILE_EXISTS: "held" }, { lifecycle: "eager", cwd: "." });
    const dirs = await harness.dirs({ alpha: slow("alpha"), beta: slow("beta") });
    const held = join(dirs.cwd, "held");
    await writeFile(held, "");
    const started = (name: string) => startedPids(join(dirs.cwd, `${name}.log`));
    const starts = (...names: string[]) => names.map((name) => started(name).length);
    const pi = await harness.session(dirs, [search("echo"), "found"]);
    await expect.poll(() => starts("alpha", "beta"), { timeout: 30_000 }).toEqual([1, 1]);
    await pi.reload();
    await expect.poll(() => starts("alpha", "beta"), { timeout: 30_000 }).toEqual([2, 2]);
    await writeFile(join(dirs.agentDir, "mcp.json"), JSON.stringify({ mcpServers: { beta: slow("beta"), gamma: slow("gamma") } }));
    await pi.reload();
    await expect.poll(() => starts("beta", "gamma"), { timeout: 30_000 }).toEqual([3, 1]);
    await rm(held); // the last session's servers answer
    await pi.prompt("find echo"); // waits for the last session's startup connections

    // alpha and beta started once in each of the two replaced sessions, beta and gamma once in the last.
    expect(starts("alpha", "beta", "gamma")).toEqual([2, 3, 1]);
    const alive = (await descendantProcesses(FAULTY_SERVER)).map((info) => info.pid).sort();
    expect(alive).toEqual([started("beta").at(-1)!, started("gamma")[0]!].sort());
    for (const pid of [...started("alpha"), ...started("beta").slice(0, -1)]) expect(isRunning(pid)).toBe(false);

    const status = (await pi.command("/mcp status")).text;
    expect(status).toMatch(
      new RegExp(
        `^MCP servers: 2 enabled\\n✓ beta: connected · eager · stdio · MCP 2025-11-25 · 6 tools · pid ${started("beta").at(-1)}\\n`,
      ),
    );
    expect(status).toMatch(new RegExp(`✓ gamma: connected · eager · stdio · MCP 2025-11-25 · 6 tools · pid ${started("gamma")[0]}\\n`));
    const names = pi.session.getAllTools().map((tool) => tool.name);
    expect(names.filter((name, index) => names.indexOf(name) !== index)).toEqual([]);
    expect(names.filter((name) => name === "ToolSearch")).toHaveLength(1);
    expect(pi.toolResults.at(-1)!.text).toMatch(/beta__echo[\s\S]*gamma__echo|gamma__echo[\s\S]*beta__echo/);
    // Connections cancelled by a reload are not failures.
    expect(notifications(pi).filter((notice) => notice.level !== "info")).toEqual([]);
    expect(pi.errors).toEqual([]);
  });

  test("2,000 tools listed for the first time cost Pi a few registry rebuilds, not one per tool; each can still be found, loaded and called", async () => {
    // The server answers nothing while the file `held` exists: the count of rebuilds starts before the tools arrive.
    const dirs = await harness.dirs({
      big: faulty({ FAULT_EXTRA_TOOLS: "2000", FAULT_WAIT_WHILE_EXISTS: "held" }, { lifecycle: "eager", cwd: "." }),
    });
    await writeFile(join(dirs.cwd, "held"), "");
    const pi = await harness.session(dirs, [search("select:big__tool_1999"), callLoaded("big__tool_1999", { value: "x" }), "done"]);
    const rebuilds = countRegistryRebuilds(pi);
    await rm(join(dirs.cwd, "held"));
    await waitForStatus(pi, /✓ big: connected · eager · stdio · MCP 2025-11-25 · 2006 tools/, 60_000);
    // Before: one rebuild per tool (2,006).
    expect(rebuilds()).toBeLessThan(10);
    await pi.prompt("call the last tool");
    expect(pi.toolResults.map((result) => [result.isError, result.text]).slice(1)).toEqual([[false, "tool_1999 called"]]);
  });

  test("a server listing 300 resources: 200 become tools, /mcp status says how many were left out", async () => {
    const dirs = await harness.dirs({ files: faulty({ FAULT_RESOURCES: "300" }, { lifecycle: "eager" }) });
    const pi = await harness.session(dirs);
    const status = await waitForStatus(pi, /✓ files: connected/);
    expect(status).toMatch(
      /✓ files: connected · eager · stdio · MCP 2025-11-25 · 206 tools[\s\S]*\n {4}100 of 300 resources left out: at most 200 per server become tools$/,
    );
  });
});

/** Counts the rebuilds of Pi's tool registry (every registerTool after the session is bound makes one). */
function countRegistryRebuilds(pi: PiSession): () => number {
  const session = pi.session as unknown as { _refreshToolRegistry: (...args: unknown[]) => unknown };
  const rebuild = session._refreshToolRegistry;
  if (typeof rebuild !== "function") throw new Error(`Pi ${host.version} has no _refreshToolRegistry to count`);
  let count = 0;
  session._refreshToolRegistry = function (this: unknown, ...args: unknown[]) {
    count++;
    return rebuild.apply(this, args);
  };
  return () => count;
}

/**
 * Shutdown with a large startup still running, with the CPU busy (two busy loops for the whole file): once
 * `session_shutdown` resolves, no server of the session runs and none starts later. Processes are counted by a
 * marker in their command line or environment, wherever they were re-parented.
 */
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { computeServerHash, writeServerEntries } from "../metadata-cache.ts";
import { busyCpuDuringFile } from "./helpers/busy-cpu.ts";
import { cachedToolNames, ENTRY, faultHarness, STDIO_SERVER, waitForStatus } from "./helpers/fault-setup.ts";
import { currentHost } from "./helpers/hosts.ts";
import { readEvents } from "./helpers/fixture-log.ts";
import { runPrint } from "./helpers/pi-print.ts";
import { processesWithMarker } from "./helpers/processes.ts";

const host = currentHost();
const harness = faultHarness();
busyCpuDuringFile();

const SERVERS = 76;
/** When the processes are counted, after shutdown resolved. */
const SAMPLES_MS = [0, 500, 2_500, 7_500];

/** A server that outlives its stdin (its helper keeps it running) and ignores SIGTERM, as its helper does. */
const SLOW_STOP = { FIXTURE_GRANDCHILD: "1", FIXTURE_IGNORE_SIGTERM: "1" };

/** Listing sessions in the cache test, each starting and listing 76 servers (minutes on a loaded 2-core machine): 2 in
 * the suite, `SHUTDOWN_LISTING_RUNS=10` for the full check. */
const LISTING_RUNS = Number(process.env.SHUTDOWN_LISTING_RUNS ?? 2);
/** Starting 76 servers with two busy loops on a shared 2-core machine can take a minute. */
const LOADED_TIMEOUT_MS = 180_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** A shell command that returns once a server in the cwd has logged the start of its helper, or after a minute. */
const WAIT_FOR_A_HELPER = "timeout 60 sh -c 'until grep -qs grandchild events.log; do sleep 0.05; done'";

/** `count` stdio fixture servers, each with `marker` on its command line and in its environment (for its helpers). */
function fixtureServers(count: number, marker: string, extra: Record<string, unknown> = {}, env: Record<string, string> = {}) {
  const servers: Record<string, Record<string, unknown>> = {};
  for (let i = 1; i <= count; i++) {
    servers[`s${i}`] = { command: process.execPath, args: [STDIO_SERVER, marker], env: { ...env, TEST_MARKER: marker }, ...extra };
  }
  return servers;
}

/** Live processes with `marker`, counted at each of `SAMPLES_MS` after now. */
async function countAfter(marker: string): Promise<number[]> {
  const start = performance.now();
  const counts: number[] = [];
  for (const at of SAMPLES_MS) {
    await sleep(Math.max(0, start + at - performance.now()));
    counts.push((await processesWithMarker(marker)).length);
  }
  return counts;
}

async function killMarked(marker: string): Promise<void> {
  for (const { pid } of await processesWithMarker(marker)) process.kill(pid, "SIGKILL");
}

describe(`shutdown on Pi ${host.version}, CPU busy`, () => {
  test(`${SERVERS} eager servers with cached tools, session ended 1.5 s after it opened: no server process at 0 / 0.5 / 2.5 / 7.5 s`, {
    timeout: LOADED_TIMEOUT_MS,
  }, async () => {
    const marker = `mcp-shutdown-${randomUUID()}`;
    const servers = fixtureServers(SERVERS, marker, { lifecycle: "eager" });
    const dirs = await harness.dirs(servers);
    const tool = { name: "echo", description: "Echoes text", inputSchema: { type: "object", properties: { text: { type: "string" } } } };
    const entries = Object.fromEntries(
      Object.entries(servers).map(([name, entry]) => [
        name,
        { configHash: computeServerHash(entry), tools: [tool], resources: [], cachedAt: Date.now() },
      ]),
    );
    expect((await writeServerEntries(dirs.agentDir, entries)).written).toBe(true);

    const pi = await harness.session(dirs);
    await sleep(1_500);
    // The session ends while the startup is starting servers (on a busy machine loading the SDK may take longer).
    while ((await processesWithMarker(marker)).length === 0) await sleep(50);
    await pi.dispose();
    const counts = await countAfter(marker);
    harness.onCleanup(() => killMarked(marker));
    expect(counts).toEqual(SAMPLES_MS.map(() => 0));
  });

  test.each(["quit", "reload"] as const)(
    "/mcp reconnect of slow-stopping servers, then %s while they stop: no reconnected server is left",
    { timeout: LOADED_TIMEOUT_MS },
    async (end) => {
      const marker = `mcp-shutdown-${randomUUID()}`;
      // Each ignores SIGTERM and keeps a helper that does too: closing it for the reconnect takes 2.5 s, and the session
      // ends meanwhile.
      const dirs = await harness.dirs(
        fixtureServers(3, marker, { lifecycle: "eager", cwd: "." }, { ...SLOW_STOP, FIXTURE_LOG: "events.log" }),
      );
      harness.onCleanup(() => killMarked(marker));
      const pi = await harness.session(dirs);
      await waitForStatus(pi, /s1: connected[\s\S]*s2: connected[\s\S]*s3: connected/);
      const first = (await processesWithMarker(marker)).map((info) => info.pid);
      expect(first).toHaveLength(6); // three servers, three helpers
      const reconnecting = pi.command("/mcp reconnect");
      // The session ends once the reconnect is stopping them (they had their SIGTERM; SIGKILL is still to come).
      const sigterms = () => readEvents(join(dirs.cwd, "events.log")).filter((event) => event.event === "sigterm").length;
      await expect.poll(sigterms, { timeout: 60_000 }).toBeGreaterThan(0);
      if (end === "quit") await pi.dispose();
      else await pi.reload();
      await reconnecting.catch(() => {});
      // After /reload the new session has servers of its own: ending it ends them, not what the old one left.
      if (end === "reload") await pi.dispose();
      expect(await processesWithMarker(marker)).toEqual([]);
    },
  );

  test("pi -p with 30 eager slow-stopping servers, each with a helper: Pi exits, and no server or helper is left", {
    timeout: LOADED_TIMEOUT_MS,
  }, async () => {
    const marker = `mcp-shutdown-${randomUUID()}`;
    const dirs = await harness.dirs(
      fixtureServers(30, marker, { lifecycle: "eager" }, { ...SLOW_STOP, FIXTURE_LOG: "events.log", FIXTURE_START_DELAY_MS: "3000" }),
    );
    harness.onCleanup(() => killMarked(marker));
    const result = await runPrint({
      extensions: [ENTRY],
      // The model's turn lasts until a server has started its helper (a bound of a minute).
      script: [{ toolCalls: [{ name: "bash", arguments: { command: WAIT_FOR_A_HELPER } }] }, "done"],
      prompts: ["hi"],
      agentDir: dirs.agentDir,
      cwd: dirs.cwd,
      timeoutMs: 90_000,
    });
    const left = await processesWithMarker(marker);
    // The session ended while servers were starting (each waits 3 s before it answers): some had started a helper.
    expect(readEvents(join(dirs.cwd, "events.log")).some((event) => event.event === "grandchild")).toBe(true);
    expect({ exitCode: result.exitCode, stdout: result.stdout.trim(), left: left.length }).toEqual({
      exitCode: 0,
      stdout: "done",
      left: 0,
    });
  });

  test(`${SERVERS} servers listed in one session: all ${SERVERS} in mcp-cache.json after it ends, in each of ${LISTING_RUNS} runs`, {
    timeout: LISTING_RUNS * 2 * LOADED_TIMEOUT_MS,
  }, async () => {
    const marker = `mcp-shutdown-${randomUUID()}`;
    const servers = fixtureServers(SERVERS, marker); // lazy, not cached: the startup lists each one, then ends it
    harness.onCleanup(() => killMarked(marker));
    const complete: number[] = [];
    for (let run = 0; run < LISTING_RUNS; run++) {
      const dirs = await harness.dirs(servers); // a fresh agent dir each run
      const pi = await harness.session(dirs);
      await waitForStatus(pi, /^(?![\s\S]*(not known yet|connecting))/, LOADED_TIMEOUT_MS);
      await pi.dispose();
      complete.push(Object.keys(servers).filter((name) => cachedToolNames(dirs.agentDir, name).length > 0).length);
    }
    expect(complete).toEqual(Array.from({ length: LISTING_RUNS }, () => SERVERS));
  });
});

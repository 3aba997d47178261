/**
 * Pi's abort (Escape) during a call that waits for its server to start: the call ends at once as cancelled, the
 * server is not put in failure backoff, and its start goes on until the server is connected.
 */
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { callLoaded, faultHarness, faulty, search, startedPids, waitForStatus } from "./helpers/fault-setup.ts";
import { currentHost } from "./helpers/hosts.ts";
import { waitFor } from "./server-manager-helpers.ts";

const host = currentHost();
const harness = faultHarness();

describe(`abort during a connect on Pi ${host.version}`, () => {
  test("Escape while a lazy server starts: cancelled at once, no backoff, the start goes on and connects", {
    timeout: 180_000,
  }, async () => {
    const dirs = await harness.dirs({ slow: faulty({ FAULT_LOG: "slow.log", FAULT_WAIT_WHILE_EXISTS: "starting" }, { cwd: "." }) });
    const log = join(dirs.cwd, "slow.log");
    const gate = join(dirs.cwd, "starting");
    const pi = await harness.session(dirs, [search("select:slow__echo"), "loaded"]);
    await pi.prompt("load echo"); // learns the tools: the lazy server is started once and ended again
    expect(startedPids(log)).toHaveLength(1);

    await writeFile(gate, ""); // the next start does not finish until the gate is removed
    pi.script([callLoaded("slow__echo", { text: "first" }), "unreachable"]);
    const running = pi.prompt("call it");
    await waitFor(() => startedPids(log).length === 2);
    // What Escape does in Pi's UI (both hosts' AgentSession have it; the harness's interface does not list it).
    await (pi.session as unknown as { abort(): Promise<void> }).abort();
    await expect(running).rejects.toThrow(/aborted/);
    const cancelled = pi.toolResults.at(-1)!;
    expect(cancelled.isError).toBe(true);
    expect(cancelled.text).toContain('The call was cancelled while MCP server "slow" was starting');

    // The start the cancelled call waited for goes on, and ends up connected: no failure, no backoff, no new process.
    await rm(gate);
    const status = await waitForStatus(pi, /✓ slow: connected/);
    expect(status).not.toMatch(/next attempt|failed/);
    expect(startedPids(log)).toHaveLength(2);
  });
});

/**
 * A setup file for every test file: once a file's own hooks have run, no process it started may still be running.
 * Files share a worker process (vitest.config.ts, `isolate: false`), so a server one file leaves behind would
 * otherwise surface later as a failure in whichever file next counts its processes, far from its cause. Each process
 * a test spawns is noted with the test that spawned it, so a leak names its test even when it is found later.
 */
import type * as ChildProcesses from "node:child_process";
import { createRequire, syncBuiltinESMExports } from "node:module";
import { afterAll, expect } from "vitest";
import { isProcessAlive } from "../../util/process-tree.ts";
import { descendantProcesses } from "./processes.ts";

/** A process being stopped may take SIGTERM's grace (2 s) and SIGKILL's reaping; more than that is a leak. */
const SETTLE_MS = 5_000;

interface WorkerRecord {
  /** Leaks already reported by an earlier file of this worker: each is reported once. */
  reported: Set<number>;
  /** Which test spawned each process (the worker's whole life: files share it). */
  spawnedBy: Map<number, string>;
}

const RECORD = Symbol.for("pi-mcp-adapter.test-processes");
const record: WorkerRecord = ((globalThis as { [RECORD]?: WorkerRecord })[RECORD] ??= noteSpawns());

/** Wraps `child_process.spawn` once per worker, for `require` (cross-spawn, our stdio transport's spawner) and imports. */
function noteSpawns(): WorkerRecord {
  const spawnedBy = new Map<number, string>();
  const childProcesses = createRequire(import.meta.url)("node:child_process") as typeof ChildProcesses;
  const spawn = childProcesses.spawn;
  childProcesses.spawn = ((...args: Parameters<typeof spawn>) => {
    const child = spawn(...args);
    const { testPath, currentTestName } = expect.getState();
    if (child.pid !== undefined)
      spawnedBy.set(child.pid, `${testPath?.replace(/^.*\/test\//, "test/")} > ${currentTestName ?? "(a hook)"}`);
    return child;
  }) as typeof spawn;
  syncBuiltinESMExports(); // `import { spawn } from "node:child_process"` sees the wrapper too
  return { reported: new Set(), spawnedBy };
}

async function liveDescendants(): Promise<string[]> {
  const left = (await descendantProcesses("")).filter(({ pid }) => !record.reported.has(pid) && isProcessAlive(pid));
  return left.map(({ pid, cmdline }) => `${pid} ${cmdline.trim()} (spawned by ${record.spawnedBy.get(pid) ?? "a process of the test"})`);
}

afterAll(async () => {
  if (process.platform !== "linux") return;
  const deadline = Date.now() + SETTLE_MS;
  let left = await liveDescendants();
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    left = await liveDescendants();
  }
  for (const line of left) record.reported.add(Number(line.split(" ")[0]));
  expect(left, "processes this test file started are still running after its last hook").toEqual([]);
}, SETTLE_MS + 5_000);

import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { ProcessProbe, processExists } from "../util/process-tree.ts";

const cleanups: (() => void)[] = [];

afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

async function startChild(): Promise<{ pid: number; exited: Promise<unknown> }> {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
  await new Promise((resolve) => child.once("spawn", resolve));
  const exited = new Promise((resolve) => child.once("exit", resolve));
  cleanups.push(() => child.kill("SIGKILL"));
  return { pid: child.pid!, exited };
}

function probe(pid: number): ProcessProbe {
  const created = new ProcessProbe(pid);
  cleanups.push(() => created.close());
  return created;
}

/** Blocks (no await, so Node cannot reap the child) until the kernel shows the process as a zombie. */
function waitUntilZombie(pid: number): void {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let tries = 0; !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8")); tries++) {
    if (tries === 1_000) throw new Error(`process ${pid} did not become a zombie`);
    Atomics.wait(pause, 0, 0, 5);
  }
}

describe("ProcessProbe", () => {
  it("says a running process is alive, and one that was reaped is not", async () => {
    const { pid, exited } = await startChild();
    const child = probe(pid);
    expect(child.isAlive()).toBe(true);
    expect(child.isAlive()).toBe(true);
    process.kill(pid, "SIGKILL");
    await exited;
    expect(child.isAlive()).toBe(false);
  });

  it.runIf(process.platform === "linux")("sees a child that died but is not reaped yet, which the pid alone does not", async () => {
    const { pid } = await startChild();
    const child = probe(pid);
    process.kill(pid, "SIGKILL");
    waitUntilZombie(pid);
    expect(processExists(pid)).toBe(true);
    expect(child.isAlive()).toBe(false);
  });

  it("says a process that is gone before it is probed is not alive", async () => {
    const { pid, exited } = await startChild();
    process.kill(pid, "SIGKILL");
    await exited;
    expect(probe(pid).isAlive()).toBe(false);
  });
});

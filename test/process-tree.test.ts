import { afterEach, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { isProcessAlive, listProcessTree, stopProcessTree } from "../util/process-tree.ts";
import { isRunning } from "./server-manager-helpers.ts";

const started: number[] = [];

afterEach(() => {
  for (const pid of started.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone
    }
  }
});

/**
 * A node root with one child; the root prints both pids. Options: the child ignores SIGTERM; the root exits as soon
 * as its stdin closes (leaving the child orphaned).
 */
async function startTree(
  options: { childIgnoresTerm?: boolean; rootExitsOnStdinEnd?: boolean } = {},
): Promise<{ root: ChildProcess; pids: number[] }> {
  const childCode = `${options.childIgnoresTerm ? "process.on('SIGTERM', () => {});" : ""} setInterval(() => {}, 1000);`;
  const rootCode = [
    "const { spawn } = require('node:child_process');",
    `const child = spawn(process.execPath, ['-e', ${JSON.stringify(childCode)}], { stdio: 'ignore' });`,
    "console.log(JSON.stringify([process.pid, child.pid]));",
    options.rootExitsOnStdinEnd ? "process.stdin.on('end', () => process.exit(0)); process.stdin.resume();" : "process.stdin.resume();",
  ].join("\n");
  const root = spawn(process.execPath, ["-e", rootCode], { stdio: ["pipe", "pipe", "inherit"] });
  const pids = await new Promise<number[]>((resolve) => {
    createInterface({ input: root.stdout! }).once("line", (line) => resolve(JSON.parse(line) as number[]));
  });
  started.push(...pids);
  return { root, pids };
}

describe("process trees", () => {
  it("lists a process and its descendants, root first", async () => {
    const { pids } = await startTree();
    expect(await listProcessTree(pids[0]!)).toEqual(pids);
  });

  it("SIGTERMs the tree and SIGKILLs what ignores it", async () => {
    const { pids } = await startTree({ childIgnoresTerm: true });
    expect(pids.every(isRunning)).toBe(true);
    await stopProcessTree(pids[0]!, { voluntaryExitMs: 0, terminateGraceMs: 300 });
    expect(pids.filter(isRunning)).toEqual([]);
  });

  it("records the tree before asking the root to exit, so an orphaned child is still ended", async () => {
    const { root, pids } = await startTree({ rootExitsOnStdinEnd: true });
    await stopProcessTree(pids[0]!, { requestExit: () => root.stdin!.end(), voluntaryExitMs: 300 });
    expect(pids.filter(isRunning)).toEqual([]);
  });

  it("knows an ended process is not alive", async () => {
    const child = spawn(process.execPath, ["-e", ""]);
    await new Promise((resolve) => child.once("exit", resolve));
    expect(isProcessAlive(child.pid!)).toBe(false);
    expect(isProcessAlive(process.pid)).toBe(true);
  });
});

/**
 * Two CPU-busy loops for the length of a test file: shutdown and cache races show up when the machine is loaded
 * (timers fire late, children start slowly). Each loop ends by itself after `maxMs` even if the file never cleans up.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { afterAll, beforeAll } from "vitest";

export function busyCpuDuringFile(loops = 2, maxMs = 600_000): void {
  const children: ChildProcess[] = [];
  beforeAll(() => {
    for (let i = 0; i < loops; i++) {
      children.push(spawn(process.execPath, ["-e", `const end = Date.now() + ${maxMs}; while (Date.now() < end);`], { stdio: "ignore" }));
    }
  });
  afterAll(() => {
    for (const child of children.splice(0)) child.kill("SIGKILL");
  });
}

// The grouped stdio transport's exit hook: one per process, however many copies of the adapter Pi has loaded.
import { afterEach, expect, it, vi } from "vitest";

afterEach(() => {
  vi.resetModules();
});

/** A fresh copy of the module (as Pi's /reload loads one) starts a server and ends it. */
async function runServerWithFreshCopy(): Promise<void> {
  vi.resetModules();
  const { GroupedStdioTransport } = await import("../stdio-transport.ts");
  const transport = new GroupedStdioTransport({
    command: process.execPath,
    args: ["-e", "process.stdin.resume()"],
    env: { PATH: process.env.PATH ?? "" },
    maxBufferSize: 1024,
  });
  await transport.start();
  await transport.close();
}

it("twelve reloads of the adapter, each starting a server, add at most one exit hook to the process", async () => {
  const before = process.listenerCount("exit");
  for (let copy = 0; copy < 12; copy++) await runServerWithFreshCopy();
  expect(process.listenerCount("exit") - before).toBeLessThanOrEqual(1);
});

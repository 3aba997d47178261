// The grouped stdio transport's exit hook: one per process, however many copies of the adapter Pi has loaded, and run
// when a signal ends a host that does not handle it.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { afterEach, expect, it, vi } from "vitest";
import { groupExists } from "../util/process-tree.ts";

const JITI_CLI = fileURLToPath(new URL("../node_modules/jiti/lib/jiti-cli.mjs", import.meta.url));
const GROUP_HOLDER = fileURLToPath(new URL("./fixtures/group-holder.ts", import.meta.url));

afterEach(() => {
  vi.resetModules();
});

/** A fresh copy of the module (as Pi's /reload loads one) starts a server and ends it. */
async function runServerWithFreshCopy(): Promise<void> {
  vi.resetModules();
  const { GroupedStdioTransport } = await import("../connection/stdio-transport.ts");
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

it.each(["SIGTERM", "SIGHUP", "SIGINT"] as const)(
  "%s to a host without a handler for it (Pi 0.73's TUI) still ends every process a server started in its group",
  async (signal) => {
    const holder = spawn(process.execPath, [JITI_CLI, GROUP_HOLDER], { stdio: ["ignore", "pipe", "inherit"] });
    const [line] = (await once(holder.stdout!, "data")) as [Buffer];
    const serverPid = Number(/^ready (\d+)/.exec(line.toString())?.[1]);
    expect(groupExists(serverPid)).toBe(true);

    holder.kill(signal);
    const [, endedBy] = (await once(holder, "exit")) as [number | null, NodeJS.Signals | null];
    expect(endedBy).toBe(signal); // the signal still ends the host, as it would have
    await expect.poll(() => groupExists(serverPid), { timeout: 5_000 }).toBe(false);
  },
);

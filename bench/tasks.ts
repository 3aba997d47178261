/**
 * Tasks: what a tool call run as a task costs. Against our 2026-07-28 fixture with the Tasks extension
 * (test/fixtures/servers/tasks-server.mjs) over stdio, through the server manager and the session's tasks, as
 * tool-executor.ts calls them:
 *
 * - Latency: the same work (the server waits W ms) answered as a plain result (`wait {ms, plain: true}`, the
 *   baseline) and as a task waited for (`wait {ms}`: `tools/call` answers the task, polls of `tasks/get` at the
 *   interval the server suggests, 300 ms, see its result). The two alternate call by call on one connection; the
 *   ratio is taken pair by pair. A task's result is seen at the first poll after it ends: the added latency is up to
 *   one poll interval, whatever the work's length.
 * - CPU: our process's CPU time (user + system) over a window in which a task runs and is polled, against the same
 *   window with the connection open and no task; windows alternate. Per second of polling.
 *
 *   node node_modules/jiti/lib/jiti-cli.mjs bench/tasks.ts [--quick]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McpServerManager } from "../server-manager.ts";
import { SessionTasks, taskLimits } from "../tasks.ts";
import { REPO_ROOT } from "../test/helpers/hosts.ts";
import type { ServerDefinition } from "../types.ts";
import { alternate, comparisonTable, fixed, median, reportFinding, runs, sleep, spread, table, timed } from "./measure.ts";

const ROUNDS = runs(20, 4);
const CPU_WINDOWS = runs(6, 2);
const CPU_WINDOW_MS = runs(5_000, 2_000);
const WORK_MS = [200, 1_000];

const agentDir = mkdtempSync(join(tmpdir(), "pi-mcp-bench-tasks-"));
const server: ServerDefinition = {
  name: "tasks",
  source: { kind: "user", path: "bench" },
  command: process.execPath,
  args: [join(REPO_ROOT, "test/fixtures/servers/tasks-server.mjs")],
};
const manager = new McpServerManager({ agentDir });
const tasks = new SessionTasks({
  limits: () => taskLimits("tasks", server, { tasks: { waitMs: 600_000 } }),
  canHandBack: true,
  printMode: false,
  present: async () => [],
  deliver: () => {},
  record: () => {},
  resume: () => Promise.reject(new Error("not in the bench")),
  changed: () => {},
});
const policy = { optionalAsTask: false };

/** One call as tool-executor.ts makes it: the result, or the task waited for. */
async function call(args: Record<string, unknown>): Promise<void> {
  const start = await manager.startToolCall("tasks", "wait", args, { policy });
  if (start.kind === "task") await tasks.await({ server: "tasks", tool: "wait", args }, start.task, undefined);
}

function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** Our CPU over one window: idle, or while a task runs (and is polled) for all of it (its start and end not counted). */
async function cpuWindow(polling: boolean): Promise<number> {
  const running = polling ? call({ ms: CPU_WINDOW_MS + 1_000 }) : undefined;
  await sleep(500);
  const before = cpuMs();
  await sleep(CPU_WINDOW_MS);
  const used = cpuMs() - before;
  await running;
  return used;
}

try {
  await manager.connect(server);
  const rows = [];
  for (const ms of WORK_MS) {
    const samples = await alternate(
      ROUNDS,
      () => timed(() => call({ ms, plain: true })),
      () => timed(() => call({ ms })),
    );
    rows.push({ baseline: `plain result, ${ms} ms of work`, candidate: `a task waited for, ${ms} ms of work`, samples });
    const added = median(samples.candidate) - median(samples.baseline);
    reportFinding(
      `Tasks: a task-backed call of ${ms} ms of work takes ${fixed(added)} ms more than the plain call (median; polls 300 ms apart)`,
    );
  }
  console.log(comparisonTable(rows));
  console.log();
  const cpu = await alternate(
    CPU_WINDOWS,
    () => cpuWindow(false),
    () => cpuWindow(true),
    0,
  );
  const perSecond = (values: number[]) => values.map((value) => value / (CPU_WINDOW_MS / 1000));
  const extra = cpu.candidate.map((value, i) => (value - cpu.baseline[i]!) / (CPU_WINDOW_MS / 1000));
  console.log(
    table(
      ["window", "our CPU, ms per second", "windows"],
      [
        ["connection open, no task", spread(perSecond(cpu.baseline), 2), cpu.baseline.length],
        ["a task running, polled every 300 ms", spread(perSecond(cpu.candidate), 2), cpu.candidate.length],
        ["polling's own (paired difference)", spread(extra, 2), extra.length],
      ],
    ),
  );
  reportFinding(`Tasks: polling a running task costs ${fixed(median(extra), 2)} ms of CPU per second (one poll every 300 ms)`);
} finally {
  await manager.shutdown();
  rmSync(agentDir, { recursive: true, force: true });
}

/**
 * The pure parts of tasks: the limits a server's calls run under, a task's deadline, what the session owes a resumed
 * branch, what the model and the user read, the poll intervals a server suggests, and the `tasks` config field.
 */
import { describe, expect, it, vi } from "vitest";
import { ownEntryOptions, parseServerEntry } from "../config.ts";
import { parseSettings } from "../config/settings.ts";
import { callsThroughTasks, POLL_INTERVAL_BOUNDS, withBoundedPollIntervals } from "../connection/task-calls.ts";
import type { RunningTask, TaskView } from "../server-manager.ts";
import { TaskBoard, taskDeadline } from "../tasks/board.ts";
import { DEFAULT_MAX_TASK_RUN_MS, DEFAULT_TASK_WAIT_MS, taskLimits } from "../tasks/limits.ts";
import { owedTasks, TASK_ENTRY_TYPE, TASK_OUTCOME_MESSAGE_TYPE } from "../tasks/records.ts";
import { handedBackText, outcomeHeadline, runningLine, tasksReport } from "../tasks/texts.ts";
import type { ConfigProblem } from "../types.ts";

describe("task limits", () => {
  it("a server's own fields win over settings.tasks, field by field; the defaults fill the rest", () => {
    expect(taskLimits("s", undefined, {})).toEqual({
      waitMs: DEFAULT_TASK_WAIT_MS,
      maxRunMs: DEFAULT_MAX_TASK_RUN_MS,
      optionalAsTask: false,
      maxRunSource: "the default",
    });
    const limits = taskLimits("s", { tasks: { waitMs: 0 } }, { tasks: { waitMs: 5_000, maxRunMs: 9_000, optional: "task" } });
    expect(limits).toEqual({ waitMs: 0, maxRunMs: 9_000, optionalAsTask: true, maxRunSource: "settings.tasks.maxRunMs" });
    expect(taskLimits("s", { tasks: { maxRunMs: 1 } }, {}).maxRunSource).toBe("mcpServers.s.tasks.maxRunMs");
  });
});

describe("a task's deadline", () => {
  const bound = { maxRunMs: 60_000, source: "the default" };
  it("its whole run, or sooner the ttl its server keeps it for", () => {
    expect(taskDeadline({ startedAt: 1_000, view: view({}) }, bound)).toEqual({
      at: 61_000,
      reason: "it ran longer than 1 min (maxRunMs, the default)",
    });
    expect(taskDeadline({ startedAt: 1_000, view: view({ createdAt: 900, ttlMs: 5_000 }) }, bound)).toEqual({
      at: 5_900,
      reason: "its time to live ran out (the server keeps it 5 s)",
    });
    // No limit (null), or a ttl longer than the run: the run's bound.
    expect(taskDeadline({ startedAt: 1_000, view: view({ createdAt: 900, ttlMs: null }) }, bound).at).toBe(61_000);
    expect(taskDeadline({ startedAt: 1_000, view: view({ createdAt: 900, ttlMs: 600_000 }) }, bound).at).toBe(61_000);
  });
});

describe("the board's deadlines", () => {
  it("are cleared by stop(), and a task that changes afterwards sets none going again", () => {
    vi.useFakeTimers();
    try {
      const board = new TaskBoard({ changed: () => {} });
      const listeners: ((view: TaskView) => void)[] = [];
      const task = {
        taskId: "t-1",
        view: view({}),
        onChange: (listener: (changed: TaskView) => void) => listeners.push(listener),
        outcome: new Promise(() => {}),
      } as unknown as RunningTask;
      board.track({ server: "s", tool: "t", args: {} }, task, { maxRunMs: 60_000, source: "the default" });
      expect(vi.getTimerCount()).toBe(1);
      board.stop();
      expect(vi.getTimerCount()).toBe(0);
      for (const listener of listeners) listener(view({ statusMessage: "a last status, after the session's end" }));
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("the outcomes a branch still owes", () => {
  const call = { server: "s", tool: "t", args: {} };
  const handedBack = (taskId: string) => ({
    type: "custom",
    customType: TASK_ENTRY_TYPE,
    data: { kind: "handed-back", taskId, call, startedAt: 1 },
  });
  it("tasks handed back without an outcome message after them, with how the session that had them ended", () => {
    const left = { type: "custom", customType: TASK_ENTRY_TYPE, data: { kind: "left", taskId: "b", kept: false, reason: "quit" } };
    const delivered = { type: "custom_message", customType: TASK_OUTCOME_MESSAGE_TYPE, details: { taskId: "a" } };
    const owed = owedTasks([handedBack("a"), handedBack("b"), left, delivered, { type: "message" }]);
    expect(owed).toEqual([{ handedBack: { kind: "handed-back", taskId: "b", call, startedAt: 1 }, left: left.data }]);
  });
  it("a record written by hand or by another version is left out, not trusted", () => {
    const broken = [
      { type: "custom", customType: TASK_ENTRY_TYPE, data: { kind: "handed-back", taskId: "x", call: { server: 1 }, startedAt: 1 } },
      { type: "custom", customType: TASK_ENTRY_TYPE, data: "nonsense" },
      { type: "custom", customType: TASK_ENTRY_TYPE, data: { kind: "handed-back", taskId: "y", call, startedAt: "yesterday" } },
    ];
    expect(owedTasks(broken)).toEqual([]);
  });
});

describe("what people and the model read", () => {
  const task = { taskId: "3f2a1b2c-9d8e-4f00-a1b2-c3d4e5f60718" } as RunningTask;
  const call = { server: "tasks", tool: "research", args: { topic: "python" } };
  it("the note of a task handed back says which task, what it does, and that its result comes by itself", () => {
    const entry = { call, task, startedAt: 0, view: view({ statusMessage: "Analyzing sources..." }), handedBack: false };
    expect(handedBackText(entry, 30_000)).toBe(
      'MCP task 3f2a1b2c of tool "research" on server "tasks" is still running after 30 s (working: Analyzing sources...). ' +
        "Its result will arrive in this conversation by itself when it ends: go on with other work meanwhile, and do not call " +
        "the tool again for the same thing. (The user can see it with /mcp tasks and cancel it with /mcp tasks cancel 3f2a1b2c.)",
    );
    expect(handedBackText(entry, 0)).toContain("is still running (working:");
  });
  it("an outcome's headline names the task and the call", () => {
    const entry = { call, task, startedAt: 0 };
    const named = 'MCP task 3f2a1b2c of tool "research" on server "tasks" (called with {"topic":"python"})';
    expect(outcomeHeadline(entry, { status: "completed", result: { content: [] } }, 65_000)).toBe(
      `${named} completed after 65 s. Its result:`,
    );
    expect(outcomeHeadline(entry, { status: "failed", message: "the build broke" }, 2_000)).toBe(
      `${named} failed after 2 s: the build broke`,
    );
    expect(outcomeHeadline({ ...entry, endReason: "the user cancelled it" }, { status: "cancelled" }, 0)).toBe(
      `${named} was cancelled after 0 s: the user cancelled it.`,
    );
    expect(outcomeHeadline(entry, { status: "lost", message: "the server process exited (exit code 3)" }, 0)).toBe(
      `${named} can no longer be followed after 0 s: the server process exited (exit code 3). Its result will not arrive.`,
    );
  });
  it("/mcp tasks lists the running tasks, then the ended ones", () => {
    const running = { call, task, startedAt: 0, view: view({ statusMessage: "Gathering sources..." }), handedBack: true };
    const ended = { ...running, outcome: { status: "failed" as const, message: "the build broke" }, endedAt: 4_000 };
    expect(tasksReport([running], [ended], 12_300)).toBe(
      [
        "Running (1):",
        "  3f2a1b2c  tasks/research  working: Gathering sources... · 12.3 s · handed back",
        "Ended:",
        "  3f2a1b2c  tasks/research  failed: the build broke · 4 s · handed back",
        "Cancel one with /mcp tasks cancel <id>.",
      ].join("\n"),
    );
    expect(tasksReport([], [])).toBe("No MCP tasks in this session.");
  });
  it("the panel's line names the call as the server sent its tool's name, a $ in it too", () => {
    const entry = { call: { ...call, tool: "a$&b" }, task, view: view({ statusMessage: "Analyzing sources..." }) };
    expect(runningLine(entry)).toBe("tasks/a$&b 3f2a1b2c: working: Analyzing sources...");
  });
  it("a numbered task id is shown whole, so two of them never look alike", () => {
    const numbered = (taskId: string) => ({ call, task: { taskId } as RunningTask, startedAt: 0, view: view({}), handedBack: true });
    const lines = tasksReport([numbered("task-000001"), numbered("task-000002")], [], 0).split("\n");
    expect(lines.slice(1, 3).map((line) => line.trim().split(" ")[0])).toEqual(["task-000001", "task-000002"]);
  });
});

describe("which calls may become tasks", () => {
  const tasks2025 = { tasks: { requests: { tools: { call: {} } } } };
  const tasks2026 = { extensions: { "io.modelcontextprotocol/tasks": {} } };
  const tool = (taskSupport?: "required" | "optional" | "forbidden", inputSchema: unknown = { type: "object" }) => ({
    name: "t",
    inputSchema,
    ...(taskSupport ? { taskSupport } : {}),
  });
  const plain = { optionalAsTask: false };
  const optionalAsTask = { optionalAsTask: true };
  it("2025: a required tool always (its server saying what is wrong if it lacks tasks); an optional one when asked; others never", () => {
    const server = { modern: false, http: false, capabilities: tasks2025 };
    expect(callsThroughTasks(server, tool("required"), plain)).toBe(true);
    expect(callsThroughTasks({ ...server, capabilities: {} }, tool("required"), plain)).toBe(true);
    expect(callsThroughTasks(server, tool("optional"), plain)).toBe(false);
    expect(callsThroughTasks(server, tool("optional"), optionalAsTask)).toBe(true);
    expect(callsThroughTasks({ ...server, capabilities: {} }, tool("optional"), optionalAsTask)).toBe(false);
    expect(callsThroughTasks(server, tool("forbidden"), optionalAsTask)).toBe(false);
    expect(callsThroughTasks(server, tool(), optionalAsTask)).toBe(false);
  });
  it("2026: every call to a server with the extension, but a tool declaring headers over HTTP (the SDK alone sends them)", () => {
    const headers = { type: "object", properties: { region: { type: "string", "x-mcp-header": "Region" } } };
    expect(callsThroughTasks({ modern: true, http: false, capabilities: tasks2026 }, tool(), plain)).toBe(true);
    expect(callsThroughTasks({ modern: true, http: false, capabilities: {} }, tool("required"), plain)).toBe(false);
    expect(callsThroughTasks({ modern: true, http: true, capabilities: tasks2026 }, tool(undefined, headers), plain)).toBe(false);
    expect(callsThroughTasks({ modern: true, http: false, capabilities: tasks2026 }, tool(undefined, headers), plain)).toBe(true);
  });
});

describe("the poll interval a server suggests", () => {
  const { min, max } = POLL_INTERVAL_BOUNDS;
  it.each([
    [0, min],
    [-5, min],
    [0.5, min],
    [1_000, 1_000],
    [3_600_000, max],
    [Number.NaN, min],
  ])("%s ms is taken as %s ms, in either era's shape", (suggested, taken) => {
    expect(withBoundedPollIntervals({ taskId: "t", status: "working", pollIntervalMs: suggested })).toMatchObject({
      pollIntervalMs: taken,
    });
    expect(withBoundedPollIntervals({ task: { taskId: "t", pollInterval: suggested } })).toEqual({
      task: { taskId: "t", pollInterval: taken },
    });
    expect(withBoundedPollIntervals({ method: "notifications/tasks/status", params: { pollInterval: suggested } })).toMatchObject({
      params: { pollInterval: taken },
    });
  });
  it("a task that has run a while is polled at most every tenth of its age, up to the bound", () => {
    const now = Date.parse("2026-01-01T00:10:00Z");
    const polled = (createdAt: string) => withBoundedPollIntervals({ taskId: "t", createdAt, pollIntervalMs: 300 }, now);
    expect(polled("2026-01-01T00:09:59Z")).toMatchObject({ pollIntervalMs: 300 }); // 1 s old: the server's 300 ms
    expect(polled("2026-01-01T00:09:00Z")).toMatchObject({ pollIntervalMs: 6_000 }); // 1 min old: every 6 s
    expect(polled("2026-01-01T00:00:00Z")).toMatchObject({ pollIntervalMs: max }); // 10 min old: the bound
  });
  it("an answer without one is left as it came (the same object)", () => {
    const answer = { content: [{ type: "text", text: "hi" }] };
    expect(withBoundedPollIntervals(answer)).toBe(answer);
  });
});

describe("the tasks config field", () => {
  const CONTEXT = { env: {}, homeDir: "/h", platform: "linux" } as never;
  const parse = (tasks: unknown) => {
    const problems: ConfigProblem[] = [];
    const settings = parseSettings({ tasks }, "mcp.json", CONTEXT, problems);
    return { settings, problems: problems.map((problem) => `${problem.field}: ${problem.message}`) };
  };
  it("takes waitMs (0 too), maxRunMs and optional", () => {
    expect(parse({ waitMs: 0, maxRunMs: 5_000, optional: "task" })).toEqual({
      settings: { tasks: { waitMs: 0, maxRunMs: 5_000, optional: "task" } },
      problems: [],
    });
  });
  it("names the field that is wrong, which alone falls back to its default: the other fields still apply", () => {
    expect(parse({ waitMs: -1, maxRunMs: 5_000 })).toEqual({
      settings: { tasks: { maxRunMs: 5_000 } },
      problems: [
        'settings.tasks.waitMs: mcp.json: "settings.tasks.waitMs": must be a number ≥ 0 (got the number -1); ignored (the default applies)',
      ],
    });
    expect(parse({ optional: "always" }).problems[0]).toMatch(/"settings\.tasks\.optional": must be one of "plain", "task"/);
    expect(parse({ wait: 1, waitMs: 0 })).toMatchObject({
      settings: { tasks: { waitMs: 0 } },
      problems: [expect.stringMatching(/"settings\.tasks\.wait": is not a field of it/)],
    });
    expect(parse(5).settings).toEqual({});
  });
  it("in a server's entry too: a bad field costs only itself, and settings.tasks applies for it", () => {
    const problems: ConfigProblem[] = [];
    const entry = parseServerEntry(
      "s",
      { command: "x", tasks: { waitMs: "soon", optional: "task" } },
      ownEntryOptions("mcp.json", CONTEXT),
      problems,
    );
    expect(entry).toMatchObject({ kind: "server", entry: { tasks: { optional: "task" } } });
    expect(problems.map((problem) => problem.message)).toEqual([
      'mcp.json: server "s": "tasks.waitMs": must be a number ≥ 0 (got a string); settings.tasks applies',
    ]);
  });
});

function view(fields: Partial<TaskView>): TaskView {
  return { taskId: "t", status: "working", ...fields };
}

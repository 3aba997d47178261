/**
 * Tool calls that run as tasks, without Pi: the session's tasks (tasks.ts) over a real server manager, against real
 * servers: our 2026-07-28 fixture with the Tasks extension (test/fixtures/servers/tasks-server.mjs) over stdio and
 * HTTP, and a 2025-11-25 server that answers with a task it should not (rogue-task-server.mjs). The everything
 * server's 2025 tasks are tested in the real Pi (tasks.e2e.test.ts). The host a session gives the tasks is recorded here
 * (what is delivered, what is recorded in the session). In the real Pi: tasks.e2e.test.ts.
 */
import type { ElicitRequestFormParams } from "@modelcontextprotocol/client";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { McpServerManager, type RunningTask, type ToolCallStart } from "../server-manager.ts";
import { type OutcomeMessage, SessionTasks, type TaskRecord, taskLimits } from "../tasks.ts";
import type { ServerDefinition, TaskSettings } from "../types.ts";
import { trackAdapterTimers } from "./helpers/adapter-timers.ts";
import { readEvents } from "./helpers/fixture-log.ts";
import { type FixtureProcess, startFixtureProcess } from "./helpers/fixture-process.ts";
import { FIXTURES, failure, killLeftovers, serverDef, tempDir, waitFor } from "./server-manager-helpers.ts";

const TASKS_FIXTURE = join(FIXTURES, "tasks-server.mjs");

let dir: ReturnType<typeof tempDir>;
let http: FixtureProcess;
const httpLog = () => join(dir.path, "http.log");

beforeAll(async () => {
  dir = tempDir();
  http = await startFixtureProcess(TASKS_FIXTURE, "tasks fixture (HTTP)", { TASKS_TRANSPORT: "http", TASKS_LOG: httpLog() });
});

afterAll(async () => {
  await http.stop();
  killLeftovers(dir.path);
  dir.remove();
});

interface Harness {
  manager: McpServerManager;
  tasks: SessionTasks;
  delivered: OutcomeMessage[];
  records: TaskRecord[];
  /** Tool calls the way tool-executor.ts makes them: the task waited for, or handed back. */
  call(server: string, tool: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<string>;
  start(server: string, tool: string, args: Record<string, unknown>): Promise<ToolCallStart>;
  close(reason?: string): Promise<void>;
}

const harnesses: Harness[] = [];
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((harness) => harness.close()));
});

/** Each test's stdio fixture logs to a file of its own (`log()` names the last one made). */
let logs = 0;
let lastLog = "";
const log = () => lastLog;
const stdioFixture = (name = "tasks", env: Record<string, string> = {}) => {
  lastLog = join(dir.path, `${name}-${++logs}.log`);
  return serverDef(name, { command: process.execPath, args: [TASKS_FIXTURE], env: { TASKS_LOG: lastLog, ...env } });
};
const httpFixture = (name = "remote") => serverDef(name, { url: `${http.base}/mcp`, transport: "http" });

/** A manager and the session's tasks over `servers`; `tasks`: the settings.tasks of the session. */
function harness(servers: ServerDefinition[], tasks: TaskSettings = {}, answers: Record<string, string> = {}): Harness {
  const manager = new McpServerManager({
    agentDir: dir.path,
    elicitation: async (_server, request: ElicitRequestFormParams) => {
      const field = Object.keys(request.requestedSchema.properties)[0]!;
      return answers[field] ? { action: "accept", content: { [field]: answers[field] } } : { action: "decline" };
    },
  });
  const delivered: OutcomeMessage[] = [];
  const records: TaskRecord[] = [];
  const byName = new Map(servers.map((server) => [server.name, server]));
  const sessionTasks = new SessionTasks({
    limits: (server) => taskLimits(server, byName.get(server), { tasks }),
    canHandBack: true,
    printMode: false,
    present: async (_call, result) =>
      result.content.flatMap((block) => (block.type === "text" ? [{ type: "text" as const, text: block.text }] : [])),
    deliver: (message) => delivered.push(message),
    record: (record) => records.push(record),
    resume: async (server, reference) => {
      await manager.connect(byName.get(server)!);
      return manager.resumeTask(server, reference);
    },
    changed: () => {},
  });
  const start = async (server: string, tool: string, args: Record<string, unknown>, signal?: AbortSignal) => {
    await manager.connect(byName.get(server)!);
    const { optionalAsTask } = taskLimits(server, byName.get(server), { tasks });
    return manager.startToolCall(server, tool, args, { signal, policy: { optionalAsTask } });
  };
  const h: Harness = {
    manager,
    tasks: sessionTasks,
    delivered,
    records,
    start,
    async call(server, tool, args, signal) {
      const started = await start(server, tool, args, signal);
      if (started.kind === "result") return resultText(started.result);
      const wait = await sessionTasks.await({ server, tool, args }, started.task, signal);
      return wait.kind === "result" ? resultText(wait.result) : wait.text;
    },
    async close(reason = "quit") {
      sessionTasks.shutdown(reason);
      await manager.shutdown();
    },
  };
  harnesses.push(h);
  return h;
}

function resultText(result: { content?: unknown; isError?: boolean }): string {
  const blocks = Array.isArray(result.content) ? result.content : [];
  const text = blocks.map((block: { text?: string }) => block.text ?? "").join("\n");
  return result.isError ? `ERROR: ${text}` : text;
}

const requests = (log: string, method: string) => readEvents(log).filter((entry) => (entry as { method?: string }).method === method);
const deliveredText = (message: OutcomeMessage) => message.content.map((block) => (block.type === "text" ? block.text : "")).join("\n");

describe("a task-backed call, 2026-07-28 (Tasks extension)", () => {
  it("over stdio: waited for, its stages seen as progress, its result the call's", async () => {
    // Stages longer than the poll interval the server suggests (300 ms): each is seen.
    const h = harness([stdioFixture("tasks", { TASKS_STAGE_MS: "700" })]);
    const started = await h.start("tasks", "research", { topic: "python" });
    expect(started.kind).toBe("task");
    const task = (started as { task: RunningTask }).task;
    const stages: string[] = [];
    const wait = await h.tasks.await({ server: "tasks", tool: "research", args: {} }, task, undefined, (text) => stages.push(text));
    expect(wait).toMatchObject({ kind: "result" });
    expect(resultText((wait as { result: { content: unknown } }).result)).toBe("Report on python");
    expect(stages.join("\n")).toMatch(/working: Gathering sources[\s\S]*working: Analyzing sources[\s\S]*working: Writing the report/);
    // The server said how far apart polls may be (300 ms): the three stages of 0.7 s took about seven polls, not dozens.
    expect(requests(log(), "tasks/get").length).toBeLessThan(10);
  });

  it("over HTTP: input the task asks for is answered with tasks/update, by the same handlers as outside a task", async () => {
    const h = harness([httpFixture()], {}, { reading: "snake" });
    expect(await h.call("remote", "research", { topic: "python", ambiguous: true })).toBe("Report on python (snake)");
    const updates = requests(httpLog(), "tasks/update") as { inputResponses?: Record<string, unknown> }[];
    expect(updates.at(-1)?.inputResponses).toEqual({ reading: { action: "accept", content: { reading: "snake" } } });
  });

  it("a plain answer from a server that offers tasks is an ordinary result; a failed task and an error result say so", async () => {
    const h = harness([stdioFixture()]);
    expect(await h.call("tasks", "plain", { text: "hi" })).toBe("hi");
    expect(await h.call("tasks", "tool_error", {})).toBe("ERROR: no such branch");
    expect((await failure(h.call("tasks", "fail", {}))).message).toMatch(/^task [0-9a-f]{8} failed: the build broke$/);
  });

  it("handed back after waitMs: the note names the task; its outcome is delivered once, and recorded for a later session", async () => {
    const h = harness([stdioFixture()], { waitMs: 0 });
    const note = await h.call("tasks", "wait", { ms: 400 });
    expect(note).toMatch(/^MCP task [0-9a-f]{8} of tool "wait" on server "tasks" is still running \(working: waiting 400 ms\)/);
    expect(note).toContain("Its result will arrive in this conversation by itself");
    await waitFor(() => h.delivered.length > 0);
    expect(deliveredText(h.delivered[0]!)).toMatch(
      /^MCP task [0-9a-f]{8} of tool "wait" on server "tasks" \(called with \{"ms":400\}\) completed after \d/,
    );
    expect(deliveredText(h.delivered[0]!)).toContain("waited 400 ms");
    expect(h.delivered[0]!.details).toMatchObject({ server: "tasks", tool: "wait", status: "completed" });
    // A stdio server's tasks end with its process: nothing for a later session to follow.
    expect(h.records).toEqual([
      expect.objectContaining({ kind: "handed-back", call: { server: "tasks", tool: "wait", args: { ms: 400 } } }),
    ]);
    expect(h.records[0]).not.toHaveProperty("reference");
    expect(h.tasks.report()).toMatch(/Ended:\n {2}[0-9a-f]{8} {2}tasks\/wait {2}completed · [\d.]+ s · handed back/);
  });

  it("cancelled by an abort: the server receives tasks/cancel, the call rejects with the abort", async () => {
    const h = harness([stdioFixture()]);
    const abort = new AbortController();
    const calling = h.call("tasks", "wait", { ms: 30_000 }, abort.signal);
    await waitFor(() => requests(log(), "tasks/get").length > 0);
    abort.abort(new Error("Esc"));
    expect((await failure(calling)).message).toBe("Esc");
    await waitFor(() => requests(log(), "tasks/cancel").length === 1);
  });

  it("a task past maxRunMs is cancelled, and the call says which limit ended it", async () => {
    const h = harness([stdioFixture()], { maxRunMs: 500 });
    const message = (await failure(h.call("tasks", "wait", { ms: 30_000 }))).message;
    expect(message).toMatch(/^task [0-9a-f]{8} was cancelled: it ran longer than 0.5 s \(maxRunMs, settings.tasks.maxRunMs\)$/);
    expect(requests(log(), "tasks/cancel")).toHaveLength(1);
  });

  it("a server that crashes mid-task ends the task with one line naming the exit", async () => {
    const h = harness([stdioFixture()]);
    const message = (await failure(h.call("tasks", "crash", {}))).message;
    expect(message).toMatch(/^task [0-9a-f]{8} could no longer be followed: the server process exited \(exit code 3\)$/);
  });

  it("the server is in use while its task runs: never idle", async () => {
    const h = harness([stdioFixture()], { waitMs: 0 });
    await h.call("tasks", "wait", { ms: 800 });
    expect(h.manager.isIdle("tasks", 0)).toBe(false);
    await waitFor(() => h.delivered.length > 0);
    expect(h.manager.isIdle("tasks", 0)).toBe(true);
  });
});

describe("/mcp tasks", () => {
  it("cancel <id> (the start of it is enough) sends tasks/cancel; the outcome says the user cancelled it", async () => {
    const h = harness([stdioFixture()], { waitMs: 0 });
    const note = await h.call("tasks", "wait", { ms: 30_000 });
    const id = /MCP task ([0-9a-f]{8})/.exec(note)![1]!;
    expect(h.tasks.report()).toMatch(
      new RegExp(`^Running \\(1\\):\\n {2}${id} {2}tasks/wait {2}working: waiting 30000 ms · [\\d.]+ s · handed back`),
    );
    expect(await h.tasks.cancel("ffffffff")).toBe('No MCP task "ffffffff" in this session.');
    expect(await h.tasks.cancel(id.slice(0, 4))).toBe(`MCP task ${id} of tool "wait" on server "tasks": cancel sent.`);
    await waitFor(() => h.delivered.length > 0);
    expect(deliveredText(h.delivered[0]!)).toMatch(/was cancelled after [\d.]+ s: the user cancelled it \(\/mcp tasks cancel\)\.$/);
    expect(requests(log(), "tasks/cancel")).toHaveLength(1);
    expect(await h.tasks.cancel(id)).toBe(`MCP task ${id} of tool "wait" on server "tasks" has ended already (cancelled).`);
  });
});

describe("bad input: every misbehaving task ends with a clear, bounded outcome", () => {
  it.each([
    ["poll0", /^quirk poll0 done$/],
    ["pollNegative", /^quirk pollNegative done$/],
    [
      "unknownStatus",
      /^task [0-9a-f]{8} could no longer be followed: the server's answer is not a valid task \(status: Invalid discriminator value. Expected 'working' \| 'input_required' \| 'completed' \| 'failed' \| 'cancelled'\)$/,
    ],
    ["getFails", /^task [0-9a-f]{8} could no longer be followed: the task store is down$/],
    [
      "badResult",
      /^task [0-9a-f]{8} could no longer be followed: the server's answer is not a valid task \(content: Invalid input: expected array, received string\)$/,
    ],
    ["shortTtl", /^task [0-9a-f]{8} was cancelled: its time to live ran out \(the server keeps it 0.4 s\)$/],
  ])("%s", async (kind, expected) => {
    const h = harness([stdioFixture()]);
    const outcome = await h.call("tasks", "quirk", { kind }).catch((error: Error) => error.message);
    expect(outcome).toMatch(expected);
    if (kind === "poll0") expect(requests(log(), "tasks/get").length).toBeLessThan(5);
  });

  it("a 2025 tool that declares no task support, answered with a task: the call fails saying so, the task is cancelled", async () => {
    const rogueLog = join(dir.path, "rogue.log");
    const rogue = serverDef("rogue", {
      command: process.execPath,
      args: [join(FIXTURES, "rogue-task-server.mjs")],
      env: { ROGUE_LOG: rogueLog },
    });
    const h = harness([rogue]);
    expect((await failure(h.call("rogue", "rogue", {}))).message).toBe(
      'its answer was a task (rogue-1), not a result, although the tool declares no task support (execution.taskSupport "forbidden"); the task was cancelled',
    );
    await waitFor(() => requests(rogueLog, "tasks/cancel").length === 1);
  });

  it("a task that never ends and refuses tasks/cancel is let go at maxRunMs: nothing polls it any more", async () => {
    const h = harness([stdioFixture()], { maxRunMs: 300 });
    const message = (await failure(h.call("tasks", "quirk", { kind: "cancelRefused" }))).message;
    expect(message).toMatch(
      /^task [0-9a-f]{8} could no longer be followed: it ran longer than 0.3 s \(maxRunMs, settings.tasks.maxRunMs\), and the server did not take the cancel$/,
    );
    const polls = requests(log(), "tasks/get").length;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(requests(log(), "tasks/get")).toHaveLength(polls);
  });

  it("a tasks/get that never answers fails at the request time limit, not never", async () => {
    const h = harness([stdioFixture("slow")]);
    await h.manager.connect(stdioFixture("slow"));
    const started = await h.manager.startToolCall(
      "slow",
      "quirk",
      { kind: "getHangs" },
      { timeoutMs: 400, policy: { optionalAsTask: false } },
    );
    const task = (started as { task: RunningTask }).task;
    const outcome = await task.outcome;
    expect(outcome).toEqual({ status: "lost", message: "a request for it got no answer within 0.4 s (requestTimeoutMs)" });
  });
});

describe("tasks outlive the session that handed them back", () => {
  it("a 2026 HTTP task left running at shutdown is recorded, and a later session follows it and delivers its outcome", async () => {
    const first = harness([httpFixture()], { waitMs: 0 });
    await first.call("remote", "wait", { ms: 1_200 });
    await first.close("quit");
    expect(first.records.map((record) => record.kind)).toEqual(["handed-back", "left"]);
    expect(first.records[1]).toMatchObject({ kept: true, reason: expect.stringMatching(/left running on its server/) });
    expect(requests(httpLog(), "tasks/cancel")).toHaveLength(0);
    const second = harness([httpFixture()]);
    second.tasks.resumeOwed(first.records.map((data) => ({ type: "custom", customType: "mcp-task", data })));
    await waitFor(() => second.delivered.length > 0);
    expect(deliveredText(second.delivered[0]!)).toMatch(/completed after [\d.]+ s\. Its result:\nwaited 1200 ms$/);
  });

  it("a stdio task is cancelled with its server; the next session reports that once, without following it", async () => {
    const first = harness([stdioFixture()], { waitMs: 0 });
    await first.call("tasks", "wait", { ms: 30_000 });
    await first.close("reload");
    await waitFor(() => requests(log(), "tasks/cancel").length === 1);
    const entries = first.records.map((data) => ({ type: "custom", customType: "mcp-task", data }));
    const second = harness([stdioFixture()]);
    second.tasks.resumeOwed(entries);
    await waitFor(() => second.delivered.length > 0);
    expect(deliveredText(second.delivered[0]!)).toMatch(/was cancelled after [\d.]+ s: cancelled when the Pi session ended \(reload\)\.$/);
    // Its outcome message on the branch: owed no more.
    const third = harness([stdioFixture()]);
    third.tasks.resumeOwed([...entries, { type: "custom_message", customType: "mcp-task-outcome", details: second.delivered[0]!.details }]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(third.delivered).toEqual([]);
  });
});

describe("the lifecycle never stops a task's server without saying so", () => {
  it("a server closed under a task handed back (a reconnect, a config change) cancels it, and its outcome says why", async () => {
    const h = harness([stdioFixture()], { waitMs: 0 });
    await h.call("tasks", "wait", { ms: 30_000 });
    await h.manager.close("tasks");
    await waitFor(() => h.delivered.length > 0);
    expect(deliveredText(h.delivered[0]!)).toMatch(
      /was cancelled after [\d.]+ s \(its server was stopped while it ran \(a reconnect, a config change, or the end of the Pi session\)\)\.$/,
    );
    expect(requests(log(), "tasks/cancel")).toHaveLength(1);
  });

  it("a task whose time to live ran out while no session followed it is reported once, not followed", async () => {
    const h = harness([httpFixture()]);
    const data = {
      kind: "handed-back",
      taskId: "gone-1",
      call: { server: "remote", tool: "wait", args: {} },
      startedAt: 1,
      createdAt: 1,
      ttlMs: 60_000,
      reference: { taskId: "gone-1" },
    };
    h.tasks.resumeOwed([{ type: "custom", customType: "mcp-task", data }]);
    await waitFor(() => h.delivered.length > 0);
    expect(deliveredText(h.delivered[0]!)).toMatch(
      /can no longer be followed after [\d.]+ s: its time to live ran out while no Pi session followed it\./,
    );
    expect(h.manager.getState("remote").status).toBe("idle"); // not even connected
  });
});

describe("nothing outlives the session", () => {
  it("no timer of ours is left after shutdown with tasks waited for, handed back and bounded", async () => {
    const timers = trackAdapterTimers();
    try {
      const h = harness([stdioFixture(), httpFixture()], { waitMs: 0, maxRunMs: 60_000 });
      await h.call("tasks", "wait", { ms: 30_000 });
      await h.call("remote", "wait", { ms: 30_000 });
      await h.close();
      await waitFor(() => timers.pending().length === 0, 5_000).catch(() => {});
      expect(timers.pending()).toEqual([]);
    } finally {
      timers.stop();
    }
  });
});

/**
 * Tool calls that run as tasks, for the session (the connection code drives the task protocol:
 * connection/task-calls.ts): how long a call waits for its task, what the model is handed when the task runs on,
 * how the outcome of a task handed back reaches the conversation, and what becomes of tasks when the session ends
 * and when it is resumed.
 *
 * - A call waits for its task up to `waitMs` (tasks/limits.ts), showing the task's status as progress; a task that
 *   ends by then is the call's result, as a plain call's would be. Esc cancels it (`tasks/cancel`).
 * - A task still running then is handed back: the call returns a short note (which task, what it is doing, that its
 *   result will come by itself) and the session goes on. Its outcome (result, error, cancellation) is delivered as a
 *   message (`pi.sendMessage`, as a follow-up: it starts a turn when the agent is idle, and waits its turn when it is
 *   busy), converted and bounded like a tool result, naming the task and the call.
 * - Print mode has no later: at the end of the run (`agent_end`) it waits for the tasks handed back, so their
 *   outcomes are answered before `pi -p` exits. Pi before 0.87 does not wait for `agent_end` handlers: there a call
 *   waits for its task to the end instead of handing it back.
 * - At `session_shutdown` a task handed back that its server keeps (a 2026-07-28 server over HTTP) is left running
 *   and recorded; the others end with their server (they are cancelled). A session resumed, forked or reloaded
 *   follows the tasks its branch still owes an outcome for, and delivers each outcome once (tasks/records.ts).
 */
import type { CallToolResult } from "@modelcontextprotocol/client";
import type { RunningTask, TaskOutcome, TaskReference } from "./server-manager.ts";
import { type TaskCall, TaskBoard, type TaskEntry } from "./tasks/board.ts";
import type { TaskLimits } from "./tasks/limits.ts";
import { type HandedBackRecord, type OutcomeDetails, type OwedTask, owedTasks, type TaskRecord } from "./tasks/records.ts";
import { handedBackText, outcomeHeadline, progressText, runningFact, runningLine, shortId, taskName, tasksReport } from "./tasks/texts.ts";
import { whenAborted } from "./util/abort.ts";
import { ignored } from "./util/debug-log.ts";
import { errorMessage } from "./util/guards.ts";

export type { TaskCall } from "./tasks/board.ts";
export { taskLimits } from "./tasks/limits.ts";
export { TASK_ENTRY_TYPE, TASK_OUTCOME_MESSAGE_TYPE, type TaskRecord } from "./tasks/records.ts";

/** Text or an image, as a message (or a tool result) holds them. */
export type MessageContent = { type: "text"; text: string } | { type: "image"; data: string; mimeType: string };

/** A delivered outcome: `pi.sendMessage`'s message, less its type. */
export interface OutcomeMessage {
  content: MessageContent[];
  details: OutcomeDetails;
}

/** What the tasks need of the session (init.ts gives it; tests give their own). */
export interface TasksHost {
  limits(server: string): TaskLimits;
  /** False where a call must wait for its task to the end (print mode on a host that cannot wait at `agent_end`). */
  readonly canHandBack: boolean;
  /** Print (or JSON) mode: no UI; tasks left at exit are said on stderr. */
  readonly printMode: boolean;
  /** A completed task's result as the model reads a tool result: converted, bounded, the rest kept in a file. */
  present(call: TaskCall, result: CallToolResult): Promise<MessageContent[]>;
  /** Into the conversation (`triggerTurn`: it starts a turn when the agent is idle). */
  deliver(message: OutcomeMessage, triggerTurn: boolean): void;
  /** Into the session file, out of the model's context. */
  record(record: TaskRecord): void;
  /** Follows again a task an earlier session handed back (connecting its server first). */
  resume(server: string, reference: TaskReference): Promise<RunningTask>;
  /** The tasks changed (the footer follows). */
  changed(): void;
}

/** How a call's wait for its task ended: the task's result, or the task handed back (the note for the model). */
export type TaskWait = { kind: "result"; result: CallToolResult } | { kind: "handed-back"; text: string };

export class SessionTasks {
  private readonly host: TasksHost;
  private readonly board: TaskBoard;
  /** Outcomes being delivered (print mode waits for them). */
  private readonly deliveries = new Set<Promise<void>>();
  private closed = false;

  constructor(host: TasksHost) {
    this.host = host;
    this.board = new TaskBoard({ changed: () => !this.closed && host.changed() });
  }

  /**
   * A call's wait for its task (see the module comment): its result, or the note of a task handed back. A task that
   * failed, was cancelled or could not be followed fails the call (the error says which and why); an abort (`signal`)
   * cancels the task and rejects with the signal's reason.
   */
  async await(call: TaskCall, task: RunningTask, signal: AbortSignal | undefined, onStatus?: (text: string) => void): Promise<TaskWait> {
    const limits = this.host.limits(call.server);
    const entry = this.board.track(call, task, { maxRunMs: limits.maxRunMs, source: limits.maxRunSource });
    const waitMs = this.host.canHandBack ? limits.waitMs : Number.POSITIVE_INFINITY;
    let waiting = true;
    if (onStatus) {
      task.onChange(() => waiting && onStatus(progressText(entry)));
      onStatus(progressText(entry));
    }
    const ended = await waitForOutcome(task.outcome, waitMs, signal);
    waiting = false;
    if (ended === "aborted") {
      entry.endReason = "the call was cancelled";
      await task.cancel();
      throw signal?.reason ?? new Error("cancelled");
    }
    if (ended === "wait-over") return { kind: "handed-back", text: this.handBack(entry, waitMs) };
    return { kind: "result", result: callResult(entry, ended) };
  }

  /** `/mcp tasks` */
  report(): string {
    return tasksReport(this.board.running(), this.board.recent());
  }

  /** `/mcp tasks cancel <id>`: what it did, in a line. */
  async cancel(id: string): Promise<string> {
    const entry = this.board.find(id);
    if (typeof entry === "string") return entry;
    const name = taskName(entry.task.taskId, entry.call);
    if (entry.outcome) return `${name} has ended already (${entry.outcome.status}).`;
    await this.board.cancel(entry, "the user cancelled it (/mcp tasks cancel)");
    return `${name}: cancel sent.`;
  }

  /** The footer's part (undefined when no task runs). */
  statusFact(): string | undefined {
    return runningFact(this.board.running());
  }

  /** The running tasks, one line each, for the `/mcp` panel. */
  runningLines(): string[] {
    return this.board.running().map(runningLine);
  }

  /**
   * The end of a run (`agent_end`). In print mode (where tasks may be handed back): waits until every task handed back
   * has ended and its outcome is delivered (the delivery starts the next run), each bounded by its `maxRunMs`.
   */
  async atRunEnd(): Promise<void> {
    if (!this.host.printMode || !this.host.canHandBack) return;
    const pending = this.board.running().filter((entry) => entry.handedBack);
    await Promise.all(pending.map((entry) => entry.task.outcome));
    await Promise.all([...this.deliveries]);
  }

  /**
   * At session start: the tasks the branch still owes an outcome for (tasks/records.ts) are followed again, or their
   * end reported (without starting a turn: nothing is left to do about them).
   */
  resumeOwed(branch: Iterable<unknown>): void {
    for (const owed of owedTasks(branch)) void this.resumeOne(owed).catch(ignored(`resuming MCP task ${owed.handedBack.taskId}`));
  }

  /**
   * `session_shutdown`: tasks handed back are recorded as left: kept running on a server that keeps them (released
   * here, before the connections end), else cancelled with their server. In print mode each is said on stderr.
   */
  shutdown(reason: string): void {
    this.closed = true;
    for (const entry of this.board.running()) {
      if (!entry.handedBack) continue; // a call still waiting: cancelled with its server, and the call says so
      const kept = entry.task.keptByServer;
      const why = kept
        ? `left running on its server when the Pi session ended (${reason})`
        : `cancelled when the Pi session ended (${reason})`;
      if (kept) entry.task.release(why);
      this.host.record({ kind: "left", taskId: entry.task.taskId, kept, reason: why });
      if (this.host.printMode) process.stderr.write(`[mcp] ${taskName(entry.task.taskId, entry.call)} was still running: ${why}\n`);
    }
    this.board.stop();
  }

  private handBack(entry: TaskEntry, waitedMs: number): string {
    entry.handedBack = true;
    const { task, call, view } = entry;
    this.host.record({
      kind: "handed-back",
      taskId: task.taskId,
      call,
      startedAt: entry.startedAt,
      ...(view.createdAt !== undefined ? { createdAt: view.createdAt } : {}),
      ...(view.ttlMs !== undefined ? { ttlMs: view.ttlMs } : {}),
      ...(task.keptByServer ? { reference: task.reference } : {}),
    });
    void task.outcome.then((outcome) => this.deliver(entry, outcome, true));
    return handedBackText(entry, waitedMs);
  }

  private async resumeOne({ handedBack, left }: OwedTask): Promise<void> {
    const { reference, call } = handedBack;
    const report = (endReason: string) =>
      this.deliver(
        { ...pastEntry(handedBack), endReason },
        { status: left && !left.kept ? "cancelled" : "lost", message: endReason },
        false,
      );
    if (left && !left.kept) return report(left.reason);
    if (!reference) return report("its server ended with the previous Pi session (a task of a stdio server lives in its process)");
    const { createdAt, ttlMs } = handedBack;
    if (createdAt !== undefined && typeof ttlMs === "number" && createdAt + ttlMs < Date.now())
      return report("its time to live ran out while no Pi session followed it");
    let task: RunningTask;
    try {
      task = await this.host.resume(call.server, reference);
    } catch (error) {
      return report(`it could not be followed again (${errorMessage(error)})`);
    }
    if (this.closed) return task.release("the Pi session ended");
    const limits = this.host.limits(call.server);
    const entry = this.board.track(call, task, { maxRunMs: limits.maxRunMs, source: limits.maxRunSource }, handedBack.startedAt);
    entry.handedBack = true;
    const outcome = await task.outcome;
    await this.deliver(entry, outcome, true);
  }

  /** The outcome into the conversation: its headline, and for a result the result as a tool call's would read. */
  private deliver(entry: Pick<TaskEntry, "task" | "call" | "startedAt" | "endReason">, outcome: TaskOutcome, triggerTurn: boolean) {
    const delivery = (async () => {
      if (this.closed) return;
      const content: MessageContent[] = [{ type: "text", text: outcomeHeadline(entry, outcome) }];
      if (outcome.status === "completed") content.push(...(await this.host.present(entry.call, outcome.result)));
      if (this.closed) return;
      const { taskId } = entry.task;
      this.host.deliver(
        { content, details: { taskId, server: entry.call.server, tool: entry.call.tool, status: outcome.status } },
        triggerTurn,
      );
    })().catch(ignored(`delivering the outcome of MCP task ${shortId(entry.task.taskId)}`));
    this.deliveries.add(delivery);
    void delivery.finally(() => this.deliveries.delete(delivery));
    return delivery;
  }
}

/** What an entry of an earlier session's task needs to be named. */
function pastEntry(record: HandedBackRecord): Pick<TaskEntry, "task" | "call" | "startedAt"> {
  return { task: { taskId: record.taskId } as RunningTask, call: record.call, startedAt: record.startedAt };
}

/** A waited task's outcome as the call's: its result, or an error that names the task and says why. */
function callResult(entry: TaskEntry, outcome: TaskOutcome): CallToolResult {
  if (outcome.status === "completed") return outcome.result;
  const task = `task ${shortId(entry.task.taskId)}`;
  if (outcome.status === "failed") throw Object.assign(new Error(`${task} failed: ${outcome.message}`), { code: outcome.code });
  if (outcome.status === "cancelled") {
    const why = entry.endReason ?? outcome.message;
    throw new Error(`${task} was cancelled${why ? `: ${why}` : ""}`);
  }
  throw new Error(`${task} could no longer be followed: ${outcome.message}`);
}

/** The outcome, or "wait-over" after `ms`, or "aborted" when `signal` aborts: whichever comes first. */
function waitForOutcome(outcome: Promise<TaskOutcome>, ms: number, signal: AbortSignal | undefined) {
  let stop = () => {};
  const ended = new Promise<TaskOutcome | "wait-over" | "aborted">((resolve) => {
    const timer = Number.isFinite(ms) ? setTimeout(() => resolve("wait-over"), ms) : undefined;
    const stopWaiting = signal ? whenAborted(signal, () => resolve("aborted")) : () => {};
    stop = () => {
      clearTimeout(timer);
      stopWaiting();
    };
    void outcome.then(resolve);
  });
  return ended.finally(() => stop());
}

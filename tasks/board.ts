/**
 * The session's tasks: those running (waited for by a call, or handed back to the model) and the last ones that
 * ended, for `/mcp tasks`, the footer and the panel. Each task's whole run is bounded here: past its `maxRunMs`, or
 * past its `ttl` (after which the server may discard it), it is cancelled; a task whose cancel the server does not
 * take is let go (no longer followed), so no poller outlives the bound.
 */
import type { RunningTask, TaskOutcome, TaskView } from "../server-manager.ts";
import { waitAtMost } from "../util/abort.ts";
import { formatDuration } from "../util/format-time.ts";

/** How many ended tasks `/mcp tasks` still shows. */
const RECENT_KEPT = 20;
/** How long a cancelled task's end is waited for before it is let go (no longer followed). */
const CANCEL_GRACE_MS = 2_000;

/** The call a task came from. */
export interface TaskCall {
  server: string;
  /** The tool's MCP name. */
  tool: string;
  args: Record<string, unknown>;
}

export interface TaskEntry {
  readonly call: TaskCall;
  readonly task: RunningTask;
  readonly startedAt: number;
  view: TaskView;
  /** Handed back to the model: its outcome is delivered into the conversation. */
  handedBack: boolean;
  /** Why the adapter ended it (a bound, the user), said with its outcome. */
  endReason?: string;
  outcome?: TaskOutcome;
  endedAt?: number;
}

export interface BoardOptions {
  /** Something about the tasks changed (one started, moved on or ended): the footer follows. */
  changed(): void;
}

export class TaskBoard {
  private readonly options: BoardOptions;
  private readonly live = new Map<string, TaskEntry>();
  private ended: TaskEntry[] = [];
  private readonly deadlines = new Map<TaskEntry, ReturnType<typeof setTimeout>>();
  /** The session ended: a task that changes after that (a last status on its way) sets no deadline going again. */
  private stopped = false;

  constructor(options: BoardOptions) {
    this.options = options;
  }

  /** Follows a task from now on, bounded by `maxRunMs` (counted from `startedAt`) and its ttl. */
  track(call: TaskCall, task: RunningTask, bound: { maxRunMs: number; source: string }, startedAt = Date.now()): TaskEntry {
    const entry: TaskEntry = { call, task, startedAt, view: task.view, handedBack: false };
    this.live.set(task.taskId, entry);
    const reschedule = () => this.scheduleDeadline(entry, bound);
    task.onChange((view) => {
      entry.view = view;
      reschedule();
      this.options.changed();
    });
    reschedule();
    void task.outcome.then((outcome) => this.end(entry, outcome));
    this.options.changed();
    return entry;
  }

  running(): TaskEntry[] {
    return [...this.live.values()];
  }

  /** Ended tasks, newest first. */
  recent(): TaskEntry[] {
    return [...this.ended].reverse();
  }

  /** The task whose id is or starts with `id` (among running and recent ones); a string when none or several match. */
  find(id: string): TaskEntry | string {
    const all = [...this.live.values(), ...this.ended];
    const exact = all.find((entry) => entry.task.taskId === id);
    if (exact) return exact;
    const matches = all.filter((entry) => entry.task.taskId.startsWith(id));
    if (matches.length === 1) return matches[0]!;
    return matches.length === 0 ? `No MCP task "${id}" in this session.` : `"${id}" names ${matches.length} tasks: give more of the id.`;
  }

  /**
   * Cancels a task (`tasks/cancel`), saying `reason` with its outcome; one whose server does not end it within
   * CANCEL_GRACE_MS is let go, so that nothing goes on polling it.
   */
  async cancel(entry: TaskEntry, reason: string): Promise<void> {
    entry.endReason = reason;
    await entry.task.cancel();
    if ((await waitAtMost(entry.task.outcome, CANCEL_GRACE_MS)) === undefined)
      entry.task.release(`${reason}, and the server did not take the cancel`);
  }

  /** Ends every deadline: a board whose session is over sets no timer going. */
  stop(): void {
    this.stopped = true;
    for (const timer of this.deadlines.values()) clearTimeout(timer);
    this.deadlines.clear();
  }

  private end(entry: TaskEntry, outcome: TaskOutcome): void {
    clearTimeout(this.deadlines.get(entry));
    this.deadlines.delete(entry);
    entry.outcome = outcome;
    entry.endedAt = Date.now();
    this.live.delete(entry.task.taskId);
    this.ended = [...this.ended, entry].slice(-RECENT_KEPT);
    this.options.changed();
  }

  private scheduleDeadline(entry: TaskEntry, bound: { maxRunMs: number; source: string }): void {
    if (entry.outcome || this.stopped) return;
    clearTimeout(this.deadlines.get(entry));
    const deadline = taskDeadline(entry, bound);
    const timer = setTimeout(() => void this.stopAtDeadline(entry, deadline.reason), Math.max(0, deadline.at - Date.now()));
    // A bound is no reason to keep Pi running: the task's own polls are.
    timer.unref();
    this.deadlines.set(entry, timer);
  }

  private async stopAtDeadline(entry: TaskEntry, reason: string): Promise<void> {
    this.deadlines.delete(entry);
    if (!entry.outcome) await this.cancel(entry, reason);
  }
}

/**
 * When a task must end, and why: its whole run (`maxRunMs`), or sooner its ttl, after which the server may discard
 * it (2025-11-25: "the server may delete it"; 2026-07-28: "the client MAY consider the task no longer usable").
 */
export function taskDeadline(entry: Pick<TaskEntry, "startedAt" | "view">, bound: { maxRunMs: number; source: string }) {
  const runEnd = entry.startedAt + bound.maxRunMs;
  const { createdAt, ttlMs } = entry.view;
  const ttlEnd = createdAt !== undefined && typeof ttlMs === "number" ? createdAt + ttlMs : Number.POSITIVE_INFINITY;
  return ttlEnd < runEnd
    ? { at: ttlEnd, reason: `its time to live ran out (the server keeps it ${formatDuration(ttlMs!)})` }
    : { at: runEnd, reason: `it ran longer than ${formatDuration(bound.maxRunMs)} (maxRunMs, ${bound.source})` };
}

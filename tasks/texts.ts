/**
 * What people and the model read about tasks: the short result a call hands back while its task runs on, the
 * progress line a waiting call shows, the first line of a delivered outcome (naming the task and the call it came
 * from), and `/mcp tasks`' lines. Plain functions of a task's entry, so they are tested without a session.
 */
import type { TaskOutcome, TaskView } from "../server-manager.ts";
import { formatSeconds } from "../util/format-time.ts";
import { oneLine } from "../util/text.ts";
import type { TaskCall, TaskEntry } from "./board.ts";

/** The arguments as the outcome's first line quotes them. */
const ARGUMENTS_SHOWN_CHARS = 200;
/** A status message as a line of `/mcp tasks` or the footer shows it. */
const STATUS_SHOWN_CHARS = 80;
/**
 * A task id this long or shorter is shown whole: servers that number their tasks (`task-000001`, `task-000002`) make
 * ids that share their first characters, and only a long id (a UUID, random bytes) can be cut without two tasks
 * looking alike.
 */
const WHOLE_ID_CHARS = 16;
/** Enough of a long (random) task id to tell a session's tasks apart, and to give `/mcp tasks cancel`. */
const SHORT_ID_CHARS = 8;

export function shortId(taskId: string): string {
  return taskId.length <= WHOLE_ID_CHARS ? taskId : taskId.slice(0, SHORT_ID_CHARS);
}

/** `task 3f2a1b2c of tool "research" on server "tasks"` */
export function taskName(taskId: string, call: Pick<TaskCall, "server" | "tool">): string {
  return `MCP task ${shortId(taskId)} of tool "${call.tool}" on server "${call.server}"`;
}

/** What it is doing: its status, and the server's message about it. */
export function statusText(view: TaskView): string {
  const state = view.status === "input_required" ? "waiting for input" : view.status;
  return view.statusMessage ? `${state}: ${oneLine(view.statusMessage, STATUS_SHOWN_CHARS, "excerpt")}` : state;
}

/** What a call's tool result says when it hands its task back to the model (the task goes on running). */
export function handedBackText(entry: TaskEntry, waitedMs: number): string {
  const { call, task, view } = entry;
  const waited = waitedMs > 0 ? ` after ${formatSeconds(waitedMs)}` : "";
  return (
    `${taskName(task.taskId, call)} is still running${waited} (${statusText(view)}). ` +
    `Its result will arrive in this conversation by itself when it ends: go on with other work meanwhile, ` +
    `and do not call the tool again for the same thing. (The user can see it with /mcp tasks and cancel it with ` +
    `/mcp tasks cancel ${shortId(task.taskId)}.)`
  );
}

/** A waiting call's progress line. */
export function progressText(entry: Pick<TaskEntry, "task" | "view">): string {
  return `Task ${shortId(entry.task.taskId)}: ${statusText(entry.view)}`;
}

/** A running task's line in the `/mcp` panel: its call, then its progress. */
export function runningLine(entry: Pick<TaskEntry, "call" | "task" | "view">): string {
  return `${entry.call.server}/${entry.call.tool} ${shortId(entry.task.taskId)}: ${statusText(entry.view)}`;
}

/**
 * The first line of a delivered outcome: which task, of which call, how it ended (the result or error follows it).
 * `now`: when it ended (a resumed session may report it much later than its run).
 */
export function outcomeHeadline(
  entry: Pick<TaskEntry, "task" | "call" | "startedAt" | "endReason">,
  outcome: TaskOutcome,
  now = Date.now(),
): string {
  const name = `${taskName(entry.task.taskId, entry.call)} (called with ${argumentsText(entry.call.args)})`;
  const ran = `after ${formatSeconds(Math.max(0, now - entry.startedAt))}`;
  switch (outcome.status) {
    case "completed":
      return outcome.result.isError ? `${name} ended ${ran} with an error result:` : `${name} completed ${ran}. Its result:`;
    case "failed":
      return `${name} failed ${ran}: ${outcome.message}`;
    case "cancelled":
      return `${name} was cancelled ${ran}${entry.endReason ? `: ${entry.endReason}` : outcome.message ? ` (${outcome.message})` : ""}.`;
    case "lost":
      return `${name} can no longer be followed ${ran}: ${outcome.message}. Its result will not arrive.`;
  }
}

function argumentsText(args: Record<string, unknown>): string {
  return oneLine(JSON.stringify(args) ?? "{}", ARGUMENTS_SHOWN_CHARS, "excerpt");
}

/** `/mcp tasks`: the running tasks, then the recent ones, one line each. */
export function tasksReport(running: readonly TaskEntry[], recent: readonly TaskEntry[], now = Date.now()): string {
  if (running.length === 0 && recent.length === 0) return "No MCP tasks in this session.";
  const lines: string[] = [];
  if (running.length > 0) lines.push(`Running (${running.length}):`, ...running.map((entry) => `  ${taskLine(entry, now)}`));
  if (recent.length > 0) lines.push("Ended:", ...recent.map((entry) => `  ${taskLine(entry, now)}`));
  if (running.length > 0) lines.push("Cancel one with /mcp tasks cancel <id>.");
  return lines.join("\n");
}

/** `3f2a1b2c  tasks/research  working: Analyzing sources... · 12.3 s · handed back` */
function taskLine(entry: TaskEntry, now: number): string {
  const { task, call, outcome } = entry;
  const state = outcome ? endedText(entry, outcome) : statusText(entry.view);
  const age = formatSeconds((entry.endedAt ?? now) - entry.startedAt);
  const handedBack = entry.handedBack ? " · handed back" : "";
  return `${shortId(task.taskId)}  ${call.server}/${call.tool}  ${state} · ${age}${handedBack}`;
}

function endedText(entry: TaskEntry, outcome: TaskOutcome): string {
  if (outcome.status === "completed") return outcome.result.isError ? "completed (error result)" : "completed";
  if (outcome.status === "cancelled") return entry.endReason ? `cancelled: ${entry.endReason}` : "cancelled";
  return `${outcome.status}: ${oneLine(outcome.message, STATUS_SHOWN_CHARS, "excerpt")}`;
}

/** The footer's part: `1 task running` (nothing when none runs). */
export function runningFact(running: readonly TaskEntry[]): string | undefined {
  if (running.length === 0) return undefined;
  return `${running.length} ${running.length === 1 ? "task" : "tasks"} running`;
}

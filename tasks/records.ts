/**
 * What the Pi session keeps of tasks, so that a session resumed, forked or reloaded finds them: a `mcp-task` entry
 * (`pi.appendEntry`: kept in the session file, never shown to the model) when a task is handed back to the model,
 * another when the session ends with it still running (cancelled with its server, or left running on a server that
 * keeps it), and the outcome itself, delivered as a `mcp-task-outcome` message that names the task. A task handed
 * back on the session's branch without an outcome message there is still owed one.
 */
import type { TaskReference } from "../server-manager.ts";
import { isJsonObject } from "../util/guards.ts";
import type { TaskCall } from "./board.ts";

/** Custom entries (not in the model's context). */
export const TASK_ENTRY_TYPE = "mcp-task";
/** Custom messages (in the model's context): a task's outcome. */
export const TASK_OUTCOME_MESSAGE_TYPE = "mcp-task-outcome";

/** A task handed back to the model: what a later session needs to follow it and to name it. */
export interface HandedBackRecord {
  kind: "handed-back";
  taskId: string;
  call: TaskCall;
  startedAt: number;
  /** When the server created it, and how long it keeps it (`null`: no limit), as it last said. */
  createdAt?: number;
  ttlMs?: number | null;
  /** Set for a task the server keeps beyond our connection: what ext-tasks needs to follow it again. */
  reference?: TaskReference;
}

/** The session ended with the task running: cancelled (its server went with the session), or left on its server. */
export interface LeftRecord {
  kind: "left";
  taskId: string;
  kept: boolean;
  reason: string;
}

export type TaskRecord = HandedBackRecord | LeftRecord;

/** What a delivered outcome message carries (`details`): the task it reports. */
export interface OutcomeDetails {
  taskId: string;
  server: string;
  tool: string;
  status: string;
}

/** A task handed back on the branch whose outcome the branch does not hold yet. */
export interface OwedTask {
  handedBack: HandedBackRecord;
  left?: LeftRecord;
}

/** The tasks the branch (Pi's `getBranch()`, oldest first) still owes an outcome for. */
export function owedTasks(entries: Iterable<unknown>): OwedTask[] {
  const owed = new Map<string, OwedTask>();
  for (const entry of entries) {
    if (!isJsonObject(entry)) continue;
    if (entry.type === "custom_message" && entry.customType === TASK_OUTCOME_MESSAGE_TYPE) {
      const taskId = isJsonObject(entry.details) ? entry.details.taskId : undefined;
      if (typeof taskId === "string") owed.delete(taskId);
      continue;
    }
    if (entry.type !== "custom" || entry.customType !== TASK_ENTRY_TYPE) continue;
    const record = readRecord(entry.data);
    if (record?.kind === "handed-back") owed.set(record.taskId, { handedBack: record });
    else if (record?.kind === "left") {
      const task = owed.get(record.taskId);
      if (task) task.left = record;
    }
  }
  return [...owed.values()];
}

/** A record read back from the session file (written by another version, or edited): checked, else none. */
function readRecord(data: unknown): TaskRecord | undefined {
  if (!isJsonObject(data) || typeof data.taskId !== "string") return undefined;
  if (data.kind === "left") {
    return typeof data.kept === "boolean" && typeof data.reason === "string"
      ? { kind: "left", taskId: data.taskId, kept: data.kept, reason: data.reason }
      : undefined;
  }
  const call = data.call;
  if (data.kind !== "handed-back" || !isJsonObject(call) || typeof call.server !== "string" || typeof call.tool !== "string")
    return undefined;
  if (typeof data.startedAt !== "number") return undefined;
  return {
    kind: "handed-back",
    taskId: data.taskId,
    call: { server: call.server, tool: call.tool, args: isJsonObject(call.args) ? call.args : {} },
    startedAt: data.startedAt,
    ...(typeof data.createdAt === "number" ? { createdAt: data.createdAt } : {}),
    ...(typeof data.ttlMs === "number" || data.ttlMs === null ? { ttlMs: data.ttlMs } : {}),
    ...(isJsonObject(data.reference) ? { reference: data.reference } : {}),
  };
}

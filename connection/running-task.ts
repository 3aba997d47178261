/**
 * A tool call that a server runs as a task (MCP Tasks: 2025-11-25's experimental tasks, 2026-07-28's Tasks
 * extension), as both halves of the connection code and the tasks area (tasks.ts) see it, free of the SDK at run
 * time: the SDK half (connection/task-calls.ts) drives it through the official `@modelcontextprotocol/ext-tasks`, the
 * host side waits for it, hands it back to the model, delivers its outcome, lists and cancels it.
 */
import type { CallToolResult } from "@modelcontextprotocol/client";

export type TaskState = "working" | "input_required" | "completed" | "failed" | "cancelled";

/** What is known of a task now: its last `tasks/get` answer (or status notification). */
export interface TaskView {
  taskId: string;
  status: TaskState;
  statusMessage?: string;
  /** When the server created it (epoch ms), if it said. */
  createdAt?: number;
  /** How long after `createdAt` the server keeps it; `null`: no limit; unset: not said. */
  ttlMs?: number | null;
}

/**
 * How a task ended. `lost`: it did not end on the server as far as we know, but we can no longer follow it (the
 * connection or the server went, `tasks/get` kept failing, an answer could not be read): `message` says why.
 */
export type TaskOutcome =
  | { status: "completed"; result: CallToolResult }
  | { status: "failed"; message: string; code?: number }
  | { status: "cancelled"; message?: string }
  | { status: "lost"; message: string };

/**
 * What a later session needs to follow a task again (kept in the Pi session): ext-tasks' serialized reference,
 * opaque here. Only a task its server keeps beyond our connection is worth it (`RunningTask.keptByServer`).
 */
export type TaskReference = Record<string, unknown>;

export interface RunningTask {
  readonly taskId: string;
  readonly reference: TaskReference;
  /**
   * The server keeps it when our connection ends (a 2026-07-28 server over HTTP: its tasks are not bound to a
   * session), so a resumed Pi session can follow it; a stdio server's tasks end with its process.
   */
  readonly keptByServer: boolean;
  readonly view: TaskView;
  /** Called on every change of `view`. */
  onChange(listener: (view: TaskView) => void): void;
  /** Settles once, never rejects. */
  readonly outcome: Promise<TaskOutcome>;
  /** `tasks/cancel`; the outcome follows (cancelled, or what it ended with meanwhile). Never rejects. */
  cancel(): Promise<void>;
  /** Stops following it here (no more polls) and leaves it running on the server: `outcome` settles `lost`. */
  release(reason: string): void;
}

/** What a call asks of task execution. */
export interface TaskPolicy {
  /** Call tools that declare `taskSupport: "optional"` (2025-11-25) as tasks too. */
  optionalAsTask: boolean;
}

/** A `tools/call`'s answer: its result, or the task the server runs it as. */
export type ToolCallStart = { kind: "result"; result: CallToolResult } | { kind: "task"; task: RunningTask };

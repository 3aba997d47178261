/**
 * How long a tool call that runs as a task is waited for, and how long a task may run: `settings.tasks` with a
 * server's own `tasks` over it, field by field.
 *
 * - `waitMs` (default 30 s): a task still running then is handed back to the model with a note, and goes on running;
 *   its outcome arrives in the conversation by itself. 0 hands it back at once. Short enough that the model is never
 *   held long by work it could leave running, long enough that most tasks (a research query, a test run) come back
 *   as an ordinary result.
 * - `maxRunMs` (default 60 min, as `maxTotalTimeoutMs` bounds a plain call): a task's whole run, waited for or not;
 *   past it the task is cancelled. The task's own `ttl` ends it sooner: the server may discard it then.
 * - `optional` (default `plain`): whether a 2025-11-25 tool whose task support is `optional` is called as a task.
 *   A task costs at least one poll interval of latency (the everything server asks for 1 s), which a quick tool
 *   should not pay; a server that knows a tool is long marks it `required`.
 */
import type { McpSettings, ServerEntry, TaskSettings } from "../types.ts";

export const DEFAULT_TASK_WAIT_MS = 30_000;
export const DEFAULT_MAX_TASK_RUN_MS = 60 * 60_000;

export interface TaskLimits {
  waitMs: number;
  maxRunMs: number;
  optionalAsTask: boolean;
  /** The field that set `maxRunMs`: what a message about it names. */
  maxRunSource: string;
}

export function taskLimits(serverName: string, server: ServerEntry | undefined, settings: McpSettings): TaskLimits {
  const own: TaskSettings = server?.tasks ?? {};
  const global: TaskSettings = settings.tasks ?? {};
  const maxRunSource =
    own.maxRunMs !== undefined
      ? `mcpServers.${serverName}.tasks.maxRunMs`
      : global.maxRunMs !== undefined
        ? "settings.tasks.maxRunMs"
        : "the default";
  return {
    waitMs: own.waitMs ?? global.waitMs ?? DEFAULT_TASK_WAIT_MS,
    maxRunMs: own.maxRunMs ?? global.maxRunMs ?? DEFAULT_MAX_TASK_RUN_MS,
    optionalAsTask: (own.optional ?? global.optional) === "task",
    maxRunSource,
  };
}

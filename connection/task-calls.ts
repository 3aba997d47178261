/**
 * Tool calls a server runs as tasks, through the official `@modelcontextprotocol/ext-tasks` requester, in both eras:
 *
 * - 2025-11-25 (experimental tasks, SEP-1686): a tool that declares `taskSupport: "required"` (or `"optional"`, when
 *   the caller asks for it) of a server with the `tasks.requests.tools.call` capability is called with a `task`
 *   parameter; ext-tasks polls `tasks/get` and reads `tasks/result`. One thing the package does not do: a 2025 server
 *   delivers the requests it ties to a task (an elicitation mid-task) only on a `tasks/result` stream, which ext-tasks
 *   opens only once the task has ended, so a task waiting for input would wait for ever. While a task of ours is in
 *   `input_required`, one `tasks/result` is kept open here for them to arrive on (the SDK's v1 client does the same);
 *   they are answered by the client's handlers like any other request (connection/mcp-client.ts).
 * - 2026-07-28 (the Tasks extension, SEP-2663): the server decides per call, so every call to a server that offers
 *   the extension declares it and may come back as a task; `input_required` is answered with `tasks/update` by the
 *   same handlers. The SDK's request layer refuses a task answer: those requests go through RawRequests
 *   (connection/raw-requests.ts), which ext-tasks asks its host for. A tool that declares HTTP headers for its
 *   parameters (SEP-2243) is called the SDK's way over HTTP, since only the SDK sends those headers (it has no public
 *   way to build them): such a tool cannot become a task.
 *
 * The poll interval a server suggests is kept within POLL_INTERVAL_BOUNDS (a 0 would have us poll every 10 ms,
 * ext-tasks' floor; an hour would leave a finished task unseen), and a task that has run a while is polled less often:
 * at most every tenth of its age (up to the 30 s bound: a task of a minute every 6 s), so a long task handed
 * back costs little (bench/tasks.ts: about 1.6 ms of CPU per poll) and its end is still seen within a tenth of its run.
 * A task's whole run is bounded by the caller (tasks.ts): here each request has the call's time limit.
 */
import {
  type CallToolResult,
  type Client,
  SdkError,
  SdkErrorCode,
  type ServerCapabilities,
  type Transport,
} from "@modelcontextprotocol/client";
import {
  type ConnectedMcpSessionPort,
  createApplicationInputHandler,
  createSessionPortFromClient,
  DispatchError,
  type DispatchOptions,
  type SerializedTaskReference,
  type TaskEnabledSession,
  type TaskExecutionEvent,
  type TaskOutcome as ExtTaskOutcome,
  type ToolExecution,
  taskViewFromExecutionEvent,
  toolDeclaration,
  withTasks,
} from "@modelcontextprotocol/ext-tasks/client";
import type { JsonValue } from "@modelcontextprotocol/ext-tasks/core";
import { hasTaskServerCapabilityV2 } from "@modelcontextprotocol/ext-tasks/core/v2";
import { waitAtMost, withOwnSignal } from "../util/abort.ts";
import { debugLog, ignored } from "../util/debug-log.ts";
import { formatDuration } from "../util/format-time.ts";
import { isJsonObject } from "../util/guards.ts";
import type { McpTool } from "../types.ts";
import { ADAPTER_INFO } from "../util/own-version.ts";
import { answerInput, clientCapabilities, type InputHandlers, MAX_INPUT_ROUNDS } from "./mcp-client.ts";
import { RawRequests } from "./raw-requests.ts";
import type { RunningTask, TaskOutcome, TaskPolicy, TaskReference, TaskView, ToolCallStart } from "./running-task.ts";
import { declaresHeaders } from "./tool-headers.ts";

/** A server's suggested poll interval is taken within these bounds (ms); none suggested: ext-tasks' 1 s. */
export const POLL_INTERVAL_BOUNDS = { min: 250, max: 30_000 } as const;
/** A task is polled at most every `age / POLL_AGE_FRACTION` (within the bounds). */
const POLL_AGE_FRACTION = 10;
/** Why the tasks a session still follows when it ends were cancelled: said with each (the call, the delivered outcome). */
const STOPPED_WITH_SERVER = "its server was stopped while it ran (a reconnect, a config change, or the end of the Pi session)";
/** How long closing a session waits for the `tasks/cancel` of each task it still follows. */
const CANCEL_AT_CLOSE_MS = 1_000;
/** A schema that takes any answer as it came (for requests whose answer is not read, or read elsewhere). */
export const ANY_RESULT = {
  "~standard": { version: 1 as const, vendor: "pi-mcp-adapter", validate: (value: unknown) => ({ value }) },
};

/** A call's own options: the time limit of each request, its cancel (before the task exists), what its `_meta` holds. */
export interface TaskCallOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  /** The request's `_meta` of the session's own (2026: the log level it asks for). */
  meta?: Record<string, unknown>;
}

export interface TaskCallsParts {
  serverName: string;
  client: Client;
  transport: Transport;
  /** The same for every connection to this server (it scopes the references a later session resumes). */
  endpointId: string;
  handlers: InputHandlers;
  /** Over HTTP a 2026 server keeps its tasks beyond our connection; on stdio they end with its process. */
  http: boolean;
  /** Why a request failed, as the session words it (a stdio server's exit, a closed connection). */
  describeFailure(error: unknown): string;
}

/** One session's tasks: its ext-tasks session (made on the first task call) and the tasks it follows. */
export class TaskCalls {
  private readonly parts: TaskCallsParts;
  private tasks?: { session: TaskEnabledSession; port: ConnectedMcpSessionPort & Disposable };
  private readonly running = new Set<ExtTask>();

  constructor(parts: TaskCallsParts) {
    this.parts = parts;
  }

  private get modern(): boolean {
    return this.parts.client.getProtocolEra() === "modern";
  }

  /** Whether a call of `tool` goes through ext-tasks (it may become a task), rather than the SDK's plain call. */
  handles(tool: McpTool, policy: TaskPolicy): boolean {
    const server = { modern: this.modern, http: this.parts.http, capabilities: this.parts.client.getServerCapabilities() };
    return callsThroughTasks(server, tool, policy);
  }

  async start(tool: McpTool, args: Record<string, unknown>, options: TaskCallOptions, policy: TaskPolicy): Promise<ToolCallStart> {
    const session = this.session();
    // The call's signal cancels the tools/call only: the task, once made, lives on past the call (it is handed back).
    try {
      return await withOwnSignal(options.signal ?? new AbortController().signal, async (signal): Promise<ToolCallStart> => {
        const execution = await session.callTool(tool.name, args as Record<string, JsonValue>, {
          declaration: declarationOf(tool),
          signal,
          requestTimeoutMs: options.timeoutMs,
          task: { preference: tool.taskSupport === "optional" && policy.optionalAsTask ? "prefer" : "allow" },
          ...(options.meta ? { metadata: options.meta as Record<string, JsonValue> } : {}),
        });
        if (execution.kind === "immediate") {
          const { outcome } = await execution.settle();
          return { kind: "result", result: completedResult(outcome) };
        }
        return { kind: "task", task: this.follow(execution) };
      });
    } catch (error) {
      throw unwrapped(error);
    }
  }

  /** Follows a task a reference names (an earlier Pi session's), as `start` follows a new one. */
  async resume(reference: TaskReference, options: TaskCallOptions): Promise<RunningTask> {
    try {
      const execution = await this.session().resumeTask(reference as unknown as SerializedTaskReference, {
        requestTimeoutMs: options.timeoutMs,
      });
      if (execution.kind === "immediate") throw new Error("the server did not answer with the task");
      return this.follow(execution);
    } catch (error) {
      throw unwrapped(error);
    }
  }

  /**
   * The end of the session: tasks still followed (not released) are cancelled, at most CANCEL_AT_CLOSE_MS each; on a
   * connection that is gone already (a crash) there is nothing to tell, and each task says what happened by itself.
   * Released tasks are let go first: ext-tasks' session close cancels every execution it still holds, and a released
   * one is dropped from its hold only once its end has gone round (detaching it is not enough).
   */
  async close(): Promise<void> {
    const running = [...this.running];
    if (this.parts.client.transport) await Promise.all(running.map((task) => task.cancelAtClose(CANCEL_AT_CLOSE_MS)));
    await Promise.all(running.filter((task) => task.isReleased).map((task) => task.outcome));
    await new Promise((resolve) => setImmediate(resolve));
    const tasks = this.tasks;
    this.tasks = undefined;
    if (!tasks) return;
    await tasks.session.close().catch(ignored(`${this.parts.serverName}: closing the task session`));
    tasks.port[Symbol.dispose]();
  }

  private follow(execution: ToolExecution<unknown> & { kind: "task" }): ExtTask {
    const task = new ExtTask(execution, {
      keptByServer: this.modern && this.parts.http,
      generation: this.modern ? "v2" : "v1",
      openResultStream: (taskId, signal, timeoutMs) => this.openResultStream(taskId, signal, timeoutMs),
      describeFailure: (error) => this.describeFailure(error),
    });
    this.running.add(task);
    void task.outcome.then(() => this.running.delete(task));
    return task;
  }

  /** Why a task could no longer be followed, in a line: the connection's end as the session words it, else the cause. */
  private describeFailure(error: unknown): string {
    // The client drops its transport when the connection closes (ext-tasks only says "MCP client connection closed").
    if (!this.parts.client.transport) return this.parts.describeFailure(new SdkError(SdkErrorCode.ConnectionClosed, "Connection closed"));
    const cause = rootCause(error);
    return timeoutText(cause) ?? schemaProblem(cause) ?? this.parts.describeFailure(cause);
  }

  /** 2026: ext-tasks' raw request path, with what frames each request (what the SDK puts in a request's `_meta`). */
  private rawPath(transport: Transport) {
    const raw = new RawRequests(transport);
    const { client, handlers } = this.parts;
    return {
      rawDispatch: (request: JsonValue, options?: DispatchOptions) => raw.dispatch(request, options),
      v2RequestFraming: {
        protocolVersion: client.getNegotiatedProtocolVersion() ?? "",
        clientInfo: ADAPTER_INFO,
        clientCapabilities: clientCapabilities(this.parts.serverName, handlers) as Record<string, JsonValue>,
      },
    };
  }

  /** 2025: a `tasks/result` held open while a task waits for input, for the requests the server ties to it. */
  private openResultStream(taskId: string, signal: AbortSignal, timeoutMs: number): Promise<unknown> {
    return this.parts.client.request({ method: "tasks/result", params: { taskId } }, ANY_RESULT, { signal, timeout: timeoutMs });
  }

  /**
   * The ext-tasks session, made on first use (after the session's own handlers are set: its port chains them). Its
   * port is ours: the poll intervals of the answers it reads are bounded on the way.
   */
  private session(): TaskEnabledSession {
    if (this.tasks) return this.tasks.session;
    const { client, transport, endpointId, handlers, serverName } = this.parts;
    const port = createSessionPortFromClient(client, endpointId, this.modern ? this.rawPath(transport) : {});
    const answer = (kind: "elicitation" | "sampling" | "roots") => (request: { params?: unknown }, context: { signal?: AbortSignal }) =>
      answerInput(serverName, handlers, { kind, params: request.params } as never, context.signal ?? new AbortController().signal) as never;
    const session = withTasks(boundedPolls(port), {
      // Declarations come with each call (from the server's listing): ext-tasks need not list the tools itself.
      tools: { currentTool: () => undefined },
      onInputRequest: createApplicationInputHandler({
        elicitation: answer("elicitation"),
        sampling: answer("sampling"),
        roots: answer("roots"),
      }),
      maxInputRounds: MAX_INPUT_ROUNDS,
      onError: (error) => debugLog(`${serverName}: a task's background work failed`, error),
    });
    this.tasks = { session, port };
    return session;
  }
}

/** What decides a call's path: the server's era, its transport, what it offers. */
export interface TaskServer {
  modern: boolean;
  http: boolean;
  capabilities: ServerCapabilities | undefined;
}

/**
 * Whether a call of `tool` goes through ext-tasks (see the module comment): in the 2026 era, every call to a server
 * with the Tasks extension but a tool declaring HTTP headers over HTTP; in the 2025 one, a `required` tool (even on a
 * server without the capability: ext-tasks then says what is wrong), and an `optional` one when `policy` asks.
 */
export function callsThroughTasks(server: TaskServer, tool: McpTool, policy: TaskPolicy): boolean {
  if (server.modern) return hasTaskServerCapabilityV2(server.capabilities) && !(server.http && declaresHeaders(tool.inputSchema));
  return tool.taskSupport === "required" || (tool.taskSupport === "optional" && policy.optionalAsTask && !!server.capabilities?.tasks);
}

interface ExtTaskDeps {
  keptByServer: boolean;
  generation: "v1" | "v2";
  openResultStream(taskId: string, signal: AbortSignal, timeoutMs: number): Promise<unknown>;
  describeFailure(error: unknown): string;
}

/** A task ext-tasks drives, as a RunningTask. */
class ExtTask implements RunningTask {
  readonly taskId: string;
  readonly reference: TaskReference;
  readonly keptByServer: boolean;
  view: TaskView;
  readonly outcome: Promise<TaskOutcome>;
  private readonly execution: ToolExecution<unknown> & { kind: "task" };
  private readonly deps: ExtTaskDeps;
  private readonly listeners: ((view: TaskView) => void)[] = [];
  /** Why we stopped following it: released (left on the server), or stopped with its server. */
  private released?: string;
  /** 2025: the `tasks/result` held open while the task waits for input. */
  private resultStream?: AbortController;

  constructor(execution: ToolExecution<unknown> & { kind: "task" }, deps: ExtTaskDeps) {
    this.execution = execution;
    this.deps = deps;
    this.taskId = execution.handle.taskId;
    this.reference = execution.serializeReference() as unknown as TaskReference;
    this.keptByServer = deps.keptByServer;
    this.view = { taskId: this.taskId, status: "working" };
    const describe = (error: unknown) => this.released ?? deps.describeFailure(error);
    this.outcome = execution
      .settle({ onEvent: (event) => this.observe(event) })
      .then(
        ({ outcome }) => outcomeOf(outcome, this.released ? { ...this.view, statusMessage: this.released } : this.view, describe),
        (error: unknown): TaskOutcome => ({ status: "lost", message: describe(error) }),
      )
      .finally(() => this.resultStream?.abort());
  }

  onChange(listener: (view: TaskView) => void): void {
    this.listeners.push(listener);
  }

  async cancel(): Promise<void> {
    await this.execution.cancel().catch((error: unknown) => debugLog(`task ${this.taskId}: tasks/cancel failed`, error));
  }

  release(reason: string): void {
    this.released = reason;
    void this.execution.detach();
  }

  /** Released: left running on its server (see `release`), not stopped with it. */
  get isReleased(): boolean {
    return this.released !== undefined && this.released !== STOPPED_WITH_SERVER;
  }

  /** At the end of the session: cancelled, unless released; waits at most `ms`. */
  async cancelAtClose(ms: number): Promise<void> {
    if (this.released) return;
    this.released = STOPPED_WITH_SERVER;
    await waitAtMost(this.cancel(), ms);
  }

  private observe(event: TaskExecutionEvent<unknown>): void {
    const task = taskViewFromExecutionEvent(event);
    if (!task) return;
    const createdAt = task.createdAt ? Date.parse(task.createdAt) : Number.NaN;
    this.view = {
      taskId: task.taskId,
      status: task.status,
      ...(task.statusMessage ? { statusMessage: task.statusMessage } : {}),
      ...(Number.isFinite(createdAt) ? { createdAt } : {}),
      ttlMs: task.retentionMs,
    };
    if (this.deps.generation === "v1") this.keepResultStream(task.status === "input_required");
    for (const listener of this.listeners) listener(this.view);
  }

  private keepResultStream(open: boolean): void {
    if (!open) {
      this.resultStream?.abort();
      this.resultStream = undefined;
      return;
    }
    if (this.resultStream) return;
    const stream = new AbortController();
    this.resultStream = stream;
    // Its answer is the task's result, which ext-tasks reads itself once the task ended: only its requests matter here.
    this.deps
      .openResultStream(this.taskId, stream.signal, 24 * 60 * 60_000)
      .catch(ignored(`task ${this.taskId}: the tasks/result held open for its input`))
      .finally(() => {
        if (this.resultStream === stream) this.resultStream = undefined;
      });
  }
}

/**
 * ext-tasks' outcome as ours. ext-tasks reports as `failed` both a task the server says failed and one it could not
 * follow (a poll that failed or timed out, an answer it could not read, the connection gone): only the first has
 * `failed` as its last status; the others are `lost`, said by `describe`.
 */
function outcomeOf(outcome: ExtTaskOutcome<unknown>, view: TaskView, describe: (error: unknown) => string): TaskOutcome {
  if (outcome.status === "completed") return { status: "completed", result: outcome.result as CallToolResult };
  if (outcome.status === "cancelled") return { status: "cancelled", ...(view.statusMessage ? { message: view.statusMessage } : {}) };
  if (view.status !== "failed") return { status: "lost", message: describe(outcome.error) };
  const { message, code } = outcome.error;
  return { status: "failed", message, ...(code !== undefined ? { code } : {}) };
}

/** An immediate answer's result (ext-tasks settles it as an outcome; a failure there is the call's error). */
function completedResult(outcome: ExtTaskOutcome<unknown>): CallToolResult {
  if (outcome.status === "completed") return outcome.result as CallToolResult;
  throw outcome.status === "failed" ? outcome.error : new Error("the call was cancelled");
}

interface SchemaIssue {
  code?: string;
  path?: (string | number)[];
  message?: string;
  errors?: SchemaIssue[][];
}

/**
 * An answer that did not fit the extension's schema (the schema library's error), in a line: its most specific
 * problem, the deepest path across the branches of a union.
 */
function schemaProblem(error: unknown): string | undefined {
  const issues = (error as { issues?: unknown } | undefined)?.issues;
  if (!Array.isArray(issues) || issues.length === 0) return undefined;
  const leaves = (list: SchemaIssue[]): SchemaIssue[] =>
    list.flatMap((issue) => (issue.code === "invalid_union" && issue.errors?.length ? issue.errors.flatMap(leaves) : [issue]));
  const deepest = leaves(issues as SchemaIssue[]).reduce((best, issue) =>
    (issue.path?.length ?? 0) > (best.path?.length ?? 0) ? issue : best,
  );
  return `the server's answer is not a valid task (${deepest.path?.join(".") || "the answer"}: ${deepest.message})`;
}

/** The innermost cause: what happened, under ext-tasks' wrappers (TaskFailedError, DispatchError, ProtocolDecodeError). */
function rootCause(error: unknown): unknown {
  return error instanceof Error && error.cause !== undefined ? rootCause(error.cause) : error;
}

/** ext-tasks wraps what the transport threw in DispatchError: the cause says what happened. */
function unwrapped(error: unknown): unknown {
  return error instanceof DispatchError && error.cause !== undefined ? unwrapped(error.cause) : error;
}

/** A request of a task's that got no answer in time, as the call's time limit words it. */
function timeoutText(error: unknown): string | undefined {
  if (!(error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout)) return undefined;
  const timeout = (error.data as { timeout?: unknown } | undefined)?.timeout;
  const limit = typeof timeout === "number" ? ` within ${formatDuration(timeout)}` : "";
  return `a request for it got no answer${limit} (requestTimeoutMs)`;
}

function declarationOf(tool: McpTool) {
  return toolDeclaration({
    name: tool.name,
    inputSchema: (isJsonObject(tool.inputSchema) ? tool.inputSchema : { type: "object" }) as Record<string, JsonValue>,
    ...(tool.taskSupport ? { taskSupport: tool.taskSupport } : {}),
  });
}

/** The port, with every poll interval a server suggests (in an answer or a status notification) within bounds. */
function boundedPolls(port: ConnectedMcpSessionPort): ConnectedMcpSessionPort {
  return {
    endpointId: port.endpointId,
    taskCapabilities: port.taskCapabilities,
    get invalidated() {
      return port.invalidated;
    },
    dispatch: async (request, options) => {
      const response = await port.dispatch(request, options);
      return response.kind === "result" ? { kind: "result", result: withBoundedPollIntervals(response.result) } : response;
    },
    onServerRequest: (handler) => port.onServerRequest(handler),
    onNotification: (listener) => port.onNotification((notification) => listener(withBoundedPollIntervals(notification))),
    onInvalidated: (listener) => port.onInvalidated(listener),
  };
}

const POLL_FIELDS = ["pollInterval", "pollIntervalMs"] as const;

/**
 * A task answer (`tasks/get`, a task's creation, a status notification, in either era's shape) with its suggested
 * poll interval within POLL_INTERVAL_BOUNDS, and no shorter than a tenth of the task's age (its `createdAt`);
 * anything else as it came.
 */
export function withBoundedPollIntervals(value: JsonValue, now = Date.now()): JsonValue {
  if (!isJsonObject(value)) return value;
  let changed: Record<string, JsonValue> | undefined;
  for (const key of ["task", "params"] as const) {
    const inner = value[key] as JsonValue | undefined;
    const bounded = inner === undefined ? undefined : withBoundedPollIntervals(inner, now);
    if (bounded !== inner) changed = { ...(changed ?? value), [key]: bounded as JsonValue };
  }
  const createdAt = typeof value.createdAt === "string" ? Date.parse(value.createdAt) : Number.NaN;
  const age = Number.isFinite(createdAt) ? Math.max(0, now - createdAt) : 0;
  for (const field of POLL_FIELDS) {
    if (!(field in value)) continue;
    const bounded = boundedPollInterval(value[field], age);
    if (bounded !== value[field]) changed = { ...(changed ?? value), [field]: bounded };
  }
  return changed ?? value;
}

function boundedPollInterval(value: unknown, age: number): number {
  const suggested = typeof value === "number" && Number.isFinite(value) ? Math.round(value) : POLL_INTERVAL_BOUNDS.min;
  const floor = Math.max(POLL_INTERVAL_BOUNDS.min, Math.round(age / POLL_AGE_FRACTION));
  return Math.min(POLL_INTERVAL_BOUNDS.max, Math.max(floor, suggested));
}

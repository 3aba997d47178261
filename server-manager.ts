/**
 * Connections to MCP servers: sharing one connection (and one process) per server, what each is doing for
 * `/mcp status`, the requests in flight (for idle shutdown), and ending them together with every process they started.
 * A connection that is up, with its lists kept current, is a LiveConnection (connection/live-connection.ts). The OAuth sign-ins
 * are connection/oauth-signins.ts's: the manager owns them and passes its sign-in methods on to them.
 *
 * Everything that needs the MCP SDK (opening a session, its requests and notifications, what its errors mean) is in
 * connection/sdk-session.ts, loaded on the first connect (connection/sdk-loader.ts): the SDK is most of the extension's load time,
 * and with lazy servers nothing connects at startup. The session it opens is used through `McpSession`
 * (connection/session.ts), so neither half imports the other.
 */
import type { CallToolResult, GetPromptResult, ReadResourceResult } from "@modelcontextprotocol/client";
import { withOwnSignal } from "./util/abort.ts";
import { forEachAtMost } from "./util/async-work.ts";
import {
  type CompletionRequest,
  type ElicitationHandler,
  NeedsAuthError,
  type SamplingHandler,
  type SessionSettings,
  type UrlElicitationHandler,
} from "./connection/session.ts";
import { transportFamily } from "./connection/server-target.ts";
import { loadConnectionCode } from "./connection/sdk-loader.ts";
import { debugLog, ignored } from "./util/debug-log.ts";
import { errorMessage, toError } from "./util/guards.ts";
import type { LiveConnection, ServerConnection } from "./connection/live-connection.ts";
import { establish, type KnownServer } from "./connection/establish.ts";
import { type CallOptions, DEFAULT_REQUEST_TIMEOUT_MS, requestOptions } from "./connection/request-options.ts";
import { type SignInNeededListener, type SignInOptions, SignIns } from "./connection/oauth-signins.ts";
import { OutputTail } from "./connection/stderr-tail.ts";
import { logLevelOf, ServerLog, type ServerLogEntry } from "./connection/server-log.ts";
import type { MessageTrace } from "./connection/protocol-trace.ts";
import type { LogLevelSetting, ServerDefinition, SkillEntry, SkillRead, TransportKind } from "./types.ts";
import type { RunningTask, TaskPolicy, TaskReference, ToolCallStart } from "./connection/running-task.ts";
import { ConnectCancelledError, ShuttingDownError } from "./connection/connect-errors.ts";

export { ConnectCancelledError, ShuttingDownError };

/** Whether a server can be signed in to, for the commands that offer it. */
export { canSignIn, describeTokenSource, tokensWithoutSignIn } from "./connection/auth-checks.ts";
export { IncompatibleServerError, NeedsAuthError } from "./connection/session.ts";
export type { ListsFreshUntil, ServerConnection } from "./connection/live-connection.ts";
export type { CompletionRequest, ProtocolVerdict } from "./connection/session.ts";
export { formatLogEntry, logLevelOf, type ServerLogEntry } from "./connection/server-log.ts";
export type {
  RunningTask,
  TaskOutcome,
  TaskPolicy,
  TaskReference,
  TaskView,
  ToolCallStart,
} from "./connection/running-task.ts";

export { type CallOptions, DEFAULT_MAX_TOTAL_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS } from "./connection/request-options.ts";
export const DEFAULT_CONNECT_CONCURRENCY = 10;

export type ServerStatus = "idle" | "connecting" | "connected" | "closed" | "failed" | "needs-auth";

export interface ServerState {
  /** `idle`: never connected in this session. */
  status: ServerStatus;
  /** Why the last attempt failed or the connection ended; never contains a token. */
  lastError?: string;
  connectedAt?: number;
  /** stdio: the server's process id while connected. */
  pid?: number;
  transport?: TransportKind;
  /** The last lines the server wrote to stderr (its latest process). */
  stderrTail: string[];
  /** `needs-auth` that a sign-in fixes (OAuth), rather than a config change. */
  needsSignIn: boolean;
  /** A sign-in is waiting for the browser. */
  signingIn: boolean;
}

export interface McpServerManagerOptions {
  /** Pi's agent directory (npx resolution keeps its cache there). */
  agentDir: string;
  /** Called after a server's tools, resources or prompts changed (a `list_changed` notification was followed). */
  onMetadataChanged?: (name: string) => void;
  /** Per-request timeout for tool calls and resource reads; restarted by progress notifications. */
  requestTimeoutMs?: number;
  /** Run `npx pkg` servers straight from npm's cache, without the npm parent process. Default true. */
  resolveNpx?: boolean;
  /** Without it, servers are told the client cannot elicit (they must not ask). */
  elicitation?: ElicitationHandler;
  /** Without it, servers are told the client cannot open pages for them (URL-mode elicitation). */
  urlElicitation?: UrlElicitationHandler;
  /** Without it, servers are told the client cannot sample (ask the user's model for a completion). */
  sampling?: SamplingHandler;
  /** What the server's last connection taught (the metadata cache keeps it): the protocol probe and valid lists are skipped. */
  known?: (def: ServerDefinition) => KnownServer | undefined;
  /**
   * The directories servers may work in, answered to `roots/list` (Pi's working directory). Fixed for the manager's
   * life: a Pi session never changes its directory, and a new session gets a new manager (its servers restart).
   */
  roots?: readonly string[];
  /** Which servers are told the client renders tools' views (MCP Apps); unset: none. */
  viewsOffered?: (serverName: string) => boolean;
  /** A server needs the user to sign in (OAuth). Called once per server, and again only after a sign-in succeeded. */
  onSignInNeeded?: SignInNeededListener;
  /** A server logged a message at its `logLevel` or up (it is kept: `serverLog`); `firstSevere`: its first error or worse. */
  onServerLog?: (name: string, entry: ServerLogEntry, firstSevere: boolean) => void;
  /** The protocol trace every connection is hooked into (`/mcp trace`). */
  trace?: MessageTrace;
}

interface PendingConnect {
  promise: Promise<ServerConnection>;
  cancel: AbortController;
}

interface ServerRecord {
  name: string;
  status: ServerStatus;
  /** With status `needs-auth`: a sign-in fixes it. */
  needsSignIn: boolean;
  lastError?: string;
  transport?: TransportKind;
  stderr: OutputTail;
  /** What it logged this session, across its connections. */
  log: ServerLog;
  connection?: LiveConnection;
  pending?: PendingConnect;
  closing?: Promise<void>;
  inFlight: number;
  /** Requests made on it so far: a listing tells by it whether a call used the server it started (lifecycle.ts). */
  requests: number;
  lastUsedAt: number;
}

export class McpServerManager {
  private readonly records = new Map<string, ServerRecord>();
  private readonly sessionSettings: SessionSettings;
  private readonly onMetadataChanged?: (name: string) => void;
  private readonly requestTimeoutMs: number;
  private readonly signIns: SignIns;
  private readonly known?: (def: ServerDefinition) => KnownServer | undefined;
  private readonly onServerLog?: McpServerManagerOptions["onServerLog"];
  /** Set by `shutdown()`: from then on no connect starts anything (background work may still ask for one). */
  private shuttingDown = false;

  constructor(options: McpServerManagerOptions) {
    const { agentDir, elicitation, urlElicitation, sampling, roots = [], trace, viewsOffered } = options;
    this.sessionSettings = {
      agentDir,
      resolveNpx: options.resolveNpx ?? true,
      elicitation,
      urlElicitation,
      sampling,
      roots: () => roots,
      trace,
      viewsOffered,
    };
    this.known = options.known;
    this.onServerLog = options.onServerLog;
    this.onMetadataChanged = options.onMetadataChanged;
    this.requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.signIns = new SignIns(options.agentDir, options.onSignInNeeded);
  }

  /** The live connection, or a new one. Concurrent calls for one server share one attempt (and one process). */
  connect(def: ServerDefinition): Promise<ServerConnection> {
    if (this.shuttingDown) return Promise.reject(new ShuttingDownError(def.name));
    const record = this.record(def.name);
    if (record.connection) return Promise.resolve(record.connection);
    if (record.pending) return record.pending.promise;
    const cancel = new AbortController();
    const promise = this.establish(def, record, cancel.signal).then(
      (connection) => this.adopt(record, connection, cancel.signal, logLevelOf(def.logLevel)),
      (error: unknown) => {
        record.pending = undefined;
        if (cancel.signal.aborted) {
          record.status = "closed";
          throw cancel.signal.reason;
        }
        if (error instanceof NeedsAuthError) this.needsAuth(record, error);
        else {
          record.status = "failed";
          record.lastError = errorMessage(error);
        }
        throw error;
      },
    );
    record.pending = { promise, cancel };
    record.status = "connecting";
    record.lastError = undefined;
    return promise;
  }

  /** Connects many servers, at most `concurrency` at a time; never rejects. Results are in the order given. */
  async connectAll(
    defs: readonly ServerDefinition[],
    concurrency = DEFAULT_CONNECT_CONCURRENCY,
  ): Promise<Map<string, ServerConnection | Error>> {
    const results: (ServerConnection | Error)[] = [];
    // After shutdown the remaining servers are not tried: each would only be refused.
    const connect = async (def: ServerDefinition, index: number) => void (results[index] = await this.connect(def).catch(toError));
    await forEachAtMost(defs, concurrency, connect, () => this.shuttingDown);
    return new Map(defs.map((def, index) => [def.name, results[index] ?? new ShuttingDownError(def.name)]));
  }

  /**
   * Loads the connection code (the MCP SDK) ahead of a connect, e.g. while the model thinks about the tools
   * ToolSearch just loaded, so the first call does not wait for it. Never fails (the connect retries the load).
   */
  preloadConnectionCode(): void {
    loadConnectionCode().catch(ignored("preloading the connection code (the connect loads it again)"));
  }

  /**
   * Only a connection that is up. A stdio server that died is noticed here even before its pipes report it (a
   * killed process can sit unnoticed until Node next polls its events, or a process it started may hold the pipes
   * open), so no call is sent to a dead process.
   */
  getConnection(name: string): ServerConnection | undefined {
    const record = this.records.get(name);
    return record && this.liveConnection(record);
  }

  getState(name: string): ServerState {
    const record = this.records.get(name);
    if (!record) return { status: "idle", stderrTail: [], needsSignIn: false, signingIn: this.signIns.isWaiting(name) };
    const { connection } = record;
    return {
      status: record.status,
      lastError: record.lastError,
      connectedAt: connection?.connectedAt,
      pid: connection?.pid,
      transport: record.transport,
      stderrTail: record.stderr.lines(),
      needsSignIn: record.status === "needs-auth" && record.needsSignIn,
      signingIn: this.signIns.isWaiting(name),
    };
  }

  /** See `SignIns.signIn`; `closeAll` cancels a sign-in still waiting. */
  signIn(def: ServerDefinition, options: SignInOptions): Promise<void> {
    return this.signIns.signIn(def, options);
  }

  /** Ends a sign-in still waiting (it rejects). False when there was none. */
  cancelSignIn(name: string): boolean {
    return this.signIns.cancel(name);
  }

  /** See `SignIns.deliverCallback`. */
  deliverSignInCallback(name: string, address: string): { accepted: boolean; text: string } | undefined {
    return this.signIns.deliverCallback(name, address);
  }

  /** Whether tokens from a sign-in are stored for the server's URL. */
  isSignedIn(def: ServerDefinition): boolean {
    return this.signIns.isSignedIn(def);
  }

  /** Forgets the server's tokens and client registration (its connection is closed first). True if any were stored. */
  async signOut(def: ServerDefinition): Promise<boolean> {
    this.signIns.cancel(def.name);
    await this.close(def.name);
    return this.signIns.forget(def);
  }

  /** What the server logged this session (at its `logLevel` and up), the last `MAX_LOG_ENTRIES` of it. */
  serverLog(name: string): Pick<ServerLog, "entries" | "count"> | undefined {
    return this.records.get(name)?.log;
  }

  /**
   * The values the server suggests for a prompt's argument or a resource template's variable; none from a server
   * without the capability (never asked). The server is connected first when `options.connect` is given.
   */
  complete(
    name: string,
    request: CompletionRequest,
    options: Pick<CallOptions, "signal" | "connect" | "timeoutMs"> = {},
  ): Promise<string[]> {
    return this.track(name, options, (connection, signal) =>
      connection.session.complete(request, requestOptions(this.requestTimeoutMs, options, signal)),
    );
  }

  getPrompt(
    name: string,
    promptName: string,
    args: Record<string, string>,
    options: Pick<CallOptions, "signal" | "connect"> = {},
  ): Promise<GetPromptResult> {
    return this.track(name, options, (connection, signal) =>
      connection.session.getPrompt(promptName, args, requestOptions(this.requestTimeoutMs, {}, signal)),
    );
  }

  callTool(name: string, toolName: string, args: Record<string, unknown>, options: CallOptions = {}): Promise<CallToolResult> {
    return this.track(name, options, (connection, signal) => {
      const listed = connection.tools.find((tool) => tool.name === toolName);
      return connection.session.callTool(toolName, args, requestOptions(this.requestTimeoutMs, options, signal), listed);
    });
  }

  /**
   * `tools/call`, which may come back as a task the server runs (connection/task-calls.ts): the task counts as a
   * request in flight until it ends (no idle close meanwhile), and a close of the server cancels it.
   */
  async startToolCall(
    name: string,
    toolName: string,
    args: Record<string, unknown>,
    options: CallOptions & { policy: TaskPolicy },
  ): Promise<ToolCallStart> {
    const start = await this.track(name, options, (connection, signal) => {
      const listed = connection.tools.find((tool) => tool.name === toolName);
      return connection.session.startToolCall(
        toolName,
        args,
        requestOptions(this.requestTimeoutMs, options, signal),
        listed,
        options.policy,
      );
    });
    if (start.kind === "task") this.holdWhileRunning(name, start.task);
    return start;
  }

  /** Follows again a task an earlier Pi session left on the server (connected by the caller); held as `startToolCall`'s. */
  async resumeTask(name: string, reference: TaskReference): Promise<RunningTask> {
    const task = await this.track(name, {}, (connection, signal) =>
      connection.session.resumeTask(reference, requestOptions(this.requestTimeoutMs, {}, signal)),
    );
    this.holdWhileRunning(name, task);
    return task;
  }

  /** A task's whole run is use of its server: in flight (see `isIdle`) until it ends. */
  private holdWhileRunning(name: string, task: RunningTask): void {
    const record = this.record(name);
    record.inFlight++;
    void task.outcome.finally(() => {
      record.inFlight--;
      record.lastUsedAt = Date.now();
    });
  }

  readResource(
    name: string,
    uri: string,
    options: Pick<CallOptions, "signal" | "timeoutMs" | "maxTotalTimeoutMs" | "connect"> = {},
  ): Promise<ReadResourceResult> {
    return this.track(name, options, (connection, signal) =>
      connection.session.readResource(uri, requestOptions(this.requestTimeoutMs, options, signal)),
    );
  }

  /** One file of a skill the server publishes, verified against its entry (connection/skills.ts). */
  readSkillFile(
    name: string,
    entry: SkillEntry,
    fileUri: string,
    options: Pick<CallOptions, "signal" | "connect"> = {},
  ): Promise<SkillRead> {
    return this.track(name, options, (connection, signal) =>
      connection.session.readSkillFile(entry, fileUri, requestOptions(this.requestTimeoutMs, {}, signal)),
    );
  }

  /** How many requests were made on the server (ever, across its connections). */
  requestsMade(name: string): number {
    return this.records.get(name)?.requests ?? 0;
  }

  /** Connected, nothing in flight, and unused for `timeoutMs`. */
  isIdle(name: string, timeoutMs: number): boolean {
    const record = this.records.get(name);
    return !!record?.connection && record.inFlight === 0 && Date.now() - record.lastUsedAt >= timeoutMs;
  }

  /**
   * Ends the server (and every process it started); an attempt still connecting is cancelled. A close already under
   * way ends only what it found: a connection that came up meanwhile (a call reconnected while the old process took
   * its seconds to exit) is ended after it, so once this resolves nothing of the server's runs.
   */
  close(name: string): Promise<void> {
    const record = this.records.get(name);
    if (!record) return Promise.resolve();
    const earlier = record.closing?.catch(ignored(`${name}: an earlier close (its caller was told)`));
    const closing = (earlier ?? Promise.resolve()).then(() => this.closeRecord(record));
    record.closing = closing;
    const forget = () => {
      if (record.closing === closing) record.closing = undefined;
    };
    closing.then(forget, forget);
    return closing;
  }

  /**
   * The end of the session: every server ended (as `closeAll`), and every later connect refused with a
   * ShuttingDownError, so background work that is still running (startup workers, bootstrap, a reconnect, a revival,
   * a wait for a sign-in) starts no process. Resolves once every process of ours is gone.
   */
  shutdown(): Promise<void> {
    this.shuttingDown = true;
    return this.closeAll();
  }

  /** Safe to call again, and while connects or sign-ins are in flight: they are cancelled, their processes ended. */
  async closeAll(): Promise<void> {
    this.signIns.cancelAll();
    await Promise.all([...this.records.keys()].map((name) => this.close(name)));
  }

  private record(name: string): ServerRecord {
    let record = this.records.get(name);
    if (!record) {
      record = {
        name,
        status: "idle",
        needsSignIn: false,
        stderr: new OutputTail(),
        log: new ServerLog(),
        inFlight: 0,
        requests: 0,
        lastUsedAt: 0,
      };
      this.records.set(name, record);
    }
    return record;
  }

  /** The record's connection if its server still runs; one found dead is dropped (see `getConnection`). */
  private liveConnection(record: ServerRecord): LiveConnection | undefined {
    const { connection } = record;
    if (connection && !connection.isAlive()) {
      this.drop(record, connection, "the server process exited");
      return undefined;
    }
    return connection;
  }

  private async closeRecord(record: ServerRecord): Promise<void> {
    const { pending } = record;
    if (pending) {
      pending.cancel.abort(new ConnectCancelledError(record.name));
      await pending.promise.catch(ignored(`${record.name}: a connect cancelled by its close`));
    }
    const { connection } = record;
    if (!connection) return;
    record.connection = undefined;
    record.status = "closed";
    await connection.end();
  }

  private adopt(
    record: ServerRecord,
    connection: LiveConnection,
    cancelled: AbortSignal,
    logLevel: LogLevelSetting,
  ): Promise<ServerConnection> | ServerConnection {
    record.pending = undefined;
    record.transport = connection.transport;
    if (cancelled.aborted) {
      record.status = "closed";
      return connection.end().then(() => Promise.reject(cancelled.reason));
    }
    record.connection = connection;
    record.status = "connected";
    record.lastUsedAt = Date.now();
    connection.startProbing();
    this.watchConnection(record, connection, logLevel);
    return connection;
  }

  /** Spawn or reach the server, open the session, and read its lists (connection/establish.ts). */
  private establish(def: ServerDefinition, record: ServerRecord, cancelled: AbortSignal): Promise<LiveConnection> {
    const stdio = transportFamily(def) === "stdio";
    record.transport = stdio ? "stdio" : undefined;
    if (stdio) record.stderr = new OutputTail();
    const oauth = this.signIns.forConnect(def.name);
    return establish(def, { settings: this.sessionSettings, stderr: record.stderr, oauth, cancelled, known: this.known?.(def) });
  }

  /** Follows the connection after it is up: list_changed refreshes, noticing when it drops, and what the server logs. */
  private watchConnection(record: ServerRecord, connection: LiveConnection, logLevel: LogLevelSetting): void {
    connection.session.watch(
      {
        listChanged: (list) => void connection.followListChanged(list, () => this.onMetadataChanged?.(connection.name)),
        lost: (reason) => this.drop(record, connection, reason),
        log: (message) => {
          const kept = record.log.add(message, logLevel);
          if (kept) this.onServerLog?.(record.name, kept.entry, kept.firstSevere);
        },
      },
      logLevel,
    );
  }

  /**
   * The server refused us (at connect, or a request later: an expired sign-in, a step-up): it stays down until the
   * credentials change, and the user is told once when a sign-in is the way.
   */
  private needsAuth(record: ServerRecord, error: NeedsAuthError): void {
    const { connection } = record;
    if (connection) {
      record.connection = undefined;
      void connection.end().catch(ignored(`${record.name}: ending the connection that needs a sign-in`));
    }
    record.status = "needs-auth";
    record.needsSignIn = error.signIn;
    record.lastError = error.message;
    this.signIns.announce(record.name, error);
  }

  /** Forget a connection that ended without us, so the next call reconnects. */
  private drop(record: ServerRecord, connection: LiveConnection, reason: string): void {
    if (record.connection !== connection) return;
    record.connection = undefined;
    record.status = "closed";
    record.lastError = `Connection lost: ${reason}`;
    debugLog(`${record.name}: connection lost`, reason);
    void connection.end().catch(ignored(`${record.name}: ending the lost connection`));
  }

  /**
   * One request on a connected server, counted in flight (idle shutdown waits for it) and as use, with a signal of its
   * own (see `withOwnSignal`). The server is found connected (or connected once more, `options.connect`) with no
   * await between that and the request going out, so nothing can close it in between. A request that shows the
   * session is gone drops it: the session reports that itself.
   */
  private async track<T>(
    name: string,
    options: Pick<CallOptions, "signal" | "connect">,
    request: (connection: LiveConnection, signal?: AbortSignal) => Promise<T>,
  ): Promise<T> {
    const record = this.record(name);
    if (!this.liveConnection(record) && options.connect) await options.connect();
    const connection = this.liveConnection(record);
    if (!connection) throw new Error(`MCP server "${name}" is not connected`);
    const { signal } = options;
    record.inFlight++;
    record.requests++;
    record.lastUsedAt = Date.now();
    try {
      return await (signal ? withOwnSignal(signal, (own) => request(connection, own)) : request(connection, undefined));
    } catch (error) {
      if (error instanceof NeedsAuthError && record.connection === connection) this.needsAuth(record, error);
      throw error;
    } finally {
      record.inFlight--;
      record.lastUsedAt = Date.now();
    }
  }
}

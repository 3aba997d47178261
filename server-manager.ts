/**
 * Connections to MCP servers: opening them (stdio, Streamable HTTP, legacy SSE), sharing one connection (and one
 * process) per server, reading their tools and resources, calling them, and ending them together with every process
 * they started. What a server is doing right now is kept for `/mcp status`.
 */
import { readFileSync } from "node:fs";
import { stat } from "node:fs/promises";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport, SseError } from "@modelcontextprotocol/sdk/client/sse.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolResultSchema,
  ElicitRequestSchema,
  ErrorCode,
  McpError,
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type ElicitRequestFormParams,
  type ElicitResult,
  type Progress,
  type ReadResourceResult,
} from "@modelcontextprotocol/sdk/types.js";
import { resolveNpxCommand } from "./npx-resolver.ts";
import { OutputTail } from "./output-tail.ts";
import { isProcessAlive, stopProcessTree } from "./process-tree.ts";
import { listResources, listTools } from "./server-listing.ts";
import type { McpResource, McpTool, ServerDefinition, TransportKind } from "./types.ts";

export const DEFAULT_STARTUP_TIMEOUT_MS = 30_000;
/** Long tool runs are normal (builds, searches); progress notifications restart the clock. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 10 * 60_000;
export const DEFAULT_CONNECT_CONCURRENCY = 10;
/** Answers to a Streamable HTTP POST that mean "this endpoint does not speak it" (try legacy SSE). */
const STREAMABLE_HTTP_REJECTED = new Set([400, 404, 405, 406, 415]);
const SESSION_DELETE_WAIT_MS = 1_000;
/**
 * The largest message read from a stdio server; the SDK's default (10 MiB) drops the connection on a bigger result.
 * Room for a 20 MB query result (then cut to Pi's output limit), yet a runaway server cannot cost much: the SDK
 * copies its read buffer on every chunk, so reading grows with the square of the size (measured: 20 MB 2.7 s,
 * 40 MB 10 s, 64 MB 25 s of CPU).
 */
export const MAX_STDIO_MESSAGE_BYTES = 32 * 1024 * 1024;

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
}

export interface ServerConnection {
  readonly name: string;
  readonly client: Client;
  readonly transport: TransportKind;
  readonly tools: McpTool[];
  readonly resources: McpResource[];
  /** Entries of tools/list and resources/list that were dropped or cut short, and why. */
  readonly problems: string[];
  readonly pid?: number;
  readonly connectedAt: number;
}

/** The server refuses us until credentials are configured (HTTP 401, or a bearer token variable that is not set). */
export class NeedsAuthError extends Error {
  readonly serverName: string;
  constructor(serverName: string, message: string) {
    super(message);
    this.name = "NeedsAuthError";
    this.serverName = serverName;
  }
}

/**
 * Answers a server's form elicitation (`elicitation/create`): asks the user, or decides without one. An `accept`
 * may leave fields out: the SDK fills in the defaults the form's schema gives (SEP-1034).
 */
export type ElicitationHandler = (serverName: string, request: ElicitRequestFormParams, signal: AbortSignal) => Promise<ElicitResult>;

/** The answer when nobody can be asked: accept the form as its defaults fill it. */
export const acceptElicitationDefaults: ElicitationHandler = async () => ({ action: "accept", content: {} });

export interface McpServerManagerOptions {
  /** Pi's agent directory (npx resolution keeps its cache there). */
  agentDir: string;
  /** Called after a server's tools or resources changed (a `list_changed` notification was followed). */
  onMetadataChanged?: (name: string) => void;
  /** Per-request timeout for tool calls and resource reads; restarted by progress notifications. */
  requestTimeoutMs?: number;
  /** Run `npx pkg` servers straight from npm's cache, without the npm parent process. Default true. */
  resolveNpx?: boolean;
  /** Without it, servers are told the client cannot elicit (they must not ask). */
  elicitation?: ElicitationHandler;
}

export interface CallOptions {
  /** Aborting sends `notifications/cancelled` to the server. */
  signal?: AbortSignal;
  onProgress?: (progress: Progress) => void;
  timeoutMs?: number;
}

/** A server that is up: what `connect()` hands out, plus how to end it. */
class LiveConnection implements ServerConnection {
  readonly name: string;
  readonly client: Client;
  readonly transport: TransportKind;
  readonly pid?: number;
  readonly connectedAt = Date.now();
  readonly shutdown: () => Promise<void>;
  tools: McpTool[] = [];
  resources: McpResource[] = [];
  toolProblems: string[] = [];
  resourceProblems: string[] = [];
  /** list_changed refreshes run one after another, so an older answer never overwrites a newer one. */
  refreshQueue: Promise<void> = Promise.resolve();

  constructor(name: string, session: Session) {
    this.name = name;
    this.client = session.client;
    this.transport = session.transport;
    this.pid = session.pid;
    this.shutdown = session.shutdown;
  }

  get problems(): string[] {
    return [...this.toolProblems, ...this.resourceProblems];
  }
}

/** An initialised MCP session, before its tools are read. */
interface Session {
  client: Client;
  transport: TransportKind;
  pid?: number;
  shutdown: () => Promise<void>;
}

interface PendingConnect {
  promise: Promise<ServerConnection>;
  cancel: AbortController;
}

interface ServerRecord {
  name: string;
  status: ServerStatus;
  lastError?: string;
  transport?: TransportKind;
  stderr: OutputTail;
  connection?: LiveConnection;
  pending?: PendingConnect;
  closing?: Promise<void>;
  inFlight: number;
  lastUsedAt: number;
}

export class McpServerManager {
  private readonly records = new Map<string, ServerRecord>();
  private readonly agentDir: string;
  private readonly onMetadataChanged?: (name: string) => void;
  private readonly requestTimeoutMs: number;
  private readonly resolveNpx: boolean;
  private readonly elicitation?: ElicitationHandler;

  constructor(options: McpServerManagerOptions) {
    this.agentDir = options.agentDir;
    this.onMetadataChanged = options.onMetadataChanged;
    this.requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.resolveNpx = options.resolveNpx ?? true;
    this.elicitation = options.elicitation;
  }

  /** The live connection, or a new one. Concurrent calls for one server share one attempt (and one process). */
  connect(def: ServerDefinition): Promise<ServerConnection> {
    const record = this.record(def.name);
    if (record.connection) return Promise.resolve(record.connection);
    if (record.pending) return record.pending.promise;
    const cancel = new AbortController();
    const promise = this.establish(def, record, cancel.signal).then(
      (connection) => this.adopt(record, connection, cancel.signal),
      (error: unknown) => {
        record.pending = undefined;
        if (cancel.signal.aborted) {
          record.status = "closed";
          throw cancel.signal.reason;
        }
        record.status = error instanceof NeedsAuthError ? "needs-auth" : "failed";
        record.lastError = error instanceof Error ? error.message : String(error);
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
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < defs.length) {
        const index = next++;
        results[index] = await this.connect(defs[index]!).catch(toError);
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, defs.length) }, worker));
    return new Map(defs.map((def, index) => [def.name, results[index]!]));
  }

  /**
   * Only a connection that is up. A stdio server that died is noticed here even before its pipes report it (a
   * killed process can sit unnoticed for a moment), so no call is ever sent to a dead process.
   */
  getConnection(name: string): ServerConnection | undefined {
    const record = this.records.get(name);
    const connection = record?.connection;
    if (record && connection?.pid !== undefined && !isProcessAlive(connection.pid)) {
      this.drop(record, connection, "the server process exited");
      return undefined;
    }
    return connection;
  }

  getState(name: string): ServerState {
    const record = this.records.get(name);
    if (!record) return { status: "idle", stderrTail: [] };
    const { connection } = record;
    return {
      status: record.status,
      lastError: record.lastError,
      connectedAt: connection?.connectedAt,
      pid: connection?.pid,
      transport: record.transport,
      stderrTail: record.stderr.lines(),
    };
  }

  /** Reads the server's tools and resources again. */
  async refreshMetadata(name: string): Promise<ServerConnection> {
    const connection = this.requireConnection(name);
    await Promise.all([this.refreshList(connection, "tools"), this.refreshList(connection, "resources")]);
    return connection;
  }

  async callTool(name: string, toolName: string, args: Record<string, unknown>, options: CallOptions = {}): Promise<CallToolResult> {
    return this.track(name, (connection) =>
      withOwnSignal(options.signal, (signal) =>
        connection.client.request(
          { method: "tools/call", params: { name: toolName, arguments: args } },
          CallToolResultSchema,
          this.requestOptions({ ...options, signal }),
        ),
      ),
    );
  }

  async readResource(name: string, uri: string, options: Pick<CallOptions, "signal" | "timeoutMs"> = {}): Promise<ReadResourceResult> {
    return this.track(name, (connection) =>
      withOwnSignal(options.signal, (signal) => connection.client.readResource({ uri }, this.requestOptions({ ...options, signal }))),
    );
  }

  touch(name: string): void {
    this.record(name).lastUsedAt = Date.now();
  }

  incrementInFlight(name: string): void {
    this.record(name).inFlight++;
  }

  decrementInFlight(name: string): void {
    const record = this.record(name);
    record.inFlight = Math.max(0, record.inFlight - 1);
  }

  /** Connected, nothing in flight, and unused for `timeoutMs`. */
  isIdle(name: string, timeoutMs: number): boolean {
    const record = this.records.get(name);
    return !!record?.connection && record.inFlight === 0 && Date.now() - record.lastUsedAt >= timeoutMs;
  }

  /** Ends the server (and every process it started); an attempt still connecting is cancelled. */
  close(name: string): Promise<void> {
    const record = this.records.get(name);
    if (!record) return Promise.resolve();
    record.closing ??= this.closeRecord(record).finally(() => {
      record.closing = undefined;
    });
    return record.closing;
  }

  /** Safe to call again, and while connects are in flight: they are cancelled and their processes ended. */
  async closeAll(): Promise<void> {
    await Promise.all([...this.records.keys()].map((name) => this.close(name)));
  }

  private record(name: string): ServerRecord {
    let record = this.records.get(name);
    if (!record) {
      record = { name, status: "idle", stderr: new OutputTail(), inFlight: 0, lastUsedAt: 0 };
      this.records.set(name, record);
    }
    return record;
  }

  private requireConnection(name: string): LiveConnection {
    const connection = this.records.get(name)?.connection;
    if (!connection) throw new Error(`MCP server "${name}" is not connected`);
    return connection;
  }

  private async closeRecord(record: ServerRecord): Promise<void> {
    const { pending } = record;
    if (pending) {
      pending.cancel.abort(new Error(`MCP server "${record.name}" was closed while it was still connecting`));
      await pending.promise.catch(() => {});
    }
    const { connection } = record;
    if (!connection) return;
    record.connection = undefined;
    record.status = "closed";
    await connection.shutdown();
  }

  private adopt(record: ServerRecord, connection: LiveConnection, cancelled: AbortSignal): Promise<ServerConnection> | ServerConnection {
    record.pending = undefined;
    if (cancelled.aborted) {
      record.status = "closed";
      return connection.shutdown().then(() => Promise.reject(cancelled.reason));
    }
    record.connection = connection;
    record.status = "connected";
    record.lastUsedAt = Date.now();
    this.watchConnection(record, connection);
    return connection;
  }

  /** Spawn or reach the server, initialise, and read its tools and resources, all within `startupTimeoutMs`. */
  private async establish(def: ServerDefinition, record: ServerRecord, cancelled: AbortSignal): Promise<LiveConnection> {
    const timeoutMs = def.startupTimeoutMs ?? DEFAULT_STARTUP_TIMEOUT_MS;
    const timeout = new AbortController();
    const timer = setTimeout(
      () => timeout.abort(new Error(`did not finish starting within ${formatSeconds(timeoutMs)} (start, initialize, list tools)`)),
      timeoutMs,
    );
    // The attempt itself (a child process, a socket) keeps Pi alive while it matters; the deadline alone must not.
    timer.unref();
    const signal = AbortSignal.any([cancelled, timeout.signal]);
    let session: Session | undefined;
    try {
      const kind = transportFamily(def);
      record.transport = kind === "stdio" ? "stdio" : undefined;
      if (kind === "stdio") {
        record.stderr = new OutputTail();
        session = await this.openStdio(def, record.stderr, signal, timeoutMs);
      } else {
        session = await openHttp(def, () => this.createClient(def.name), signal, timeoutMs);
      }
      record.transport = session.transport;
      return await this.readMetadata(def.name, session, { signal, timeout: timeoutMs });
    } catch (error) {
      await session?.shutdown();
      // Output written just before the exit arrives after the exit itself.
      await new Promise((resolve) => setImmediate(resolve));
      throw describeConnectFailure(def, error, record.stderr.lines());
    } finally {
      clearTimeout(timer);
    }
  }

  private async readMetadata(name: string, session: Session, options: RequestOptions): Promise<LiveConnection> {
    const connection = new LiveConnection(name, session);
    const tools = await listTools(session.client, options);
    connection.tools = tools.items;
    connection.toolProblems = tools.problems;
    // A server without the resources capability has none; a failing resources/list must not cost us its tools.
    if (session.client.getServerCapabilities()?.resources) {
      const resources = await listResources(session.client, options).catch((error: unknown) => {
        options.signal?.throwIfAborted();
        return { items: [], problems: [`resources/list failed: ${errorMessage(error)}`] };
      });
      connection.resources = resources.items;
      connection.resourceProblems = resources.problems;
    }
    options.signal?.throwIfAborted();
    return connection;
  }

  /** A client for one server; it offers elicitation only when someone answers it. */
  private createClient(serverName: string): Client {
    const answer = this.elicitation;
    if (!answer) return new Client(CLIENT_INFO, { capabilities: {} });
    const client = new Client(CLIENT_INFO, { capabilities: { elicitation: { form: { applyDefaults: true } } } });
    // Only form mode is offered, so the SDK refuses URL-mode requests before they get here.
    client.setRequestHandler(ElicitRequestSchema, (request, extra) =>
      answer(serverName, request.params as ElicitRequestFormParams, extra.signal),
    );
    return client;
  }

  private async openStdio(def: ServerDefinition, stderr: OutputTail, signal: AbortSignal, timeoutMs: number): Promise<Session> {
    const env = mergeEnv(process.env, def.env);
    let command = def.command!;
    let args = def.args ?? [];
    if (this.resolveNpx) {
      // A resolver failure only costs the optimisation: the original command still works.
      const resolved = await abortable(
        resolveNpxCommand(command, args, { agentDir: this.agentDir, env, cwd: def.cwd }).catch(() => undefined),
        signal,
      );
      if (resolved) ({ command, args } = resolved);
    }
    if (def.cwd) await assertDirectory(def.cwd);
    // Closed while the command was being prepared: start no process only to end it.
    signal.throwIfAborted();
    const transport = new StdioClientTransport({ command, args, env, cwd: def.cwd, stderr: "pipe", maxBufferSize: MAX_STDIO_MESSAGE_BYTES });
    transport.stderr?.on("data", (chunk: Buffer) => {
      stderr.append(chunk.toString("utf8"));
      if (def.debug) process.stderr.write(chunk);
    });
    const client = this.createClient(def.name);
    const shutdown = () => stopStdioServer(client, transport);
    await connectClient(client, transport, shutdown, signal, timeoutMs);
    return { client, transport: "stdio", pid: transport.pid ?? undefined, shutdown };
  }

  /** Follows the connection after it is up: list_changed refreshes, and noticing when it drops. */
  private watchConnection(record: ServerRecord, connection: LiveConnection): void {
    const { client } = connection;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.followListChanged(connection, "tools"));
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => this.followListChanged(connection, "resources"));
    client.onclose = () => this.drop(record, connection, connection.transport === "stdio" ? "the server process exited" : "the connection was closed");
    // A legacy SSE stream cannot be resumed: once it breaks, the session is gone.
    client.onerror = (error) => {
      if (error instanceof SseError) this.drop(record, connection, `the SSE stream broke (${error.message})`);
    };
  }

  /** Forget a connection that ended without us, so the next call reconnects. */
  private drop(record: ServerRecord, connection: LiveConnection, reason: string): void {
    if (record.connection !== connection) return;
    record.connection = undefined;
    record.status = "closed";
    record.lastError = `Connection lost: ${reason}`;
    void connection.shutdown().catch(() => {});
  }

  private async followListChanged(connection: LiveConnection, list: "tools" | "resources"): Promise<void> {
    try {
      await this.refreshList(connection, list);
    } catch {
      return; // The server went away meanwhile; reconnecting reads everything again.
    }
    try {
      this.onMetadataChanged?.(connection.name);
    } catch {
      // A failing listener must not break the connection.
    }
  }

  private refreshList(connection: LiveConnection, list: "tools" | "resources"): Promise<void> {
    // A refresh gets the budget listing had at startup.
    const options: RequestOptions = { timeout: DEFAULT_STARTUP_TIMEOUT_MS };
    const refresh = async (): Promise<void> => {
      if (list === "tools") {
        const tools = await listTools(connection.client, options);
        connection.tools = tools.items;
        connection.toolProblems = tools.problems;
      } else if (connection.client.getServerCapabilities()?.resources) {
        const resources = await listResources(connection.client, options);
        connection.resources = resources.items;
        connection.resourceProblems = resources.problems;
      }
    };
    const result = connection.refreshQueue.then(refresh);
    connection.refreshQueue = result.catch(() => {});
    return result;
  }

  /** In-flight tracking and `touch` around one request; a request that shows the connection is gone drops it. */
  private async track<T>(name: string, request: (connection: LiveConnection) => Promise<T>): Promise<T> {
    const connection = this.requireConnection(name);
    const record = this.record(name);
    this.incrementInFlight(name);
    this.touch(name);
    try {
      return await request(connection);
    } catch (error) {
      if (isConnectionLost(error)) this.drop(record, connection, errorMessage(error));
      throw error;
    } finally {
      this.decrementInFlight(name);
      this.touch(name);
    }
  }

  private requestOptions(options: CallOptions): RequestOptions {
    return {
      signal: options.signal,
      timeout: options.timeoutMs ?? this.requestTimeoutMs,
      resetTimeoutOnProgress: true,
      // Always ask for progress: it is what keeps a long call from timing out.
      onprogress: (progress) => options.onProgress?.(progress),
    };
  }
}

const CLIENT_INFO = { name: "pi-mcp-adapter", version: readOwnVersion() };

function readOwnVersion(): string {
  try {
    return (JSON.parse(readFileSync(new URL("./package.json", import.meta.url), "utf8")) as { version: string }).version;
  } catch {
    return "0.0.0";
  }
}

/** `client.connect` (initialize) under the startup deadline; on failure the half-started transport is ended. */
async function connectClient(
  client: Client,
  transport: Transport,
  shutdown: () => Promise<void>,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<void> {
  try {
    // `abortable` too: opening an SSE stream does not listen to the signal.
    await abortable(client.connect(transport, { signal, timeout: timeoutMs }), signal);
  } catch (error) {
    await shutdown();
    throw error;
  }
}

/** Record the process tree, close stdin, then SIGTERM and SIGKILL whatever is left (see process-tree.ts). */
async function stopStdioServer(client: Client, transport: StdioClientTransport): Promise<void> {
  const pid = transport.pid;
  let closed: Promise<void> | undefined;
  const closeClient = () => {
    closed = client.close().catch(() => {});
  };
  if (pid !== null) await stopProcessTree(pid, { requestExit: closeClient });
  if (!closed) closeClient();
  await closed;
}

async function openHttp(def: ServerDefinition, createClient: () => Client, signal: AbortSignal, timeoutMs: number): Promise<Session> {
  const url = parseUrl(def);
  const requestInit: RequestInit = { headers: httpHeaders(def) };
  if (def.transport === "sse") return openSse(url, requestInit, createClient(), signal, timeoutMs);
  try {
    return await openStreamableHttp(url, requestInit, createClient(), signal, timeoutMs);
  } catch (error) {
    if (def.transport === "http" || !(error instanceof StreamableHTTPError && STREAMABLE_HTTP_REJECTED.has(error.code ?? 0))) {
      throw error;
    }
    try {
      return await openSse(url, requestInit, createClient(), signal, timeoutMs);
    } catch (sseError) {
      if (isUnauthorized(sseError) || signal.aborted) throw sseError;
      throw new Error(
        `Streamable HTTP was refused (HTTP ${error.code}) and the legacy SSE transport failed too: ${errorMessage(sseError)}`,
      );
    }
  }
}

async function openStreamableHttp(url: URL, requestInit: RequestInit, client: Client, signal: AbortSignal, timeoutMs: number): Promise<Session> {
  const transport = new StreamableHTTPClientTransport(url, { requestInit });
  const shutdown = async () => {
    // Tell the server the session is over (spec: SHOULD), without letting a slow server hold up shutdown.
    if (transport.sessionId) await Promise.race([transport.terminateSession().catch(() => {}), delay(SESSION_DELETE_WAIT_MS)]);
    await client.close().catch(() => {});
  };
  await connectClient(client, transport, shutdown, signal, timeoutMs);
  return { client, transport: "http", shutdown };
}

async function openSse(url: URL, requestInit: RequestInit, client: Client, signal: AbortSignal, timeoutMs: number): Promise<Session> {
  // The SDK adds `requestInit.headers` to the EventSource GET as well as to the POSTs.
  const transport = new SSEClientTransport(url, { requestInit });
  const shutdown = () => client.close().catch(() => {});
  await connectClient(client, transport, shutdown, signal, timeoutMs);
  return { client, transport: "sse", shutdown };
}

function transportFamily(def: ServerDefinition): "stdio" | "http" {
  const family = def.transport ? (def.transport === "stdio" ? "stdio" : "http") : def.command ? "stdio" : def.url ? "http" : undefined;
  if (!family) throw new Error(`it has neither "command" nor "url"`);
  if (family === "stdio" && !def.command) throw new Error(`"transport" is "stdio" but "command" is missing`);
  if (family === "http" && !def.url) throw new Error(`"transport" is "${def.transport}" but "url" is missing`);
  return family;
}

function parseUrl(def: ServerDefinition): URL {
  let url: URL;
  try {
    url = new URL(def.url!);
  } catch {
    throw new Error(`"url" is not a valid URL`);
  }
  // fetch refuses such a URL, with an error that repeats the password.
  if (url.username || url.password) {
    throw new Error(`"url" contains a user name or password (user:password@host), which HTTP clients refuse; send credentials with "headers" or "bearerToken"`);
  }
  return url;
}

/** Configured headers plus the bearer token; `bearerToken`/`bearerTokenEnv` win over an `Authorization` header. */
function httpHeaders(def: ServerDefinition): Record<string, string> {
  const headers: Record<string, string> = { ...def.headers };
  let token = def.bearerToken;
  if (token === undefined && def.bearerTokenEnv) {
    token = process.env[def.bearerTokenEnv];
    if (!token) {
      throw new NeedsAuthError(
        def.name,
        `MCP server "${def.name}" needs a bearer token: "bearerTokenEnv" names the environment variable ${def.bearerTokenEnv}, which is not set`,
      );
    }
  }
  if (token !== undefined) {
    for (const key of Object.keys(headers)) if (key.toLowerCase() === "authorization") delete headers[key];
    headers.Authorization = `Bearer ${token}`;
  }
  return headers;
}

/** The error a failed connect rejects with: names the server, says why, never repeats a token. */
function describeConnectFailure(def: ServerDefinition, error: unknown, stderrTail: string[]): Error {
  if (error instanceof NeedsAuthError) return error;
  if (isUnauthorized(error)) return new NeedsAuthError(def.name, needsAuthMessage(def));
  let message = `MCP server "${def.name}" failed to connect: ${failureReason(def, error)}`;
  if (stderrTail.length > 0) message += `\nLast stderr lines:\n${stderrTail.map((line) => `  ${line}`).join("\n")}`;
  return new Error(message, { cause: error });
}

function needsAuthMessage(def: ServerDefinition): string {
  const where = `${safeUrl(def.url)} answered 401 Unauthorized`;
  if (def.auth === "oauth") {
    return `MCP server "${def.name}" needs authentication: ${where}. It is configured for OAuth, which pi-mcp-adapter does not support yet; configure a token with "bearerToken" or "bearerTokenEnv" instead.`;
  }
  const source = def.bearerToken !== undefined ? `"bearerToken"` : def.bearerTokenEnv ? `the variable ${def.bearerTokenEnv} ("bearerTokenEnv")` : hasAuthorizationHeader(def) ? `the "Authorization" header` : undefined;
  if (source) return `MCP server "${def.name}" needs authentication: ${where} to the token from ${source}. Check that it is valid.`;
  return `MCP server "${def.name}" needs authentication: ${where}. Set "bearerToken" or "bearerTokenEnv" (or an "Authorization" header) in its config.`;
}

function hasAuthorizationHeader(def: ServerDefinition): boolean {
  return Object.keys(def.headers ?? {}).some((key) => key.toLowerCase() === "authorization");
}

function failureReason(def: ServerDefinition, error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === "ENOENT" && (error as { syscall?: string }).syscall?.startsWith("spawn")) {
    return `command not found: ${def.command}`;
  }
  if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed && def.command) {
    return "the server process exited before it was ready";
  }
  // The SDK's code -1: a success status with a body that is not MCP (a login page, a proxy's error page).
  if (error instanceof StreamableHTTPError && error.code === -1) {
    return `${safeUrl(def.url)} did not answer as an MCP server (${error.message}); check the URL`;
  }
  if (error instanceof StreamableHTTPError || error instanceof SseError) {
    return `${safeUrl(def.url)} answered HTTP ${error.code ?? "?"}: ${error.message}`;
  }
  if (error instanceof TypeError && error.message === "fetch failed") {
    const cause = (error.cause as NodeJS.ErrnoException | undefined)?.code;
    return `cannot reach ${safeUrl(def.url)}${cause ? ` (${cause})` : ""}`;
  }
  return errorMessage(error);
}

function isUnauthorized(error: unknown): boolean {
  return (
    error instanceof UnauthorizedError ||
    ((error instanceof StreamableHTTPError || error instanceof SseError) && error.code === 401)
  );
}

/** Errors that mean the session itself is gone (not just this request): the next call must reconnect. */
function isConnectionLost(error: unknown): boolean {
  if (error instanceof McpError) return error.code === ErrorCode.ConnectionClosed;
  // Streamable HTTP: 404 means the server no longer knows our session (spec: start a new one).
  if (error instanceof StreamableHTTPError) return error.code === 404;
  return error instanceof TypeError && error.message === "fetch failed";
}

/** Scheme, host and path: no user info, no query (either may carry a secret). */
export function safeUrl(url: string | undefined): string {
  try {
    const parsed = new URL(url ?? "");
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return "the server URL";
  }
}

/**
 * The parent environment with the server's `env` on top. Windows names are case-insensitive: an override must
 * replace `Path` when it sets `PATH`, or the child would get both.
 */
export function mergeEnv(
  parent: NodeJS.ProcessEnv,
  overrides: Record<string, string> | undefined,
  platform: NodeJS.Platform = process.platform,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(parent)) if (value !== undefined) env[key] = value;
  for (const [key, value] of Object.entries(overrides ?? {})) {
    if (platform === "win32") {
      for (const existing of Object.keys(env)) if (existing.toLowerCase() === key.toLowerCase()) delete env[existing];
    }
    env[key] = value;
  }
  return env;
}

async function assertDirectory(cwd: string): Promise<void> {
  const info = await stat(cwd).catch(() => undefined);
  if (!info?.isDirectory()) throw new Error(`the working directory "cwd" (${cwd}) does not exist`);
}

/**
 * Runs a request with a signal of its own that follows `signal` while the request runs. The SDK adds an abort
 * listener to a request's signal and never removes it, and Pi gives every tool call of a run the same signal: its
 * listeners piled up until the run ended, and from the eleventh Node printed a leak warning. Here a caller's signal
 * gets one listener however many requests follow it, removed with the last of them.
 */
async function withOwnSignal<T>(signal: AbortSignal | undefined, request: (signal: AbortSignal | undefined) => Promise<T>): Promise<T> {
  if (!signal) return request(undefined);
  const own = new AbortController();
  if (signal.aborted) own.abort(signal.reason);
  else follow(signal, own);
  try {
    return await request(own.signal);
  } finally {
    unfollow(signal, own);
  }
}

const followers = new WeakMap<AbortSignal, Set<AbortController>>();

function follow(signal: AbortSignal, own: AbortController): void {
  let requests = followers.get(signal);
  if (!requests) {
    requests = new Set();
    followers.set(signal, requests);
    signal.addEventListener("abort", abortFollowers, { once: true });
  }
  requests.add(own);
}

function unfollow(signal: AbortSignal, own: AbortController): void {
  const requests = followers.get(signal);
  if (!requests?.delete(own) || requests.size > 0) return;
  followers.delete(signal);
  signal.removeEventListener("abort", abortFollowers);
}

function abortFollowers(event: Event): void {
  const signal = event.target as AbortSignal;
  for (const own of followers.get(signal) ?? []) own.abort(signal.reason);
  followers.delete(signal);
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    // Its outcome no longer matters, but its rejection must not go unhandled (Node would end Pi for it).
    promise.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

function formatSeconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function toError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/**
 * The MCP SDK half of the connection code: opening a session with a server (stdio, Streamable HTTP, legacy SSE with
 * the fallback between them, OAuth on both HTTP transports through connection/oauth-provider.ts) in whichever
 * protocol era it speaks (connection/era.ts), its requests and its notifications. What it opens is an `McpSession`
 * (connection/session.ts), the contract the manager uses; what a failed connect means is connection/connect-failure.ts's.
 *
 * connection/sdk-loader.ts loads this module on the first connect (a dynamic import): the SDK, its zod schemas and the npx
 * resolver are most of the extension's load time, and with lazy servers nothing connects at startup.
 */
import {
  type CallToolResult,
  type Client,
  DEFAULT_REQUEST_TIMEOUT_MSEC,
  type FetchLike,
  type GetPromptResult,
  LOG_LEVEL_META_KEY,
  type OAuthClientProvider,
  ProtocolErrorCode,
  ProtocolError,
  type ReadResourceResult,
  type RequestOptions,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  SSEClientTransport,
  SseError,
  StreamableHTTPClientTransport,
  type Tool,
  type Transport,
} from "@modelcontextprotocol/client";
import { createHash } from "node:crypto";
import { stat } from "node:fs/promises";
import { abortable } from "../util/abort.ts";
import {
  type CompletionRequest,
  type McpSession,
  NeedsAuthError,
  type OpenOptions,
  type ProtocolVerdict,
  type SessionEvents,
} from "./session.ts";
import { mergeEnv, parseServerUrl, transportFamily } from "./server-target.ts";
import { lazyLoad } from "../util/lazy-load.ts";
import { errorMessage, isJsonObject, parseJsonOrUndefined } from "../util/guards.ts";
import { authProviderFor } from "./oauth-provider.ts";
import { recordingChallenges, refreshingOnce } from "./oauth-fetch.ts";
import { type Listing, listPrompts, listResources, listResourceTemplates, listTools } from "./listing.ts";
import { GroupedStdioTransport } from "./stdio-transport.ts";
import { withCommandValues } from "./command-values.ts";
import { type ConnectPlan, connectInEra, verdictOf } from "./era.ts";
import { closeTaskReceiver, type InputHandlers, newClient } from "./mcp-client.ts";
import type { RunningTask, TaskPolicy, TaskReference, ToolCallStart } from "./running-task.ts";
import { ANY_RESULT, TaskCalls } from "./task-calls.ts";
import { ChangeStream } from "./change-stream.ts";
import { fetchFailed, isUnauthorized } from "./connect-failure.ts";
import { invalidHeaderDeclaration } from "./tool-headers.ts";
import { skillSource } from "./skills.ts";
import { traceTransport } from "./protocol-trace.ts";
import type { NpxResolution } from "../npx-resolver.ts";
import type {
  LogLevelSetting,
  McpPrompt,
  McpResource,
  McpResourceTemplate,
  McpTool,
  ServerDefinition,
  SkillEntry,
  SkillListing,
  SkillRead,
  SkillSource,
  TransportKind,
} from "../types.ts";
import { ignored } from "../util/debug-log.ts";

export { signIn } from "./oauth-provider.ts";
export { describeConnectFailure } from "./connect-failure.ts";

/**
 * The largest message read from a stdio server (the SDK's default, 10 MiB, dropped the connection on a bigger
 * result): room for a 20 MB query result (then cut to Pi's output limit), and a bound on what a runaway server
 * makes us hold. A bigger one closes the connection with a message that names this limit (connection/stdio-read-buffer.ts).
 */
const MAX_STDIO_MESSAGE_BYTES = 32 * 1024 * 1024;
/** Answers to a Streamable HTTP POST that mean "this endpoint does not speak it" (try legacy SSE). */
const STREAMABLE_HTTP_REJECTED = new Set([400, 404, 405, 406, 415]);
const SESSION_DELETE_WAIT_MS = 1_000;

interface SessionParts {
  client: Client;
  transport: TransportKind;
  /** The transport itself: a task's 2026-era requests go on it past the SDK (connection/raw-requests.ts). */
  wire: Transport;
  /** What answers the server's requests (a task's input too). */
  handlers: InputHandlers;
  /** The same for every connection to this server: it scopes the tasks an earlier Pi session left (connection/task-calls.ts). */
  endpointId: string;
  shutdown: () => Promise<void>;
  /** stdio: the server's process and output (how it ended, whether a message went over the limit). */
  stdio?: GroupedStdioTransport;
  npx?: NpxResolution;
}

/** A session through the SDK's Client (see `McpSession` for what it promises). */
class SdkSession implements McpSession {
  private readonly client: Client;
  readonly transport: TransportKind;
  readonly pid?: number;
  readonly npx?: NpxResolution;
  readonly protocol: ProtocolVerdict;
  private readonly serverName: string;
  private readonly stdio?: GroupedStdioTransport;
  private readonly endClient: () => Promise<void>;
  private events?: SessionEvents;
  private changes?: ChangeStream;
  private skills?: SkillSource;
  private readonly tasks: TaskCalls;
  /** 2026 era: the log level each request asks for (the era has no `logging/setLevel`). */
  private requestMeta?: Record<string, unknown>;

  constructor(serverName: string, parts: SessionParts) {
    this.serverName = serverName;
    this.client = parts.client;
    this.transport = parts.transport;
    this.endClient = parts.shutdown;
    this.stdio = parts.stdio;
    this.pid = parts.stdio?.pid;
    this.npx = parts.npx;
    this.protocol = verdictOf(parts.client);
    this.tasks = new TaskCalls({
      serverName,
      client: parts.client,
      transport: parts.wire,
      endpointId: parts.endpointId,
      handlers: parts.handlers,
      http: parts.transport === "http",
      describeFailure: (error) => errorMessage(this.readableFailure(error)),
    });
  }

  get instructions(): string | undefined {
    return this.client.getInstructions();
  }

  async shutdown(): Promise<void> {
    await this.tasks.close();
    await this.changes?.close().catch(ignored(`${this.serverName}: closing the subscriptions/listen stream`));
    closeTaskReceiver(this.client);
    await this.endClient();
  }

  watch(events: SessionEvents, logLevel: LogLevelSetting): void {
    this.events = events;
    const { client } = this;
    client.setNotificationHandler("notifications/message", ({ params }) => events.log(params));
    this.askForLogs(logLevel);
    client.setNotificationHandler("notifications/tools/list_changed", () => events.listChanged("tools"));
    client.setNotificationHandler("notifications/resources/list_changed", () => events.listChanged("resources"));
    client.setNotificationHandler("notifications/prompts/list_changed", () => events.listChanged("prompts"));
    client.onclose = () =>
      events.lost(this.stdio?.overflow?.message ?? (this.transport === "stdio" ? this.exitDescription() : "the connection was closed"));
    // A legacy SSE stream cannot be resumed: once it breaks, the session is gone.
    client.onerror = (error) => {
      if (error instanceof SseError) events.lost(`the SSE stream broke (${error.message})`);
    };
    if (this.protocol.era === "modern") {
      this.changes = new ChangeStream(this.serverName, client);
      this.changes.open();
    }
  }

  /**
   * A 2025-era server is told once (`off` asks for emergencies only: the protocol has no "none", and the manager
   * keeps nothing); a 2026 one is told with every request that may log (without it, the server must not).
   */
  private askForLogs(level: LogLevelSetting): void {
    if (!this.client.getServerCapabilities()?.logging) return;
    if (this.protocol.era === "modern") {
      if (level !== "off") this.requestMeta = { [LOG_LEVEL_META_KEY]: level };
      return;
    }
    this.client
      .setLoggingLevel(level === "off" ? "emergency" : level)
      .catch(ignored(`${this.serverName}: asking for its log messages (logging/setLevel ${level})`));
  }

  /** A request's params, with the log level it asks for in the 2026 era. */
  private withMeta<T extends object>(params: T): T {
    return this.requestMeta ? { ...params, _meta: this.requestMeta } : params;
  }

  /**
   * `tools/call`. The listed tool lets a 2026 HTTP session send the headers it declares; its output schema is left
   * out, so a result that does not match it still reaches the model (as the SDK's check would throw it away).
   */
  callTool(name: string, args: Record<string, unknown>, options: RequestOptions, tool?: McpTool): Promise<CallToolResult> {
    const toolDefinition = tool && ({ name: tool.name, inputSchema: tool.inputSchema ?? { type: "object" } } as Tool);
    return this.settle(this.client.callTool(this.withMeta({ name, arguments: args }), { ...options, toolDefinition }));
  }

  async startToolCall(
    name: string,
    args: Record<string, unknown>,
    options: RequestOptions,
    tool: McpTool | undefined,
    policy: TaskPolicy,
  ): Promise<ToolCallStart> {
    if (tool && this.tasks.handles(tool, policy)) {
      const callOptions = { timeoutMs: options.timeout ?? DEFAULT_REQUEST_TIMEOUT_MSEC, signal: options.signal, meta: this.requestMeta };
      return this.settle(this.tasks.start(tool, args, callOptions, policy));
    }
    const result = await this.callTool(name, args, options, tool);
    const rogue = untakenTask(result);
    if (rogue) throw this.refuseTask(rogue, tool);
    return { kind: "result", result };
  }

  resumeTask(reference: TaskReference, options: RequestOptions): Promise<RunningTask> {
    return this.settle(
      this.tasks.resume(reference, { timeoutMs: options.timeout ?? DEFAULT_REQUEST_TIMEOUT_MSEC, signal: options.signal }),
    );
  }

  /**
   * A 2025 server answered a plain call with a task (the tool does not declare it may): there is nothing to show the
   * model, and nobody would follow the task, so it is cancelled and the call fails saying so.
   */
  private refuseTask(taskId: string, tool: McpTool | undefined): Error {
    void this.client
      .request({ method: "tasks/cancel", params: { taskId } }, ANY_RESULT)
      .catch(ignored(`${this.serverName}: cancelling task ${taskId}, which a plain call was answered with`));
    return new Error(
      `its answer was a task (${taskId}), not a result, although the tool declares no task support ` +
        `(execution.taskSupport "${tool?.taskSupport ?? "forbidden"}"); the task was cancelled`,
    );
  }

  readResource(uri: string, options: RequestOptions): Promise<ReadResourceResult> {
    return this.settle(this.client.readResource(this.withMeta({ uri }), options));
  }

  getPrompt(name: string, args: Record<string, string>, options: RequestOptions): Promise<GetPromptResult> {
    return this.settle(this.client.getPrompt(this.withMeta({ name, arguments: args }), options));
  }

  async complete({ ref, argument, context }: CompletionRequest, options: RequestOptions): Promise<string[]> {
    if (!this.client.getServerCapabilities()?.completions) return [];
    const params = this.withMeta({ ref, argument, ...(context && { context: { arguments: context } }) });
    const { completion } = await this.settle(this.client.complete(params, options));
    return completion.values;
  }

  async listTools(options: RequestOptions): Promise<Listing<McpTool>> {
    const listing = await this.settle(listTools(this.client, options));
    return this.transport === "http" && this.protocol.era === "modern" ? withoutInvalidHeaders(listing) : listing;
  }

  async listResources(options: RequestOptions): Promise<Listing<McpResource>> {
    if (!this.client.getServerCapabilities()?.resources) return { items: [], problems: [] };
    return this.settle(listResources(this.client, options));
  }

  async listResourceTemplates(options: RequestOptions): Promise<Listing<McpResourceTemplate>> {
    if (!this.client.getServerCapabilities()?.resources) return { items: [], problems: [] };
    return this.settle(listResourceTemplates(this.client, options)).catch((error: unknown) => {
      if (error instanceof ProtocolError && error.code === ProtocolErrorCode.MethodNotFound) return { items: [], problems: [] };
      throw error;
    });
  }

  async listPrompts(options: RequestOptions): Promise<Listing<McpPrompt>> {
    if (!this.client.getServerCapabilities()?.prompts) return { items: [], problems: [] };
    return this.settle(listPrompts(this.client, options));
  }

  listSkills(options: RequestOptions): Promise<SkillListing> {
    return this.settle(this.skillSource().list(options));
  }

  readSkillFile(entry: SkillEntry, fileUri: string, options: RequestOptions): Promise<SkillRead> {
    return this.settle(this.skillSource().read(entry, fileUri, options));
  }

  private skillSource(): SkillSource {
    this.skills ??= skillSource(this.client);
    return this.skills;
  }

  /**
   * A request's failure as its caller should read it: a message over the limit says so (not "connection closed"), a
   * stdio server that exited is named as such with its exit code or signal (the SDK only says "Connection closed"),
   * an answer of the wrong shape is summed up (the SDK's schema error is kilobytes of JSON). A request that shows the
   * session is gone ends it for its owner, so the next call reconnects.
   */
  private settle<T>(request: Promise<T>): Promise<T> {
    return request.catch((error: unknown) => {
      const readable = this.readableFailure(error);
      if (isConnectionLost(error)) this.events?.lost(errorMessage(readable));
      throw readable;
    });
  }

  /** A request's failure as its caller should read it (see `settle`). */
  private readableFailure(error: unknown): unknown {
    const overflow = this.stdio?.overflow;
    if (!isConnectionLost(error)) return overflow ?? summarizeSchemaError(error);
    return overflow ?? (this.stdio?.exited ? new SdkError(SdkErrorCode.ConnectionClosed, this.exitDescription()) : error);
  }

  private exitDescription(): string {
    const how = this.stdio?.exited;
    return how ? `the server process exited (${how})` : "the server process exited";
  }
}

/** A 2026 HTTP client must not offer a tool whose header declarations are invalid (SEP-2243): it is dropped, and said. */
function withoutInvalidHeaders(listing: Listing<McpTool>): Listing<McpTool> {
  const problems = [...listing.problems];
  const items = listing.items.filter((tool) => {
    const problem = invalidHeaderDeclaration(tool.inputSchema);
    if (problem) problems.push(`tool "${tool.name}" left out: its input schema declares HTTP headers wrongly (${problem})`);
    return !problem;
  });
  return { ...listing, items, problems };
}

const SCHEMA_PROBLEMS_SHOWN = 2;
const INVALID_RESULT_PREFIX = /^Invalid result for [^:]+: /;

/**
 * The SDK rejects an answer that does not fit the request's result schema with an error whose message holds every
 * issue as JSON (3.3 KB for one tool result): the model gets the first problems, on one line.
 */
function summarizeSchemaError(error: unknown): unknown {
  if (!(error instanceof SdkError && error.code === SdkErrorCode.InvalidResult)) return error;
  const issues = schemaIssues(error.message.replace(INVALID_RESULT_PREFIX, ""));
  if (!issues) return error;
  const problems = issues.map((issue) => `${issue.path.join(".") || "result"}: ${issue.message}`);
  const more = problems.length > SCHEMA_PROBLEMS_SHOWN ? ` (and ${problems.length - SCHEMA_PROBLEMS_SHOWN} more)` : "";
  return new Error(`its answer was not a valid MCP result: ${problems.slice(0, SCHEMA_PROBLEMS_SHOWN).join("; ")}${more}`, {
    cause: error,
  });
}

/** The schema library's issues, as its message lists them (JSON: each with a `path` and a `message`). */
function schemaIssues(text: string): { path: unknown[]; message: string }[] | undefined {
  const parsed = parseJsonOrUndefined(text);
  if (!Array.isArray(parsed) || parsed.length === 0) return undefined;
  const issues = parsed.filter((issue) => Array.isArray(issue?.path) && typeof issue?.message === "string");
  return issues.length === parsed.length ? issues : undefined;
}

/** Spawns or reaches the server and opens the session in its protocol era, under `options.signal`. */
export function openSession(def: ServerDefinition, options: OpenOptions): Promise<McpSession> {
  return transportFamily(def) === "stdio" ? openStdio(def, options) : openHttp(def, options);
}

/** Loaded on first use: only stdio servers need it (npm-package-arg and semver come with it). */
const npxResolver = lazyLoad(() => import("../npx-resolver.ts"));

/** The resolver's answer for an `npx` command, or nothing: a failure only costs the optimisation. */
async function resolveNpx(command: string, args: string[], env: Record<string, string>, def: ServerDefinition, agentDir: string) {
  try {
    const { resolveNpxCommand } = await npxResolver();
    return await resolveNpxCommand(command, args, { agentDir, env, cwd: def.cwd });
  } catch {
    return undefined;
  }
}

async function openStdio(configured: ServerDefinition, options: OpenOptions): Promise<McpSession> {
  const { signal } = options;
  const def = await withCommandValues(configured, signal);
  const env = mergeEnv(process.env, def.env);
  let command = def.command!;
  let args = def.args ?? [];
  const npx = options.resolveNpx ? await abortable(resolveNpx(command, args, env, def, options.agentDir), signal) : undefined;
  if (npx?.kind === "resolved") ({ command, args } = npx);
  if (def.cwd) await assertDirectory(def.cwd);
  // One process per attempt: a probe may leave a server that must be started again (connection/era.ts).
  const attempt = async (plan: ConnectPlan): Promise<McpSession> => {
    // Closed while the command was being prepared: start no process only to end it.
    signal.throwIfAborted();
    const transport = new GroupedStdioTransport({ command, args, env, cwd: def.cwd, maxBufferSize: MAX_STDIO_MESSAGE_BYTES });
    traceTransport(transport, def.name, options.trace);
    options.stderr.clear();
    transport.stderr.on("data", (chunk: Buffer) => {
      options.stderr.append(chunk.toString("utf8"));
      if (def.debug) process.stderr.write(chunk);
    });
    const client = newClient(def.name, options, plan);
    // The transport's close ends the server's whole process group (see connection/stdio-transport.ts).
    const shutdown = () => client.close().catch(ignored("closing the session"));
    await connectClient(client, transport, shutdown, plan, options).catch((error: unknown) => {
      throw transport.overflow ?? error;
    });
    return new SdkSession(def.name, {
      client,
      transport: "stdio",
      wire: transport,
      handlers: options,
      endpointId: endpointIdOf(configured),
      shutdown,
      stdio: transport,
      npx,
    });
  };
  return connectInEra(def.name, true, options.prior, attempt);
}

/** How every request to an HTTP server is made: its headers, OAuth, and noting what a refusal asks for. */
interface HttpOptions {
  requestInit: RequestInit;
  authProvider?: OAuthClientProvider;
  fetch: FetchLike;
}

async function openHttp(configured: ServerDefinition, options: OpenOptions): Promise<McpSession> {
  const def = await withCommandValues(configured, options.signal);
  const url = parseServerUrl(def);
  const { store, state } = options.oauth;
  const authProvider = await abortable(authProviderFor(def, store, state, options.signal), options.signal);
  state.usesOAuth = authProvider !== undefined;
  const noting = recordingChallenges(url, state);
  const http: HttpOptions = {
    requestInit: { headers: httpHeaders(def) },
    authProvider,
    fetch: authProvider ? refreshingOnce(store, def.url!, noting) : noting,
  };
  const endpointId = endpointIdOf(configured);
  if (def.transport === "sse") return openSse(def.name, url, http, options, endpointId);
  try {
    return await connectInEra(def.name, false, options.prior, (plan) => openStreamableHttp(def.name, url, http, plan, options, endpointId));
  } catch (error) {
    if (def.transport === "http" || !(error instanceof SdkHttpError && STREAMABLE_HTTP_REJECTED.has(error.status))) throw error;
    try {
      return await openSse(def.name, url, http, options, endpointId);
    } catch (sseError) {
      if (isUnauthorized(sseError) || sseError instanceof NeedsAuthError || options.signal.aborted) throw sseError;
      throw new Error(
        `Streamable HTTP was refused (HTTP ${error.status}) and the legacy SSE transport failed too: ${errorMessage(sseError)}`,
      );
    }
  }
}

async function openStreamableHttp(
  name: string,
  url: URL,
  http: HttpOptions,
  plan: ConnectPlan,
  options: OpenOptions,
  endpointId: string,
): Promise<McpSession> {
  const transport = new StreamableHTTPClientTransport(url, http);
  traceTransport(transport, name, options.trace);
  const client = newClient(name, options, plan);
  const shutdown = async () => {
    // Tell the server a 2025 session is over (spec: SHOULD), without letting a slow server hold up shutdown.
    if (transport.sessionId)
      await Promise.race([transport.terminateSession().catch(ignored("ending the HTTP session (DELETE)")), delay(SESSION_DELETE_WAIT_MS)]);
    await client.close().catch(ignored("closing the HTTP session"));
  };
  await connectClient(client, transport, shutdown, plan, options);
  return new SdkSession(name, { client, transport: "http", wire: transport, handlers: options, endpointId, shutdown });
}

/** The SSE transport predates the 2026 era: the 2025 handshake, no probe. */
async function openSse(name: string, url: URL, http: HttpOptions, options: OpenOptions, endpointId: string): Promise<McpSession> {
  // The SDK adds `requestInit.headers` to the EventSource GET as well as to the POSTs.
  const transport = new SSEClientTransport(url, http);
  traceTransport(transport, name, options.trace);
  const plan: ConnectPlan = { negotiation: { mode: "legacy" } };
  const client = newClient(name, options, plan);
  const shutdown = () => client.close().catch(ignored("closing the session"));
  await connectClient(client, transport, shutdown, plan, options);
  return new SdkSession(name, { client, transport: "sse", wire: transport, handlers: options, endpointId, shutdown });
}

/**
 * `client.connect` (probe or initialize) under the startup deadline; on failure the half-started transport is ended,
 * by itself too: during the probe the client does not own it yet, so closing the client would leave it running.
 */
async function connectClient(client: Client, transport: Transport, shutdown: () => Promise<void>, plan: ConnectPlan, options: OpenOptions) {
  const { signal, timeoutMs } = options;
  try {
    // `abortable` too: neither the probe nor opening an SSE stream listens to the signal.
    await abortable(client.connect(transport, { signal, timeout: timeoutMs, prior: plan.prior }), signal);
  } catch (error) {
    await shutdown();
    await transport.close().catch(ignored("closing a transport that did not connect"));
    throw error;
  }
}

/**
 * A server's identity for ext-tasks (it scopes the task references a resumed Pi session follows): what decides which
 * server it is (its name, and its URL or command), hashed, since references are written to the session file.
 */
function endpointIdOf(def: ServerDefinition): string {
  const where = def.url ?? [def.command, ...(def.args ?? [])].join(" ");
  return createHash("sha256")
    .update(JSON.stringify([def.name, where]))
    .digest("hex");
}

/** A 2025 plain call answered with a task (`{ task: { taskId } }`, no content to show): its id. */
function untakenTask(result: CallToolResult): string | undefined {
  const task = (result as { task?: unknown }).task;
  const hasContent = Array.isArray(result.content) && result.content.length > 0;
  return isJsonObject(task) && typeof task.taskId === "string" && !hasContent ? task.taskId : undefined;
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

/** Errors that mean the session itself is gone (not just this request): the next call must reconnect. */
function isConnectionLost(error: unknown): boolean {
  // Streamable HTTP: 404 means the server no longer knows our session (spec: start a new one).
  if (error instanceof SdkHttpError) return error.status === 404;
  if (error instanceof SdkError) return error.code === SdkErrorCode.ConnectionClosed;
  return fetchFailed(error) !== undefined;
}

async function assertDirectory(cwd: string): Promise<void> {
  const info = await stat(cwd).catch(() => undefined);
  if (!info?.isDirectory()) throw new Error(`the working directory "cwd" (${cwd}) does not exist`);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/**
 * The MCP SDK half of the connection code: opening a session with a server (stdio, Streamable HTTP, legacy SSE with
 * the fallback between them, OAuth on both HTTP transports through connection/oauth-provider.ts), its requests, its notifications, and
 * what its failures mean. What it opens is an `McpSession` (connection/session.ts), the contract the manager uses.
 *
 * connection/sdk-loader.ts loads this module on the first connect (a dynamic import): the SDK, its zod schemas and the npx
 * resolver are most of the extension's load time, and with lazy servers nothing connects at startup.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport, SseError } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type OAuthClientProvider, UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { FetchLike, Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolResultSchema,
  ElicitRequestSchema,
  ErrorCode,
  GetPromptResultSchema,
  ListRootsRequestSchema,
  McpError,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type GetPromptResult,
  type ReadResourceResult,
  type Root,
} from "@modelcontextprotocol/sdk/types.js";
import { readFileSync } from "node:fs";
import { stat } from "node:fs/promises";
import { basename } from "node:path";
import { pathToFileURL } from "node:url";
import { abortable } from "../util/abort.ts";
import { type McpSession, NeedsAuthError, type OpenOptions, type ServerAuthState, type SessionEvents } from "./session.ts";
import { canSignIn, hasAuthorizationHeader, signInNeeded } from "./auth-checks.ts";
import { mergeEnv, parseServerUrl, transportFamily } from "./server-target.ts";
import { briefHttpError, safeUrl } from "../util/http-text.ts";
import { lazyLoad } from "../util/lazy-load.ts";
import { errorMessage } from "../util/guards.ts";
import { authProviderFor, describeOAuthError, recordingChallenges, refreshingOnce } from "./oauth-provider.ts";
import { type Listing, listPrompts, listResources, listResourceTemplates, listTools } from "./listing.ts";
import { GroupedStdioTransport } from "./stdio-transport.ts";
import { withCommandValues } from "./command-values.ts";
import type { NpxResolution } from "../npx-resolver.ts";
import type { McpPrompt, McpResource, McpResourceTemplate, McpTool, ServerDefinition, TransportKind } from "../types.ts";
import { ignored } from "../util/debug-log.ts";

export { signIn } from "./oauth-provider.ts";

/**
 * The largest message read from a stdio server (the SDK's default, 10 MiB, dropped the connection on a bigger
 * result): room for a 20 MB query result (then cut to Pi's output limit), and a bound on what a runaway server
 * makes us hold. A bigger one closes the connection with a message that names this limit (connection/stdio-read-buffer.ts).
 */
const MAX_STDIO_MESSAGE_BYTES = 32 * 1024 * 1024;
/** Answers to a Streamable HTTP POST that mean "this endpoint does not speak it" (try legacy SSE). */
const STREAMABLE_HTTP_REJECTED = new Set([400, 404, 405, 406, 415]);
const SESSION_DELETE_WAIT_MS = 1_000;

/** A session through the SDK's Client (see `McpSession` for what it promises). */
class SdkSession implements McpSession {
  private readonly client: Client;
  readonly transport: TransportKind;
  readonly pid?: number;
  readonly npx?: NpxResolution;
  readonly shutdown: () => Promise<void>;
  private events?: SessionEvents;
  /** stdio: the server's process and output (how it ended, whether a message went over the limit). */
  private readonly stdio?: GroupedStdioTransport;

  constructor(client: Client, transport: TransportKind, shutdown: () => Promise<void>, stdio?: GroupedStdioTransport, npx?: NpxResolution) {
    this.npx = npx;
    this.client = client;
    this.transport = transport;
    this.shutdown = shutdown;
    this.pid = stdio?.pid;
    this.stdio = stdio;
  }

  watch(events: SessionEvents): void {
    this.events = events;
    const { client } = this;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => events.listChanged("tools"));
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => events.listChanged("resources"));
    client.setNotificationHandler(PromptListChangedNotificationSchema, () => events.listChanged("prompts"));
    client.onclose = () =>
      events.lost(this.stdio?.overflow?.message ?? (this.transport === "stdio" ? this.exitDescription() : "the connection was closed"));
    // A legacy SSE stream cannot be resumed: once it breaks, the session is gone.
    client.onerror = (error) => {
      if (error instanceof SseError) events.lost(`the SSE stream broke (${error.message})`);
    };
  }

  /** `tools/call`, read as the SDK's `callTool` reads it, without its output-schema check (that needs tools/list). */
  callTool(name: string, args: Record<string, unknown>, options: RequestOptions): Promise<CallToolResult> {
    return this.settle(this.client.request({ method: "tools/call", params: { name, arguments: args } }, CallToolResultSchema, options));
  }

  readResource(uri: string, options: RequestOptions): Promise<ReadResourceResult> {
    return this.settle(this.client.readResource({ uri }, options));
  }

  getPrompt(name: string, args: Record<string, string>, options: RequestOptions): Promise<GetPromptResult> {
    return this.settle(this.client.request({ method: "prompts/get", params: { name, arguments: args } }, GetPromptResultSchema, options));
  }

  get instructions(): string | undefined {
    return this.client.getInstructions();
  }

  listTools(options: RequestOptions): Promise<Listing<McpTool>> {
    return this.settle(listTools(this.client, options));
  }

  async listResources(options: RequestOptions): Promise<Listing<McpResource>> {
    if (!this.client.getServerCapabilities()?.resources) return { items: [], problems: [] };
    return this.settle(listResources(this.client, options));
  }

  async listResourceTemplates(options: RequestOptions): Promise<Listing<McpResourceTemplate>> {
    if (!this.client.getServerCapabilities()?.resources) return { items: [], problems: [] };
    return this.settle(listResourceTemplates(this.client, options)).catch((error: unknown) => {
      if (error instanceof McpError && error.code === ErrorCode.MethodNotFound) return { items: [], problems: [] };
      throw error;
    });
  }

  async listPrompts(options: RequestOptions): Promise<Listing<McpPrompt>> {
    if (!this.client.getServerCapabilities()?.prompts) return { items: [], problems: [] };
    return this.settle(listPrompts(this.client, options));
  }

  /**
   * A request's failure as its caller should read it: a message over the limit says so (not "connection closed"), a
   * stdio server that exited is named as such with its exit code or signal (the SDK only says "Connection closed"),
   * an answer of the wrong shape is summed up (the SDK's schema error is kilobytes of JSON). A request that shows the
   * session is gone ends it for its owner, so the next call reconnects.
   */
  private settle<T>(request: Promise<T>): Promise<T> {
    return request.catch((error: unknown) => {
      const overflow = this.stdio?.overflow;
      if (!isConnectionLost(error)) throw overflow ?? summarizeSchemaError(error);
      const lost = overflow ?? (this.stdio?.exited ? new McpError(ErrorCode.ConnectionClosed, this.exitDescription()) : error);
      this.events?.lost(errorMessage(lost));
      throw lost;
    });
  }

  private exitDescription(): string {
    const how = this.stdio?.exited;
    return how ? `the server process exited (${how})` : "the server process exited";
  }
}

const SCHEMA_PROBLEMS_SHOWN = 2;

/**
 * The SDK rejects an answer that does not fit the request's result schema with a ZodError whose message is every
 * issue as JSON (3.3 KB for one tool result): the model gets the first problems, one line.
 */
function summarizeSchemaError(error: unknown): unknown {
  // Zod (full or mini, v3 or v4) names its error differently: what they share is `issues`, each with a `path`.
  const issues = (error as { issues?: unknown } | undefined)?.issues as { path?: unknown; message?: unknown }[] | undefined;
  if (!(error instanceof Error) || !Array.isArray(issues) || issues.length === 0 || !issues.every((issue) => Array.isArray(issue?.path)))
    return error;
  const problems = issues.map((issue) => {
    const path = (issue.path as unknown[]).join(".") || "result";
    return `${path}: ${typeof issue.message === "string" ? issue.message : "invalid"}`;
  });
  const more = problems.length > SCHEMA_PROBLEMS_SHOWN ? ` (and ${problems.length - SCHEMA_PROBLEMS_SHOWN} more)` : "";
  return new Error(`its answer was not a valid MCP result: ${problems.slice(0, SCHEMA_PROBLEMS_SHOWN).join("; ")}${more}`, {
    cause: error,
  });
}

/** Spawns or reaches the server and initialises the session, under `options.signal`. */
export function openSession(def: ServerDefinition, options: OpenOptions): Promise<McpSession> {
  const createClient = () => newClient(def.name, options);
  return transportFamily(def) === "stdio" ? openStdio(def, createClient, options) : openHttp(def, createClient, options);
}

/** The error a failed connect rejects with: names the server, says why, never repeats a token. */
export function describeConnectFailure(def: ServerDefinition, error: unknown, stderrTail: string[], authState: ServerAuthState): Error {
  if (error instanceof NeedsAuthError) return error;
  if (isUnauthorized(error)) return unauthorized(def, authState);
  let message = `MCP server "${def.name}" failed to connect: ${failureReason(def, error)}`;
  if (stderrTail.length > 0) message += `\nLast stderr lines:\n${stderrTail.map((line) => `  ${line}`).join("\n")}`;
  return new Error(message, { cause: error });
}

const CLIENT_INFO = { name: "pi-mcp-adapter", version: readOwnVersion() };

function readOwnVersion(): string {
  try {
    return (JSON.parse(readFileSync(new URL("./package.json", import.meta.url), "utf8")) as { version: string }).version;
  } catch {
    return "0.0.0";
  }
}

/**
 * A client for one server. It offers each elicitation mode only when someone answers it (the SDK then refuses the
 * other mode's requests before they get here), and roots always: Pi's working directory, as a `file://` URI.
 */
function newClient(serverName: string, options: Pick<OpenOptions, "elicitation" | "urlElicitation" | "roots">): Client {
  const { elicitation: form, urlElicitation: url } = options;
  const modes = { ...(form ? { form: { applyDefaults: true } } : {}), ...(url ? { url: {} } : {}) };
  const capabilities = { roots: { listChanged: true }, ...(form || url ? { elicitation: modes } : {}) };
  const client = new Client(CLIENT_INFO, { capabilities });
  client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: options.roots().map(fileRoot) }));
  if (form || url) {
    client.setRequestHandler(ElicitRequestSchema, ({ params }, extra) =>
      params.mode === "url" ? url!(serverName, params, extra.signal) : form!(serverName, params, extra.signal),
    );
  }
  return client;
}

function fileRoot(directory: string): Root {
  return { uri: pathToFileURL(directory).href, name: basename(directory) || directory };
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

async function openStdio(configured: ServerDefinition, createClient: () => Client, options: OpenOptions): Promise<McpSession> {
  const { signal } = options;
  const def = await withCommandValues(configured, signal);
  const env = mergeEnv(process.env, def.env);
  let command = def.command!;
  let args = def.args ?? [];
  const npx = options.resolveNpx ? await abortable(resolveNpx(command, args, env, def, options.agentDir), signal) : undefined;
  if (npx?.kind === "resolved") ({ command, args } = npx);
  if (def.cwd) await assertDirectory(def.cwd);
  // Closed while the command was being prepared: start no process only to end it.
  signal.throwIfAborted();
  const transport = new GroupedStdioTransport({ command, args, env, cwd: def.cwd, maxBufferSize: MAX_STDIO_MESSAGE_BYTES });
  transport.stderr.on("data", (chunk: Buffer) => {
    options.stderr.append(chunk.toString("utf8"));
    if (def.debug) process.stderr.write(chunk);
  });
  const client = createClient();
  // The transport's close ends the server's whole process group (see connection/stdio-transport.ts).
  const shutdown = () => client.close().catch(ignored("closing the session"));
  await connectClient(client, transport, shutdown, options).catch((error: unknown) => {
    throw transport.overflow ?? error;
  });
  return new SdkSession(client, "stdio", shutdown, transport, npx);
}

/** How every request to an HTTP server is made: its headers, OAuth, and noting what a refusal asks for. */
interface HttpOptions {
  requestInit: RequestInit;
  authProvider?: OAuthClientProvider;
  fetch: FetchLike;
}

async function openHttp(configured: ServerDefinition, createClient: () => Client, options: OpenOptions): Promise<McpSession> {
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
  if (def.transport === "sse") return openSse(url, http, createClient(), options);
  try {
    return await openStreamableHttp(url, http, createClient(), options);
  } catch (error) {
    if (def.transport === "http" || !(error instanceof StreamableHTTPError && STREAMABLE_HTTP_REJECTED.has(error.code ?? 0))) {
      throw error;
    }
    try {
      return await openSse(url, http, createClient(), options);
    } catch (sseError) {
      if (isUnauthorized(sseError) || sseError instanceof NeedsAuthError || options.signal.aborted) throw sseError;
      throw new Error(
        `Streamable HTTP was refused (HTTP ${error.code}) and the legacy SSE transport failed too: ${errorMessage(sseError)}`,
      );
    }
  }
}

async function openStreamableHttp(url: URL, http: HttpOptions, client: Client, options: OpenOptions): Promise<McpSession> {
  const transport = new StreamableHTTPClientTransport(url, http);
  const shutdown = async () => {
    // Tell the server the session is over (spec: SHOULD), without letting a slow server hold up shutdown.
    if (transport.sessionId)
      await Promise.race([transport.terminateSession().catch(ignored("ending the HTTP session (DELETE)")), delay(SESSION_DELETE_WAIT_MS)]);
    await client.close().catch(ignored("closing the HTTP session"));
  };
  await connectClient(client, transport, shutdown, options);
  return new SdkSession(client, "http", shutdown);
}

async function openSse(url: URL, http: HttpOptions, client: Client, options: OpenOptions): Promise<McpSession> {
  // The SDK adds `requestInit.headers` to the EventSource GET as well as to the POSTs.
  const transport = new SSEClientTransport(url, http);
  const shutdown = () => client.close().catch(ignored("closing the session"));
  await connectClient(client, transport, shutdown, options);
  return new SdkSession(client, "sse", shutdown);
}

/** `client.connect` (initialize) under the startup deadline; on failure the half-started transport is ended. */
async function connectClient(client: Client, transport: Transport, shutdown: () => Promise<void>, options: OpenOptions): Promise<void> {
  const { signal, timeoutMs } = options;
  try {
    // `abortable` too: opening an SSE stream does not listen to the signal.
    await abortable(client.connect(transport, { signal, timeout: timeoutMs }), signal);
  } catch (error) {
    await shutdown();
    throw error;
  }
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

/**
 * A 401 the connection could not answer. With OAuth in play (or announced by the server's challenge, RFC 9728) the
 * user must sign in; otherwise the configured credentials are missing or wrong.
 */
function unauthorized(def: ServerDefinition, authState: ServerAuthState): NeedsAuthError {
  if (def.oauth?.grantType === "client_credentials") {
    const fields = `"oauth.clientId", "oauth.clientSecret" or "oauth.privateKey", and "oauth.scope"`;
    return new NeedsAuthError(
      def.name,
      `MCP server "${def.name}" refused the token its client credentials got: check ${fields} in its config.`,
    );
  }
  if (canSignIn(def) && authState.usesOAuth) return signInNeeded(def.name, "needs a new sign-in (it refused its OAuth token)");
  if (canSignIn(def) && authState.challenge?.resourceMetadataUrl) return signInNeeded(def.name, "needs a sign-in (OAuth)");
  return new NeedsAuthError(def.name, needsAuthMessage(def));
}

function needsAuthMessage(def: ServerDefinition): string {
  const where = `${safeUrl(def.url)} answered 401 Unauthorized`;
  const source =
    def.bearerToken !== undefined
      ? `"bearerToken"`
      : def.bearerTokenEnv
        ? `the variable ${def.bearerTokenEnv} ("bearerTokenEnv")`
        : hasAuthorizationHeader(def)
          ? `the "Authorization" header`
          : undefined;
  if (source) return `MCP server "${def.name}" needs authentication: ${where} to the token from ${source}. Check that it is valid.`;
  return `MCP server "${def.name}" needs authentication: ${where}. Set "bearerToken" or "bearerTokenEnv" (or an "Authorization" header) in its config.`;
}

/** A system error code in an error's text (`connect ECONNREFUSED 127.0.0.1:8080`). */
const SYSTEM_ERROR_CODE = /\bE[A-Z]{3,}\b/;
/** What the SSE transport's error text says before fetch's own reason (the eventsource library flattens the error). */
const SSE_FETCH_FAILED = /^SSE error: (?:TypeError: )?(?:fetch failed: )?/;

function failureReason(def: ServerDefinition, error: unknown): string {
  const oauth = describeOAuthError(error);
  if (oauth) return oauth;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if ((error as { syscall?: string } | undefined)?.syscall?.startsWith("spawn")) {
    if (code === "ENOENT") return `command not found: ${def.command}`;
    // The system says EACCES, not ENOENT, for a command found nowhere when PATH has a directory it may not search.
    if (code === "EACCES")
      return `cannot run ${def.command}: permission denied (a file that is not executable, or a command not found with a directory on PATH this user cannot search)`;
  }
  if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed && def.command) {
    return "the server process exited before it was ready";
  }
  // The SDK's code -1: a success status with a body that is not MCP (a login page, a proxy's error page).
  if (error instanceof StreamableHTTPError && error.code === -1) {
    return `${safeUrl(def.url)} did not answer as an MCP server (${briefHttpError(error.message)}); check the URL`;
  }
  // An SSE stream that never opened has no status: nothing answered. The SDK keeps only the text of fetch's error.
  if (error instanceof SseError && error.code === undefined) {
    const reason = briefHttpError(error.message.replace(SSE_FETCH_FAILED, ""));
    return cannotReach(def, { code: reason.match(SYSTEM_ERROR_CODE)?.[0], message: reason });
  }
  if (error instanceof StreamableHTTPError || error instanceof SseError) {
    return `${safeUrl(def.url)} answered HTTP ${error.code ?? "?"}: ${briefHttpError(error.message)}`;
  }
  if (error instanceof TypeError && error.message === "fetch failed") {
    return cannotReach(def, error.cause as NodeJS.ErrnoException | undefined);
  }
  return errorMessage(error);
}

/**
 * `cannot reach <url> (why)`: the system's code (ECONNREFUSED, ENOTFOUND, ...), else fetch's own reason, from the
 * error fetch gave (Streamable HTTP) or read out of its text (SSE).
 */
function cannotReach(def: ServerDefinition, cause: { code?: string; message?: string } | undefined): string {
  // fetch never connects to the Fetch standard's blocked ports (1, 25, 6000, ...) and says only "bad port".
  const why = cause?.code || (cause?.message === "bad port" ? `fetch never connects to port ${new URL(def.url!).port}` : cause?.message);
  return `cannot reach ${safeUrl(def.url)}${why ? ` (${why})` : ""}`;
}

function isUnauthorized(error: unknown): boolean {
  return error instanceof UnauthorizedError || ((error instanceof StreamableHTTPError || error instanceof SseError) && error.code === 401);
}

/** Errors that mean the session itself is gone (not just this request): the next call must reconnect. */
function isConnectionLost(error: unknown): boolean {
  if (error instanceof McpError) return error.code === ErrorCode.ConnectionClosed;
  // Streamable HTTP: 404 means the server no longer knows our session (spec: start a new one).
  if (error instanceof StreamableHTTPError) return error.code === 404;
  return error instanceof TypeError && error.message === "fetch failed";
}

async function assertDirectory(cwd: string): Promise<void> {
  const info = await stat(cwd).catch(() => undefined);
  if (!info?.isDirectory()) throw new Error(`the working directory "cwd" (${cwd}) does not exist`);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

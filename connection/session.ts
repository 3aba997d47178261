/**
 * What both halves of the connection code share, free of the MCP SDK at run time (only its types): server-manager.ts
 * is loaded with the extension, connection/sdk-session.ts (the SDK half) only when the first server connects, and neither may
 * pull the other in. So the contracts between them are declared here: how a session is opened (`OpenOptions`), the
 * session the SDK half opens (`McpSession`), the lists it follows, and the elicitation handlers the manager hands it.
 * The checks both halves make of a definition are beside it: auth-checks.ts (credentials, sign-in) and
 * server-target.ts (transport, URL, environment).
 */
import type {
  CallToolResult,
  CreateMessageRequestParams,
  CreateMessageResult,
  CreateMessageResultWithTools,
  DiscoverResult,
  ElicitRequestFormParams,
  ElicitRequestURLParams,
  ElicitResult,
  GetPromptResult,
  ReadResourceResult,
  RequestOptions,
} from "@modelcontextprotocol/client";
import type { NpxResolution } from "../npx-resolver.ts";
import type { OAuthStore } from "./oauth-store.ts";
import type { OutputTail } from "./stderr-tail.ts";
import type { Listing } from "./listing.ts";
import type { RunningTask, TaskPolicy, TaskReference, ToolCallStart } from "./running-task.ts";
import type { MessageTrace } from "./protocol-trace.ts";
import type { LogMessage } from "./server-log.ts";
import type {
  LogLevelSetting,
  McpPrompt,
  McpResource,
  McpResourceTemplate,
  McpTool,
  SkillEntry,
  SkillListing,
  SkillRead,
  TransportKind,
} from "../types.ts";

/**
 * Answers a server's form elicitation (`elicitation/create`): asks the user, or decides without one. An `accept`
 * may leave fields out: the SDK fills in the defaults the form's schema gives (SEP-1034).
 */
export type ElicitationHandler = (serverName: string, request: ElicitRequestFormParams, signal: AbortSignal) => Promise<ElicitResult>;

/** Answers a server's URL-mode elicitation: a page the user is asked to open (connection/elicitation-url.ts). */
export type UrlElicitationHandler = (serverName: string, request: ElicitRequestURLParams, signal: AbortSignal) => Promise<ElicitResult>;

/**
 * Answers a server's request for a completion from the user's model (`sampling/createMessage`): asks the user first,
 * and refuses (throws) when nobody can be asked or the user says no.
 */
export type SamplingHandler = (
  serverName: string,
  request: CreateMessageRequestParams,
  signal: AbortSignal,
) => Promise<CreateMessageResult | CreateMessageResultWithTools>;

/**
 * Which protocol a server speaks, as a connect found it: the 2025 era (`initialize`, one session) or the 2026-07-28
 * one (stateless; its `server/discover` answer kept). Kept with the server's metadata so that the next connect knows
 * it without asking (connection/era.ts decides how old a verdict may be).
 */
export type ProtocolVerdict =
  | { era: "legacy"; version: string; checkedAt: number }
  | { era: "modern"; version: string; discover: DiscoverResult; checkedAt: number };

/** What every session of one manager is opened with. */
export interface SessionSettings {
  /** Pi's agent directory (npx resolution keeps its cache there). */
  agentDir: string;
  /** Run `npx pkg` servers straight from npm's cache, without the npm parent process. */
  resolveNpx: boolean;
  /** Without it, the server is told the client cannot elicit forms. */
  elicitation?: ElicitationHandler;
  /** Without it, the server is told the client cannot elicit through a URL. */
  urlElicitation?: UrlElicitationHandler;
  /** Without it, the server is told the client cannot sample. */
  sampling?: SamplingHandler;
  /** The directories answered to `roots/list`, read when the server asks. */
  roots: () => readonly string[];
  /** The protocol trace every transport is hooked into (`/mcp trace`). */
  trace?: MessageTrace;
  /** Is the server told the client renders tools' views (MCP Apps)? Asked at each connect; unset: never. */
  viewsOffered?: (serverName: string) => boolean;
}

/** How the SDK half opens one session (connection/sdk-session.ts `openSession`). */
export interface OpenOptions extends SessionSettings {
  /** Collects a stdio server's stderr. */
  stderr: OutputTail;
  /** OAuth: where tokens are kept, and the server's auth situation (updated by the connection). */
  oauth: { store: OAuthStore; state: ServerAuthState };
  /** Cancels the attempt (a close, or the startup deadline); what was started is ended. */
  signal: AbortSignal;
  timeoutMs: number;
  /** What the last connect found the server speaks: the probe is skipped (connection/era.ts says when it is too old). */
  prior?: ProtocolVerdict;
}

/** The lists a server announces changes of (`notifications/<list>/list_changed`); `resources` covers its templates. */
export type McpList = "tools" | "resources" | "prompts";

/** How a session tells its owner what happens to it once it is up. */
export interface SessionEvents {
  /** The server's tools, resources or prompts changed (it sent a `list_changed` notification). */
  listChanged(list: McpList): void;
  /** The session is gone (the process exited, the connection closed or broke); its requests fail from now on. */
  lost(reason: string): void;
  /** The server logged a message (`notifications/message`) at the level `watch` asked for, or (ignoring it) below. */
  log(message: LogMessage): void;
}

/** What a completion (`completion/complete`) is asked for: a prompt's argument, or a resource template's variable. */
export interface CompletionRequest {
  ref: { type: "ref/prompt"; name: string } | { type: "ref/resource"; uri: string };
  argument: { name: string; value: string };
  /** The values of the other arguments already given. */
  context?: Record<string, string>;
}

/**
 * An initialised MCP session with one server, as the manager uses it. Its requests fail with errors the user can read
 * (a stdio server's exit named, an answer of the wrong shape summed up), and one that shows the session is gone
 * reports `lost` first.
 */
export interface McpSession {
  readonly transport: TransportKind;
  /** stdio: the server's process id. */
  readonly pid?: number;
  /** An npx command: what runs instead of npm, or why npm runs it. */
  readonly npx?: NpxResolution;
  /** What the server's `initialize` (or `server/discover`) answer said about using it (its `instructions`), if anything. */
  readonly instructions: string | undefined;
  /** The protocol this session speaks. */
  readonly protocol: ProtocolVerdict;
  /** Ends the session, and for stdio every process the server started. */
  shutdown(): Promise<void>;
  /**
   * Starts reporting list changes (2026 era: over a `subscriptions/listen` stream it opens), the end of the session,
   * and the server's log messages, which it is asked for from `logLevel` up (2025 era: `logging/setLevel`; 2026: each
   * request's `_meta`). A server without the logging capability is not asked.
   */
  watch(events: SessionEvents, logLevel: LogLevelSetting): void;
  /**
   * `tools/call`. With the tool as listed, a 2026-07-28 HTTP session also sends the headers its input schema
   * declares (SEP-2243 `x-mcp-header`). Input the server asks for (`input_required`) is answered on the way.
   */
  callTool(name: string, args: Record<string, unknown>, options: RequestOptions, tool?: McpTool): Promise<CallToolResult>;
  /**
   * `tools/call` that may come back as a task the server runs (connection/task-calls.ts says when: the tool's
   * `taskSupport` in the 2025 era, the server's choice in the 2026 one): its result, or the task, followed from here.
   */
  startToolCall(
    name: string,
    args: Record<string, unknown>,
    options: RequestOptions,
    tool: McpTool | undefined,
    policy: TaskPolicy,
  ): Promise<ToolCallStart>;
  /** Follows again a task an earlier connection (or Pi session) started on this server. */
  resumeTask(reference: TaskReference, options: RequestOptions): Promise<RunningTask>;
  readResource(uri: string, options: RequestOptions): Promise<ReadResourceResult>;
  getPrompt(name: string, args: Record<string, string>, options: RequestOptions): Promise<GetPromptResult>;
  listTools(options: RequestOptions): Promise<Listing<McpTool>>;
  /** Empty for a server without the resources capability (it must not be asked). */
  listResources(options: RequestOptions): Promise<Listing<McpResource>>;
  /** Empty, too, for a server that does not know the method (templates came later than resources). */
  listResourceTemplates(options: RequestOptions): Promise<Listing<McpResourceTemplate>>;
  /** Empty for a server without the prompts capability. */
  listPrompts(options: RequestOptions): Promise<Listing<McpPrompt>>;
  /** Its Agent Skills (MCP Skills extension); empty for a server without the extension (it is not asked). */
  listSkills(options: RequestOptions): Promise<SkillListing>;
  /** The values the server suggests for an argument (`completion/complete`); none from a server without the capability (not asked). */
  complete(request: CompletionRequest, options: RequestOptions): Promise<string[]>;
  /** One file of a skill, verified against `entry`: a file that does not match is `{ ok: false }`, never bytes. */
  readSkillFile(entry: SkillEntry, fileUri: string, options: RequestOptions): Promise<SkillRead>;
}

/**
 * The server refuses us until credentials are configured (HTTP 401, or a bearer token variable that is not set), or
 * until the user signs in (`signIn`: OAuth, fixed by `/mcp-auth <server>`, which only the user can run).
 */
export class NeedsAuthError extends Error {
  readonly serverName: string;
  readonly signIn: boolean;
  constructor(serverName: string, message: string, signIn = false) {
    super(message);
    this.name = "NeedsAuthError";
    this.serverName = serverName;
    this.signIn = signIn;
  }
}

/**
 * The server and the adapter have no protocol version in common (connection/era.ts): no attempt can work until one
 * of them changes, so the server is not retried, and no other transport is tried.
 */
export class IncompatibleServerError extends Error {
  readonly serverName: string;
  readonly supported: readonly string[];
  constructor(serverName: string, supported: readonly string[], ours: readonly string[]) {
    super(
      `MCP server "${serverName}" speaks no protocol version this adapter does: it supports ${supported.join(", ") || "(none named)"}; ` +
        `the adapter supports ${ours.join(", ")}`,
    );
    this.name = "IncompatibleServerError";
    this.serverName = serverName;
    this.supported = supported;
  }
}

/** What a server said when it last refused a request: its `WWW-Authenticate` challenge (RFC 6750, RFC 9728). */
export interface AuthChallenge {
  scope?: string;
  /** RFC 9728: where its protected-resource metadata is. A server that names it signs in with OAuth. */
  resourceMetadataUrl?: string;
  /** HTTP 403 `insufficient_scope`: the token is valid but lacks `scope` (a step-up sign-in is needed). */
  insufficientScope: boolean;
  /** The challenge names the DPoP scheme (RFC 9449 §7.1): the server wants tokens bound to a key. */
  dpop?: boolean;
}

/** One server's OAuth situation during a session, shared by its connects and its sign-ins. */
export interface ServerAuthState {
  challenge?: AuthChallenge;
  /** The last connect had OAuth in play (configured, or signed in before): a 401 then calls for a sign-in. */
  usesOAuth: boolean;
}

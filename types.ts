/**
 * Shared types of the adapter (the rules that name MCP tools for Pi are in tool-names.ts).
 */
import type { RequestOptions } from "@modelcontextprotocol/client";

// ---------------------------------------------------------------------------------------------
// Configuration
// ---------------------------------------------------------------------------------------------

/** `lazy-keep-alive`: connected on first use like `lazy`, then kept up like `keep-alive` (upstream 2.x's mode). */
export type LifecycleMode = "lazy" | "eager" | "keep-alive" | "lazy-keep-alive";
/** `mcp`: `mcp__<server>__<tool>`, the `server` name behind an `mcp__` prefix (upstream 2.x's mode, Claude Code's names). */
export type ToolPrefixMode = "server" | "short" | "none" | "mcp";
/** Tools that ask the user before they run: all (`true`), none (`false`), or those matching these patterns. */
export type ApprovalRule = boolean | string[];
export type TransportKind = "stdio" | "http" | "sse";
export type AuthKind = "bearer" | "oauth";
export type OAuthGrantType = "authorization_code" | "client_credentials";
/**
 * How a tool reaches the model, in Pi 1.x's built-in MCP words (its `exposure` / `toolExposure`): `direct` = always
 * active (as `directTools`), `hidden` = unreachable (as `excludeTools`), `codemode` / `deferred` = found through
 * ToolSearch (what every tool is here by default).
 */
export type ToolExposure = "codemode" | "deferred" | "direct" | "hidden";
export const TOOL_EXPOSURES: readonly ToolExposure[] = ["codemode", "deferred", "direct", "hidden"];
/**
 * The severities of a server's log messages (MCP `notifications/message`, RFC 5424's), least severe first: a server's
 * `logLevel` asks for its messages at one of them and up.
 */
export const LOG_LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
/** A server's `logLevel`: `off` keeps none of its messages. */
export type LogLevelSetting = LogLevel | "off";
/** How a sign-in identifies the adapter to the authorization server (Pi's built-in MCP's field). */
export type OAuthClientRegistration = "auto" | "dcr" | "cimd";

/** A server's `oauth` object: how the adapter signs in to it (every field optional). */
export interface OAuthSettings {
  /** A client registered with the authorization server beforehand (else one is registered dynamically). */
  clientId?: string;
  clientSecret?: string;
  /** Asked for when the server's own challenge names no scope. */
  scope?: string;
  /** The sign-in callback's port on 127.0.0.1 (the redirect URI a pre-registered client was given); Pi's `callbackPort`. */
  redirectPort?: number;
  /** An HTTPS client ID metadata document (CIMD): used as the client id where the authorization server accepts it. */
  clientMetadataUrl?: string;
  /** The `client_name` a dynamic registration sends (default `Pi (pi-mcp-adapter)`). */
  clientName?: string;
  /** `dcr`: always register (a `clientMetadataUrl` is not used); `auto`/`cimd`: the document when there is one. */
  clientRegistration?: OAuthClientRegistration;
  /** `client_credentials`: no user, the client's own id and secret get the token. */
  grantType?: OAuthGrantType;
  /** client_credentials: the authorization server (issuer URL) the client belongs to; its secret is sent nowhere else. */
  authorizationServer?: string;
  /** client_credentials: a PEM private key the client proves itself with (private_key_jwt) instead of a secret. */
  privateKey?: string;
  /** The JWS algorithm of `privateKey`'s signatures (default RS256). */
  signingAlgorithm?: string;
  /**
   * The authorization server's metadata document, used instead of discovery through the server's protected-resource
   * metadata (which names the wrong authorization server, or none); Pi 1.x's built-in field. HTTPS or loopback.
   */
  authServerMetadataUrl?: string;
  /**
   * DPoP (RFC 9449, SEP-1932) for a sign-in: the tokens are bound to a key kept with them, and every request proves it
   * holds the key. `true`: always; `false`: never; absent: when the server's 401 asks for the DPoP scheme.
   */
  dpop?: boolean;
  /**
   * Workload identity federation (SEP-1933): the workload's own JWT (a CI job's or a cloud's identity token), sent as a
   * JWT-bearer grant to `authorizationServer` for each token: as written, `${VAR}`, or a `!command` that prints it.
   */
  workloadToken?: string;
  /** Workload identity federation: a file holding the workload's JWT, read for each token (platforms rotate it). */
  workloadTokenFile?: string;
  /**
   * Enterprise-managed authorization (SEP-990): the user's ID token from the company's identity provider is exchanged
   * there for an authorization grant (ID-JAG), which `authorizationServer` takes from the client `clientId`.
   */
  identityProvider?: IdentityProviderSettings;
}

/** The company's identity provider, for enterprise-managed authorization (an `oauth.identityProvider` object). */
export interface IdentityProviderSettings {
  /** Its issuer URL: its metadata (token endpoint) is discovered from it. */
  issuer: string;
  /** Its token endpoint, where the ID token is exchanged; absent: the one its metadata names. */
  tokenEndpoint?: string;
  /** The adapter's client at the identity provider. */
  clientId: string;
  clientSecret?: string;
  /**
   * The user's ID token: as written, `${VAR}`, or a `!command` that prints it (run for each token). Absent: the user
   * signs in at the identity provider in the browser with /mcp-auth, and the ID token is kept with the tokens.
   */
  idToken?: string;
}

export const IMPORT_KINDS = ["cursor", "claude-code", "claude-desktop", "codex", "windsurf", "vscode"] as const;
export type ImportKind = (typeof IMPORT_KINDS)[number];

/** One server as written in a config file (after host-specific fields are mapped to ours). */
export interface ServerEntry {
  enabled?: boolean;
  /** stdio */
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  /** HTTP */
  url?: string;
  headers?: Record<string, string>;
  /** Transport named by the file (`type`); inferred from command/url when absent. */
  transport?: TransportKind;
  auth?: AuthKind;
  oauth?: OAuthSettings;
  bearerToken?: string;
  bearerTokenEnv?: string;
  /** Behaviour */
  lifecycle?: LifecycleMode;
  /** Minutes; 0 disables idle shutdown. */
  idleTimeout?: number;
  startupTimeoutMs?: number;
  /** Overrides `settings.requestTimeoutMs` for this server; `<= 0` = the default. */
  requestTimeoutMs?: number;
  /** Overrides `settings.maxTotalTimeoutMs` for this server; `<= 0` = the default. */
  maxTotalTimeoutMs?: number;
  /**
   * Seconds (Pi 1.x's built-in field): a request's limit when `requestTimeoutMs` is not set, and the startup limit
   * when it is longer than `startupTimeoutMs`'s default (calls/limits.ts).
   */
  timeout?: number;
  /** Overrides `settings.outputGuard` for this server. */
  outputGuard?: OutputGuard;
  /** Overrides `settings.tasks` for this server, field by field. */
  tasks?: TaskSettings;
  /** What the server offers, in a sentence: its line in ToolSearch's catalog, and a search field of its tools. */
  description?: string;
  /** Every tool's exposure, unless `toolExposure` names the tool (tools/exposure.ts). */
  exposure?: ToolExposure;
  /** Tool name or `*` pattern → exposure: an exact name wins over patterns, then the first pattern that matches. */
  toolExposure?: Record<string, ToolExposure>;
  /**
   * Fields (`env.<KEY>`, `headers.<Name>`, `oauth.clientSecret` and the other `oauth` secrets) whose value is a
   * `!command`: run in a shell when the server starts (an `oauth` secret: when it is needed), its output (trimmed) being
   * the value (connection/command-values.ts).
   * Only set for files allowed to run commands.
   */
  commandValues?: string[];
  exposeResources?: boolean;
  directTools?: boolean | string[];
  /** Only these tools (names or globs); `excludeTools` is applied after it. */
  includeTools?: string[];
  /** Names or globs of tools hidden. */
  excludeTools?: string[];
  /** `false`: the server's skills (MCP Skills extension) are not offered to Pi. */
  skills?: boolean;
  /** Only these skills (names or globs); `excludeSkills` is applied after it. */
  includeSkills?: string[];
  /** Names or globs of skills not offered. */
  excludeSkills?: string[];
  /** Overrides `settings.approveTools` for this server. */
  approveTools?: ApprovalRule;
  /** `false`: the server's tools open no view (MCP Apps), and the server is not told the client renders them. */
  apps?: boolean;
  /** Overrides `settings.toolPrefix` for this server. */
  toolPrefix?: ToolPrefixMode;
  debug?: boolean;
  /** The least severe of the server's log messages it is asked for and that are kept (default `warning`). */
  logLevel?: LogLevelSetting;
}

/**
 * How much of a result the model is shown (upstream's field): `true` Pi's own limits, `false` everything, or other
 * limits. Past them the model gets the head and the whole result is kept in a file (calls/result-spill.ts).
 */
export type OutputGuard = boolean | { maxBytes?: number; maxLines?: number };

export interface CaptureStatsSettings {
  /** A `~` the user wrote is already expanded (config/settings.ts), like every path of the config. */
  path?: string;
  flushDelayMs?: number;
}

/** An OpenAI-compatible embeddings endpoint the user runs (Ollama, LM Studio, ...), for semantic re-ranking. */
export interface EmbeddingsSettings {
  /** `POST` goes here; a URL not ending in `/embeddings` gets it appended (`http://localhost:11434/v1`). */
  url: string;
  model: string;
  /** Name of the environment variable holding the API key, sent as a bearer token. */
  apiKeyEnv?: string;
  /** Per request; a query embedding later than this is not waited for (lexical order). Default 2000. */
  timeoutMs?: number;
}

export interface SearchSettings {
  /** Off when unset. */
  embeddings?: EmbeddingsSettings;
}

/** `settings.script`: the `codemode` tool on hosts without one (script-tool.ts); off unless set. */
export interface ScriptSettings {
  /** `settings.script: true` is `{ "enabled": true }`; an object alone turns it on too. */
  enabled?: boolean;
  /** A script's wall-clock limit, tool calls included; default 60 s. */
  timeoutMs?: number;
  /** The script VM's memory limit; default 64 MB. */
  memoryMb?: number;
}

/**
 * `settings.sampling`: may servers ask for a completion from the user's current model (connection/sampling.ts)?
 * On unless set to `false`; every request is still approved by the user first.
 */
export interface SamplingSettings {
  /** `settings.sampling: false` is `{ "enabled": false }`: servers are told the client cannot sample. */
  enabled?: boolean;
  /** The most tokens one completion may produce, whatever a server asks for; default 4096. */
  maxTokens?: number;
}

/** `settings.tasks` (and a server's `tasks`): how tool calls that run as tasks are waited for (tasks.ts). */
export interface TaskSettings {
  /** How long a call waits for its task before handing it back to the model (it goes on running); 0: at once. */
  waitMs?: number;
  /** A task's whole run, waited for or not; past it the task is cancelled. */
  maxRunMs?: number;
  /** `task`: call tools whose task support is `optional` (2025-11-25) as tasks too; `plain` (default): not. */
  optional?: "plain" | "task";
}

/**
 * `settings.apps`: may tools' interactive views (MCP Apps) open? On unless set to `false`; servers are then not told
 * the client renders views.
 */
export interface AppsSettings {
  /** `settings.apps: false` is `{ "enabled": false }`. */
  enabled?: boolean;
  /** `false`: the page's address is shown, the browser is not opened (default: opened where a browser can open). */
  openBrowser?: boolean;
}

export interface McpSettings {
  toolPrefix?: ToolPrefixMode;
  /** Minutes; default 10; 0 disables idle shutdown. */
  idleTimeout?: number;
  directTools?: boolean;
  /** Default for servers without their own `approveTools`; unset = no approval asked. */
  approveTools?: ApprovalRule;
  toonEncode?: boolean | string[];
  /** Per request of a tool call, restarted by progress; `<= 0` or unset = 10 minutes. */
  requestTimeoutMs?: number;
  /** A call's whole time, progress or not; `<= 0` or unset = 60 minutes. */
  maxTotalTimeoutMs?: number;
  outputGuard?: OutputGuard;
  captureStats?: boolean | CaptureStatsSettings;
  search?: SearchSettings;
  script?: boolean | ScriptSettings;
  sampling?: boolean | SamplingSettings;
  tasks?: TaskSettings;
  apps?: boolean | AppsSettings;
  /** Use every project's MCP config without asking (read from the user's files only: a project cannot trust itself). */
  trustProjectServers?: boolean;
  /** The MCP Registry `/mcp search` and `/mcp add <registry name>` use: `false` turns them off. */
  registry?: boolean | RegistrySettings;
}

/** `settings.registry`: where the MCP Registry API (v0.1) is; a company's sub-registry speaks the same API. */
export interface RegistrySettings {
  /** Default: the official registry, `https://registry.modelcontextprotocol.io`. */
  url?: string;
}

/**
 * Where a server definition came from: shown by `/mcp status`, so people can see which file starts a process.
 * - `user-shared`: `~/.config/mcp/mcp.json`, the host-neutral file upstream 2.x reads too.
 * - `pi-package`: a Pi package the user installed declares it (`"pi": { "mcp": … }` in its package.json); `path` is
 *   the package's config file, `label` its source as Pi's settings list it.
 * - `claude-plugin`: a Claude Code plugin folder named in `claudePlugins`; `path` is its `.mcp.json`, `label` its name.
 * - `extension`: registered by another Pi extension (`pi.registerMcpServer`, Pi 1.x); `path` is that extension's.
 * - `runtime`: registered by another extension for this session through upstream's event; `path` names the event.
 */
export type ConfigSourceKind =
  | "user"
  | "project"
  | "project-shared"
  | "user-shared"
  | "pi-package"
  | "claude-plugin"
  | "extension"
  | "runtime"
  | ImportKind;

export interface ConfigSource {
  kind: ConfigSourceKind;
  path: string;
  /** What the kind alone does not say: the package's source (`npm:@acme/tools`), the plugin's name. */
  label?: string;
}

/** A server ready to use: interpolated, validated, with its name and origin. */
export interface ServerDefinition extends ServerEntry {
  name: string;
  /** The file that defines its command or url (an override above it does not change this). */
  source: ConfigSource;
  /** Set when an override in a higher file disabled it: that file. */
  disabledIn?: ConfigSource;
}

export interface ConfigProblem {
  level: "error" | "warning";
  file: string;
  server?: string;
  field?: string;
  message: string;
}

export interface LoadedConfig {
  /** In precedence-resolved order; disabled servers are kept (enabled: false). */
  servers: ServerDefinition[];
  settings: McpSettings;
  problems: ConfigProblem[];
  /** The user file in use: `<agentDir>/mcp.json`, or the file given with `--mcp-config` (which may not exist). */
  userFile: string;
  /** Servers the files define that were not loaded (absent: none); the `problems` naming each say why. */
  skipped?: SkippedServer[];
  /** What the project directory's files configure, applied only once the project is trusted (absent: they configure nothing). */
  project?: ProjectConfig;
  /** `SKILL.md` files of the Claude Code plugins listed with `"skills": true`: Pi reads them as its own skills. */
  pluginSkills?: string[];
  /** The hosts whose files the config imports (`imports` of all our files). */
  imports?: ImportKind[];
}

/**
 * A server a file defines but the config could not load (its entry is invalid, it reads a variable that is not set,
 * or it only changes a server no lower file defines): still the user's to disable or remove, in `source`.
 */
export interface SkippedServer {
  name: string;
  /** The file whose entry settled it (the highest override, for one that changes nothing). */
  source: ConfigSource;
}

/**
 * The project's part of the config: `.pi/mcp.json`, `.mcp.json`, and the project files of imported hosts
 * (`.cursor/mcp.json`, `.vscode/mcp.json`, ...). A repository can write them, so they start nothing until the user
 * trusts the project (host/project-trust.ts).
 */
export interface ProjectConfig {
  trusted: boolean;
  /** The project's files that configure servers, settings or imports, highest precedence first. */
  files: string[];
  /** The servers they define: in `servers` when trusted, left out when not. */
  servers: string[];
}

// ---------------------------------------------------------------------------------------------
// MCP data as the adapter keeps it
// ---------------------------------------------------------------------------------------------

/**
 * Whether a tool runs as a task (MCP 2025-11-25 `execution.taskSupport`): `required` tools are always called as one,
 * `optional` ones as `settings.tasks.optional` says, `forbidden` ones (the default) never. 2026-07-28 servers decide
 * per call instead, and their tools declare nothing.
 */
export type TaskSupport = "required" | "optional" | "forbidden";
const TASK_SUPPORT_VALUES: readonly unknown[] = ["required", "optional", "forbidden"] satisfies TaskSupport[];

/** The field for a tool that declares a task support worth keeping; `forbidden` (the default) and nonsense: none. */
export function taskSupportOf(value: unknown): { taskSupport?: TaskSupport } {
  return value !== "forbidden" && TASK_SUPPORT_VALUES.includes(value) ? { taskSupport: value as TaskSupport } : {};
}

export interface McpTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: unknown;
  /** The JSON Schema of the tool's `structuredContent`, when the server declares one. */
  outputSchema?: Record<string, unknown>;
  /** Unset: `forbidden` (the spec's default). */
  taskSupport?: TaskSupport;
  /** Its interactive view (MCP Apps, the tool's `_meta.ui`), as apps/tool-ui.ts reads it. */
  ui?: McpToolUi;
}

/** Who may call a tool with a view: the model, the view (`app`), or both (MCP Apps `visibility`). */
export type McpToolAudience = "model" | "app";

/** A tool's `_meta.ui`: the view that shows its results, and who may call it. */
export interface McpToolUi {
  /** The `ui://` resource holding the view's HTML. */
  resourceUri?: string;
  /** Unset: both. */
  visibility?: McpToolAudience[];
}

export interface McpResource {
  uri: string;
  name: string;
  description?: string;
  mimeType?: string;
}

/** An entry of `resources/templates/list`: a family of resources addressed by an RFC 6570 URI template. */
export interface McpResourceTemplate {
  uriTemplate: string;
  name: string;
  description?: string;
  mimeType?: string;
}

export interface McpPromptArgument {
  name: string;
  description?: string;
  required?: boolean;
}

/** An entry of `prompts/list`: offered to the user as `/mcp__<server>__<prompt>`. */
export interface McpPrompt {
  name: string;
  title?: string;
  description?: string;
  arguments?: McpPromptArgument[];
}

// Skills (MCP Skills extension, SEP-2640): what the skills code (skills/) needs of a connected server that publishes
// Agent Skills, its `skills/list` entries and each skill file read and verified against its entry. The connection
// code implements `SkillSource` (connection/skills.ts, over the SDK's `SkillsClient`), the skills code uses it, and
// the metadata cache keeps the entries.

/** One file of a skill as its entry lists it: what a read of it must match. */
export interface SkillFileEntry {
  uri: string;
  /** `sha256:` and 64 lowercase hex digits, over the file's exact bytes. */
  digest: string;
  size: number;
}

/** The skill's `SKILL.md` frontmatter, as JSON, exactly as the server listed it. */
export interface SkillFrontmatter {
  name: string;
  description: string;
  [field: string]: unknown;
}

/** A `skills/list` entry, as the cache keeps it (a read is verified against it, so nothing of it is dropped). */
export interface SkillEntry {
  /** The URI of the skill's `SKILL.md`. */
  uri: string;
  frontmatter: SkillFrontmatter;
  /** Every file of the skill, `SKILL.md` included; `"dynamic"`: the server did not list them (nothing to verify). */
  resources: readonly SkillFileEntry[] | "dynamic";
}

/** Of a listed (or cached) skill, what a read is verified against and nothing else (`_meta` and other fields go). */
export function keptSkillEntry(skill: SkillEntry): SkillEntry {
  return { uri: skill.uri, frontmatter: skill.frontmatter, resources: skill.resources };
}

/** A server's skills: the valid entries, and why the others were refused (one line each). */
export interface SkillListing {
  skills: SkillEntry[];
  problems: string[];
}

/** Why a file was not handed over: the SDK's verification reasons. */
export type SkillReadFailure = "unlisted" | "size" | "digest" | "frontmatter";

/** A file read from the server: its verified bytes, or the check it failed (the bytes are never given). */
export type SkillRead = { ok: true; bytes: Uint8Array } | { ok: false; reason: SkillReadFailure; message: string };

/**
 * One connected server's skills. `list` is empty for a server without the extension. `read` fails (throws) only when
 * the request does (a lost connection, an error answer); a file that arrives but does not match its entry is a
 * `SkillRead` with `ok: false`.
 */
export interface SkillSource {
  list(options?: RequestOptions): Promise<SkillListing>;
  /** `fileUri`: one of `entry.resources`' URIs (its `SKILL.md` is `entry.uri`). */
  read(entry: SkillEntry, fileUri: string, options?: RequestOptions): Promise<SkillRead>;
}

/** A tool as the model sees it: its Pi name, and the way back to the server. */
export interface ToolMetadata {
  /** Name registered with Pi (valid for every provider, unique). */
  name: string;
  serverName: string;
  /** Name the MCP server knows (a resource tool keeps the resource name here). */
  originalName: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** The server's schema of the tool's structured content: what a codemode script's call resolves to (Pi 1.x). */
  outputSchema?: Record<string, unknown>;
  /** Set for resources exposed as tools: reading it calls `resources/read`. */
  resourceUri?: string;
  /** Set for resource templates exposed as tools: the arguments fill the template, the URI made is read. */
  uriTemplate?: string;
  /** The server runs it as a task (`required`, or `optional`): `/mcp tools` says so. */
  taskSupport?: TaskSupport;
  /** The `ui://` resource of the tool's interactive view (MCP Apps), opened when the tool is called. */
  viewUri?: string;
}

// ---------------------------------------------------------------------------------------------
// The adapter's own tools
// ---------------------------------------------------------------------------------------------

export const TOOL_SEARCH_NAME = "ToolSearch";
/** The proxy that calls a just-loaded tool on hosts that only show new tools from the next prompt. */
export const MCP_CALL_NAME = "McpCall";

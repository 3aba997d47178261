/**
 * What the user reads of the servers' state: the `/mcp status` report, the panel's server lines, the footer's
 * status line and the notices of config problems and failed connects. The report and the status line take a narrow
 * view of the session, so they are tested without a Pi session.
 */
import { describeSource, describeTarget, type ImportableHost } from "../config.ts";
import type { McpLifecycleManager } from "../lifecycle.ts";
import { waysInLines } from "./ways-in.ts";
import { describeNpxResolution } from "../npx-resolver.ts";
import type { SemanticRanker } from "../tool-search.ts";
import {
  canSignIn,
  describeTokenSource,
  formatLogEntry,
  logLevelOf,
  type McpServerManager,
  NeedsAuthError,
  type ServerConnection,
  type ServerLogEntry,
  type ServerState,
} from "../server-manager.ts";
import type { McpExtensionState } from "../state.ts";
import type { SessionTasks } from "../tasks.ts";
import { type CallStats, requestLimitLine, type ToolCallStats } from "../tool-executor.ts";
import { configuredExposure } from "../tool-metadata.ts";
import type { ToolView } from "../tool-view.ts";
import { type ConfigProblem, LOG_LEVELS, type ServerDefinition } from "../types.ts";
import type { McpUi } from "../ui.ts";
import { formatSecondsLeft } from "../util/format-time.ts";
import { debugLog } from "../util/debug-log.ts";
import { oneLine } from "../util/text.ts";

/** What `/mcp status` (and the panel's server lines) read of the session (its state has it all). */
export interface StatusContext extends Pick<ToolView, "config" | "servers" | "inventories" | "tools" | "directToolNames"> {
  readonly manager: Pick<McpServerManager, "getState" | "getConnection" | "isSignedIn" | "serverLog">;
  readonly skills?: Pick<NonNullable<McpExtensionState["skills"]>, "statusLines" | "summary">;
  readonly lifecycle: Pick<McpLifecycleManager, "backoffRemainingMs">;
  readonly stats: Pick<CallStats, "sessionStats"> | undefined;
  readonly semantic: Pick<SemanticRanker, "statusLine"> | undefined;
}

/** Log lines `/mcp status <server>` shows (the manager keeps more: `MAX_LOG_ENTRIES`). */
const LOG_LINES_SHOWN = 20;

/** `importable`: other tools' configs found on this machine, offered when no server is configured. */
export function statusReport(state: StatusContext, importable: readonly ImportableHost[] = []): string {
  const servers = [...state.servers.values()];
  const skipped = skippedServers(state);
  const lines = [statusHeadline(state, servers, skipped.size)];
  if (nothingConfigured(state, servers, skipped.size)) lines.push(...waysInLines(state.config.userFile, state.config.settings, importable));
  if (state.semantic) lines.push(state.semantic.statusLine());
  for (const server of servers) lines.push(...serverStatus(state, server));
  for (const [name, problems] of skipped) lines.push(...skippedServerLines(name, problems));
  // The rest concerns no one server: files, settings, imports.
  const general = state.config.problems.filter((problem) => problem.server === undefined);
  const errors = general.filter((problem) => problem.level === "error");
  const warnings = general.filter((problem) => problem.level === "warning");
  if (errors.length > 0) lines.push("Config errors:", ...errors.map((problem) => `  ${problem.message}`));
  if (warnings.length > 0) lines.push("Config warnings:", ...warnings.map((problem) => `  ${problem.message}`));
  return lines.join("\n");
}

/** No server, and no error that would explain it: a first run, for which the ways in are offered. */
function nothingConfigured(state: Pick<StatusContext, "config">, servers: readonly ServerDefinition[], skipped: number): boolean {
  return servers.length === 0 && skipped === 0 && !state.config.problems.some((problem) => problem.level === "error");
}

/** `/mcp status <server>`: that server's lines, with what it logged. */
export function serverStatusReport(state: StatusContext, name: string): string {
  const server = state.servers.get(name);
  if (!server) {
    const skipped = skippedServers(state).get(name);
    if (skipped) return skippedServerLines(name, skipped).join("\n");
    return noServerNamed(name, state.servers);
  }
  return serverStatus(state, server, true).join("\n");
}

/** A server the config skipped, in `/mcp status` and `/mcp status <server>`: its name, then its problems indented. */
function skippedServerLines(name: string, problems: readonly ConfigProblem[]): string[] {
  return [`✗ ${name}: skipped`, ...problems.map((problem) => `    ${problem.level}: ${problem.message}`)];
}

/** The answer to a command naming a server the session does not have (`/mcp status <server>`, `/mcp trace`). */
export function noServerNamed(name: string, servers: ReadonlyMap<string, unknown>): string {
  return `No MCP server named "${name}". Servers: ${[...servers.keys()].join(", ") || "none"}`;
}

/** What the server logged this session, the latest last. */
function serverLogLines(state: StatusContext, server: ServerDefinition): string[] {
  const log = state.manager.serverLog(server.name);
  const level = logLevelOf(server.logLevel);
  if (!log || log.count === 0) return [`    server log: nothing logged at ${level} and up`];
  const entries = log.entries().slice(-LOG_LINES_SHOWN);
  const shown = entries.length < log.count ? ` (the last ${entries.length} of ${log.count})` : "";
  return [`    server log, ${level} and up${shown}:`, ...entries.map((entry) => `      ${formatLogEntry(entry)}`)];
}

/** How much a server logged this session, and its worst: "3 log messages (worst: error)". */
function logFact(state: StatusContext, name: string): string | undefined {
  const log = state.manager.serverLog(name);
  if (!log || log.count === 0) return undefined;
  const worst = log.entries().reduce((most, entry) => (severity(entry) > severity(most) ? entry : most));
  return `${log.count} log ${log.count === 1 ? "message" : "messages"} (worst: ${worst.level})`;
}

function severity(entry: ServerLogEntry): number {
  return LOG_LEVELS.indexOf(entry.level);
}

function statusHeadline(state: StatusContext, servers: readonly ServerDefinition[], skipped: number): string {
  if (nothingConfigured(state, servers, skipped)) return "MCP: no servers configured. Three ways to add one:";
  if (servers.length === 0 && skipped === 0)
    return `MCP: no servers loaded (see the errors below). Your config file: ${state.config.userFile}`;
  const enabled = servers.filter((server) => server.enabled !== false).length;
  const counts = [`${enabled} enabled`];
  if (servers.length > enabled) counts.push(`${servers.length - enabled} disabled`);
  if (skipped > 0) counts.push(`${skipped} skipped`);
  return `MCP servers: ${counts.join(", ")}`;
}

/** Servers a config problem names that were not loaded (invalid, a variable not set, a VS Code input), with why. */
export function skippedServers(state: Pick<StatusContext, "config" | "servers">): Map<string, ConfigProblem[]> {
  const skipped = new Map<string, ConfigProblem[]>();
  for (const problem of state.config.problems) {
    if (problem.server === undefined || state.servers.has(problem.server)) continue;
    skipped.set(problem.server, [...(skipped.get(problem.server) ?? []), problem]);
  }
  return skipped;
}

/** Why a configured server was not loaded (its config problems); undefined for a server that was. */
export function skipReason(state: Pick<StatusContext, "config" | "servers">, name: string): string | undefined {
  return skippedServers(state)
    .get(name)
    ?.map((problem) => problem.message)
    .join("; ");
}

/**
 * A skipped server's problem in short, for the panel's line: without the file and server it names (the line says
 * them), nor the hint in parentheses at its end (the server's actions show the whole text).
 */
export function skipSummary(problem: ConfigProblem): string {
  const prefix = `${problem.file}: server "${problem.server}": `;
  const text = problem.message.startsWith(prefix) ? problem.message.slice(prefix.length) : problem.message;
  return text.replace(/ \([^()]*\)$/, "");
}

/** A server's lines in the report; `withLog`: its log's lines too (else how much it logged, in one line). */
function serverStatus(state: StatusContext, server: ServerDefinition, withLog = false): string[] {
  const source = `source: ${describeSource(server.source)}`;
  if (server.enabled === false)
    return [`- ${server.name}: ${disabledState(server)} · ${server.disabledIn ? `defined in ${describeSource(server.source)}` : source}`];
  const live = state.manager.getState(server.name);
  const connection = state.manager.getConnection(server.name);
  const facts = [
    describeStatus(live.status),
    signInFact(state, server, live),
    server.lifecycle ?? "lazy",
    live.transport,
    protocolFact(state, server.name, connection),
    toolsFact(state, server.name, live),
    live.pid ? `pid ${live.pid}` : undefined,
  ].filter(Boolean);
  const npx = connection?.npx ? [`    ${describeNpxResolution(connection.npx)}`] : [];
  const limit = requestLimitLine(server, state.config.settings);
  const exposure = exposureLine(state, server);
  // How it gets its token, in the one server's report (the list stays short).
  const auth = withLog ? describeTokenSource(server, state.manager.isSignedIn(server) || live.needsSignIn) : undefined;
  const lines = [
    `${marker(live.status)} ${server.name}: ${facts.join(" · ")}`,
    `    ${describeTarget(server)}`,
    ...(auth ? [`    auth: ${auth}`] : []),
    ...npx,
    `    ${source}`,
  ];
  for (const line of [exposure, limit, ...(state.skills?.statusLines(server.name) ?? [])]) if (line) lines.push(`    ${line}`);
  // Its config problems (fields not supported, values replaced by a default): it loaded, but not quite as written.
  for (const problem of state.config.problems) if (problem.server === server.name) lines.push(`    ${problem.level}: ${problem.message}`);
  // What its tools/list or resources/list answer had that could not be used (dropped entries, endless pages).
  for (const problem of connection?.problems ?? []) lines.push(`    ${problem}`);
  const calls = state.stats ? callSummary([...state.stats.sessionStats(server.name).values()]) : undefined;
  if (calls) lines.push(`    ${calls}`);
  lines.push(...lastErrorLines(state, server.name).map((line) => `    ${line}`));
  const logged = logFact(state, server.name);
  if (withLog) lines.push(...serverLogLines(state, server));
  else if (logged) lines.push(`    server log: ${logged}; /mcp status ${server.name} shows it`);
  return lines;
}

/** The MCP revision the server speaks (connected), or spoke at its last connection. */
function protocolFact(state: StatusContext, name: string, connection: ServerConnection | undefined): string | undefined {
  const protocol = connection?.protocol ?? state.inventories.get(name)?.protocol;
  if (!protocol?.version) return undefined;
  return connection ? `MCP ${protocol.version}` : `MCP ${protocol.version} last time`;
}

/** For a server whose config sets `exposure` / `toolExposure` (Pi 1.x's fields): what they made of its known tools. */
function exposureLine(state: StatusContext, server: ServerDefinition): string | undefined {
  if (server.exposure === undefined && server.toolExposure === undefined) return undefined;
  const listed = state.inventories.get(server.name)?.tools ?? [];
  const hidden = listed.filter((tool) => configuredExposure(server, tool.name) === "hidden").length;
  const direct = (state.tools.byServer.get(server.name) ?? []).filter((tool) => state.directToolNames.has(tool.name)).length;
  const counts = listed.length > 0 ? ` · ${direct} direct, ${hidden} hidden of ${listed.length} tools` : "";
  return `exposure: ${server.exposure ?? "ToolSearch (default)"}${server.toolExposure ? " with toolExposure" : ""}${counts}`;
}

/** Why a server that is not connected last failed, and when it is tried again; none when it has not failed. */
export function lastErrorLines(state: StatusContext, name: string): string[] {
  const live = state.manager.getState(name);
  if (!live.lastError || live.status === "connected") return [];
  const retryIn = state.lifecycle.backoffRemainingMs(name);
  const [first, ...rest] = live.lastError.split("\n");
  // The rest is what a stdio server wrote to stderr before it failed: the startup notice that showed it scrolls away.
  const when =
    retryIn === Number.POSITIVE_INFINITY
      ? " (not tried again until its config changes; /mcp reconnect tries now)"
      : retryIn > 0
        ? ` (next attempt in ${formatSecondsLeft(retryIn)})`
        : "";
  return [`last error: ${first}${when}`, ...rest.map((line) => `  ${line}`)];
}

/** "disabled", or where an override disabled it: the file to edit to turn it back on is that one, not the definition's. */
export function disabledState(server: ServerDefinition): string {
  return server.disabledIn ? `disabled in ${describeSource(server.disabledIn)}` : "disabled";
}

/** The panel's line for an enabled server: state, sign-in, tools, skills. */
export function panelSummary(state: StatusContext, server: ServerDefinition): string {
  const live = state.manager.getState(server.name);
  const facts = [
    describeStatus(live.status),
    signInFact(state, server, live),
    toolsFact(state, server.name, live),
    state.skills?.summary(server.name),
    logFact(state, server.name),
  ];
  return facts.filter(Boolean).join(" · ");
}

/** What Pi has of the server's tools (resource tools included, as in the footer); when not connected, how old. */
function toolsFact(state: StatusContext, name: string, live: ServerState): string {
  const inventory = state.inventories.get(name);
  if (!inventory) return "tools not known yet";
  const tools = toolCount(state, name);
  if (live.status === "connected") return tools;
  return inventory.origin === "live"
    ? `${tools} (listed ${ago(inventory.listedAt)})`
    : `${tools} (from the cache, listed ${ago(inventory.listedAt)})`;
}

/** The tools Pi has for a server: its MCP tools (after includeTools/excludeTools) and its resource tools. */
export function toolCount(state: StatusContext, name: string): string {
  const count = state.tools.byServer.get(name)?.length ?? 0;
  return `${count} ${count === 1 ? "tool" : "tools"}`;
}

function callSummary(stats: readonly ToolCallStats[]): string | undefined {
  const calls = stats.reduce((sum, item) => sum + item.calls, 0);
  if (calls === 0) return undefined;
  const errors = stats.reduce((sum, item) => sum + item.errors, 0);
  const averageMs = stats.reduce((sum, item) => sum + item.totalMs, 0) / calls;
  return `calls this session: ${calls}${errors > 0 ? ` (${errors} failed)` : ""}, ${Math.round(averageMs)} ms on average`;
}

/** For a server that can sign in: signed in, or needing it, or signing in now. */
function signInFact(state: StatusContext, server: ServerDefinition, live: ServerState): string | undefined {
  if (!canSignIn(server)) return undefined;
  if (live.signingIn) return "signing in (waiting for the browser)";
  if (live.needsSignIn) return "sign-in needed";
  return state.manager.isSignedIn(server) ? "signed in" : undefined;
}

export function describeStatus(status: string): string {
  return status === "idle" ? "not started" : status === "closed" ? "stopped" : status;
}

function marker(status: string): string {
  return status === "connected" ? "✓" : status === "failed" || status === "needs-auth" ? "✗" : "○";
}

/** What the footer's status line reads of the session (its state has it all). */
export interface StatusLineContext extends Pick<ToolView, "servers" | "tools"> {
  readonly manager: Pick<McpServerManager, "getConnection" | "getState">;
  readonly ui: Pick<McpUi, "setStatus">;
  readonly tasks?: Pick<SessionTasks, "statusFact">;
}

export function updateStatus(state: StatusLineContext): void {
  const enabled = [...state.servers.values()].filter((server) => server.enabled !== false);
  if (enabled.length === 0) return state.ui.setStatus(undefined);
  const connected = enabled.filter((server) => state.manager.getConnection(server.name)).length;
  const failing = enabled.filter((server) => ["failed", "needs-auth"].includes(state.manager.getState(server.name).status)).length;
  const tools = state.tools.byName.size;
  const facts = [
    `MCP ${connected}/${enabled.length} up`,
    `${tools} tools`,
    failing > 0 ? `${failing} failing` : undefined,
    state.tasks?.statusFact(),
  ];
  state.ui.setStatus(facts.filter(Boolean).join(" · "));
}

function ago(timestamp: number): string {
  const minutes = Math.max(0, Math.round((Date.now() - timestamp) / 60_000));
  if (minutes === 0) return "just now";
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  return hours < 48 ? `${hours} h ago` : `${Math.round(hours / 24)} days ago`;
}

export function firstLine(text: string): string {
  return text.split("\n")[0];
}

/** Told once the session starts: config problems, and tools renamed because their name was taken. */
export function reportConfigProblems(state: McpExtensionState): void {
  for (const problem of state.config.problems) state.ui.notify(`MCP config: ${problem.message}`, problem.level);
  for (const conflict of state.tools.conflicts) {
    state.ui.notify(
      `MCP: tool "${conflict.originalName}" of server "${conflict.serverName}" is named ${conflict.assigned} (${conflict.wanted} is ${
        conflict.reason === "duplicate" ? `taken by server "${conflict.keptBy?.serverName}"` : "reserved"
      }).`,
      "warning",
    );
  }
}

/**
 * Said when the session followed a config file changed outside it: which file, what started and stopped, and the
 * settings that wait for /reload.
 */
export function describeFollowedConfig(
  files: readonly string[],
  change: { started: readonly string[]; stopped: readonly string[] },
  atStart: readonly string[],
): string {
  const changed = change.started.filter((name) => change.stopped.includes(name));
  const facts = [
    listed(
      "now used",
      change.started.filter((name) => !changed.includes(name)),
    ),
    listed(
      "no longer used",
      change.stopped.filter((name) => !changed.includes(name)),
    ),
    listed("changed", changed),
  ].filter(Boolean);
  const later = atStart.length > 0 ? ` ${atStart.join(", ")} ${atStart.length === 1 ? "takes" : "take"} effect after /reload.` : "";
  return `MCP: ${files.join(", ")} changed; the session follows it${facts.length > 0 ? ` (${facts.join("; ")})` : ""}.${later}`;
}

function listed(what: string, names: readonly string[]): string | undefined {
  return names.length > 0 ? `${what}: ${names.join(", ")}` : undefined;
}

export function reportConnectFailure(state: McpExtensionState, name: string, error: Error): void {
  // Told once, by reportSignInNeeded: a lazy server's every call would say it again.
  if (error instanceof NeedsAuthError && error.signIn) return updateStatus(state);
  const status = state.manager.getState(name).status;
  // Unless the message already names the command to run.
  const hint = status === "needs-auth" && !error.message.includes("/mcp-auth") ? ` Run /mcp-auth ${name} for what to configure.` : "";
  // The manager's connect errors already start with `MCP server "<name>"`.
  state.ui.notify(`${error.message}${hint}`, status === "needs-auth" ? "warning" : "error");
  updateStatus(state);
}

/**
 * A server's log message: to the debug log, every one; to the user, the first error (or worse) of each server in a
 * session, on one short line that says where the rest is (a server that keeps failing must not flood the screen).
 */
export function reportServerLog(state: McpExtensionState, name: string, entry: ServerLogEntry, firstSevere: boolean): void {
  debugLog(`${name}: server log ${entry.level}${entry.logger ? ` [${entry.logger}]` : ""}`, entry.text);
  if (!firstSevere) return;
  const what = entry.level === "error" ? "an error" : `a ${entry.level} message`;
  state.ui.notify(
    `MCP server "${name}" logged ${what}: ${oneLine(entry.text, 200, "excerpt")} (/mcp status ${name} shows its log)`,
    "warning",
  );
}

/** Its message names the command (/mcp-auth) the user has to run. */
export function reportSignInNeeded(state: McpExtensionState, _name: string, error: NeedsAuthError): void {
  state.ui.notify(error.message, "warning");
  updateStatus(state);
}

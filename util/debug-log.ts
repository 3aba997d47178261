/**
 * The debug log, opt-in: with `MCP_DEBUG=1` in Pi's environment, one line per event is appended to
 * `<agent dir>/mcp-debug.log` (0600). It records what the adapter otherwise keeps to itself: every failure it
 * swallows on purpose (a close that failed, a file it could not remove, a preload that will be retried), background
 * failures (health checks, revivals, list refreshes) and every failed connect, each with the error's message.
 *
 * Never secrets: the values a config gives as credentials (environment and header values, tokens, the value of a
 * token variable, OAuth client secrets and keys, secret command-line arguments) are registered with `hideInDebugLog`
 * and replaced by `***` wherever they appear, as are bearer tokens, URL passwords and token-like query parameters.
 * Writing is synchronous and best effort: the log never throws and never changes what the adapter does.
 */
import { appendFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { errorMessage } from "./guards.ts";
import { asText } from "./text.ts";

export const DEBUG_LOG_FILE = "mcp-debug.log";
/** A stdio server's whole stderr can ride on an error: a line past this is cut. */
const MAX_LINE_CHARS = 4_000;
/** Shorter values are too common to hide (`1`, `true`) and too short to be a credential worth a line's meaning. */
const MIN_SECRET_CHARS = 4;
const HIDDEN = "***";
const BEARER = /\b(Bearer|Basic)\s+[^\s"',;]+/gi;
const URL_PASSWORD = /(\/\/[^/\s:@]+):[^/\s@]+@/g;
const SECRET_PARAMETER = /\b(access_token|refresh_token|id_token|client_secret|code|token|api_key|apikey|key|password)=[^&\s"']+/gi;

let logFile: string | undefined;
const secrets = new Set<string>();

/** Where the log goes with this environment, or undefined when it is off (`MCP_DEBUG` unset, empty, `0` or `false`). */
export function debugLogPath(agentDir: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const flag = env.MCP_DEBUG?.trim().toLowerCase();
  return flag && flag !== "0" && flag !== "false" ? join(agentDir, DEBUG_LOG_FILE) : undefined;
}

/** Turns the log on (or off) for this process; the adapter calls it when it loads. */
export function openDebugLog(agentDir: string, env: NodeJS.ProcessEnv = process.env): void {
  logFile = debugLogPath(agentDir, env);
}

/** Values never to be written, whatever line they turn up in. */
export function hideInDebugLog(values: Iterable<string | undefined>): void {
  for (const value of values) if (value !== undefined && value.length >= MIN_SECRET_CHARS) secrets.add(value);
}

/** One event: what happened, and the error (or other detail) that goes with it. */
export function debugLog(event: string, detail?: unknown): void {
  if (!logFile) return;
  const what =
    detail === undefined ? "" : `: ${detail instanceof Error || typeof detail !== "object" ? errorMessage(detail) : asText(detail)}`;
  const line = hide(`${new Date().toISOString()} ${event}${what}`).replaceAll("\n", "\n    ").slice(0, MAX_LINE_CHARS);
  try {
    mkdirSync(dirname(logFile), { recursive: true });
    appendFileSync(logFile, `${line}\n`, { mode: 0o600 });
  } catch {
    // A log that cannot be written must not become the adapter's problem.
  }
}

/**
 * For `.catch(ignored("…"))`: a failure the caller does not act on (it is reported elsewhere, or does not matter),
 * written to the debug log with what was being done.
 */
export function ignored(what: string): (error: unknown) => void {
  return (error) => debugLog(what, error);
}

function hide(text: string): string {
  let hidden = text;
  // Longest first: a secret that contains another is hidden whole.
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) hidden = hidden.replaceAll(secret, HIDDEN);
  return hidden.replace(BEARER, `$1 ${HIDDEN}`).replace(URL_PASSWORD, `$1:${HIDDEN}@`).replace(SECRET_PARAMETER, `$1=${HIDDEN}`);
}

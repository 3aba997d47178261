/**
 * One connect, from nothing to a server that is up with its lists read: the SDK half loaded, the session opened in
 * the server's protocol era, its tools, resources and prompts listed, all within the startup deadline. A failure is
 * described for the user (connection/connect-failure.ts) and leaves no process behind.
 *
 * What is known of the server from its last connection (kept with its metadata) saves requests: the era it spoke
 * saves the probe, and the lists it said are still valid (2026 `ttlMs`) are not asked for again. A verdict that no
 * longer holds (the server moved to another protocol) fails the connect: it is made once more knowing nothing.
 */
import { abortable, abortAfter } from "../util/abort.ts";
import { formatSeconds } from "../util/format-time.ts";
import { errorMessage } from "../util/guards.ts";
import { DEFAULT_STARTUP_TIMEOUT_MS, type FreshLists, LiveConnection } from "./live-connection.ts";
import { type ConnectionCode, loadConnectionCode } from "./sdk-loader.ts";
import {
  IncompatibleServerError,
  type McpSession,
  NeedsAuthError,
  type OpenOptions,
  type ProtocolVerdict,
  type SessionSettings,
} from "./session.ts";
import type { OutputTail } from "./stderr-tail.ts";
import type { ServerDefinition } from "../types.ts";

/** What an earlier connection taught of a server. */
export interface KnownServer {
  /** The protocol it spoke. */
  protocol?: ProtocolVerdict;
  /** Its lists that are still valid. */
  fresh?: FreshLists;
}

export interface EstablishOptions {
  settings: SessionSettings;
  /** The server's stderr tail (a stdio server's output, shown when it fails). */
  stderr: OutputTail;
  oauth: OpenOptions["oauth"];
  /** A close or shutdown: what was started is ended. */
  cancelled: AbortSignal;
  known?: KnownServer;
}

/** Spawn or reach the server, open the session, and read its lists, all within its startup timeout. */
export async function establish(def: ServerDefinition, options: EstablishOptions): Promise<LiveConnection> {
  try {
    return await attempt(def, options);
  } catch (error) {
    if (!options.known?.protocol || !mayBeStaleVerdict(error, options.cancelled)) throw error;
    return attempt(def, { ...options, known: undefined });
  }
}

/** Failures the server's credentials, its config, a cancel or a version mismatch explain: another era would not help. */
function mayBeStaleVerdict(error: unknown, cancelled: AbortSignal): boolean {
  return !cancelled.aborted && !(error instanceof NeedsAuthError) && !(error instanceof IncompatibleServerError);
}

async function attempt(def: ServerDefinition, options: EstablishOptions): Promise<LiveConnection> {
  const { cancelled, stderr } = options;
  // Pi's built-in bounds startup requests with `timeout` too; here startup is one limit for spawn, initialize and
  // every list, so `timeout` only lengthens it, never cuts it below the default.
  const timeoutMs = def.startupTimeoutMs ?? Math.max(DEFAULT_STARTUP_TIMEOUT_MS, (def.timeout ?? 0) * 1000);
  const timeout = new AbortController();
  const tooLong = () => new Error(`did not finish starting within ${formatSeconds(timeoutMs)} (start, initialize, list tools)`);
  const clearDeadline = abortAfter(timeout, timeoutMs, tooLong);
  const signal = AbortSignal.any([cancelled, timeout.signal]);
  let mcp: ConnectionCode | undefined;
  let session: McpSession | undefined;
  try {
    mcp = await abortable(loadConnectionCode(), signal);
    const prior = options.known?.protocol;
    session = await mcp.openSession(def, { ...options.settings, stderr, oauth: options.oauth, signal, timeoutMs, prior });
    const connection = await LiveConnection.read(def, session, { signal, timeout: timeoutMs }, options.known?.fresh);
    cancelled.throwIfAborted();
    return connection;
  } catch (error) {
    await session?.shutdown();
    // Output written just before the exit arrives after the exit itself.
    await new Promise((resolve) => setImmediate(resolve));
    // Without the SDK half (it failed to load) there is no SDK error to read.
    if (!mcp) throw new Error(`MCP server "${def.name}" failed to connect: ${errorMessage(error)}`, { cause: error });
    throw await mcp.describeConnectFailure(def, error, stderr.lines(), options.oauth.state);
  } finally {
    clearDeadline();
  }
}

/**
 * When servers connect and disconnect: `lazy` ones on first use, `eager` and `keep-alive` ones at startup; idle
 * servers are closed, dropped `keep-alive` servers revived; a server that failed is left alone for a while.
 * `lazy-keep-alive` (upstream 2.x's mode) connects on first use like `lazy`, and from then on is `keep-alive`: never
 * idle-closed, revived when it drops. Being started only to learn its tools (init.ts bootstrap) is not a use.
 *
 * - Failure backoff: after a failed connect no new attempt for `FAILURE_BACKOFF_MS`; the error says when the next
 *   one may happen. A successful connect clears it. A server with no protocol version in common with us is not tried
 *   again at all until its config is loaded again (or the user reconnects it): no attempt could work.
 * - Revival throttle: a server that keeps dying right after it was revived is revived again after a growing delay
 *   (5 s, 10 s, … up to a minute), so a crash-looping server never becomes a tight loop. A server that stayed up
 *   for a minute starts again from no delay.
 * - Every timer is cleared by `stop()`, and no callback fires after it (Pi's context is stale by then).
 */
import { abortable } from "./util/abort.ts";
import { formatSecondsLeft } from "./util/format-time.ts";
import { toError } from "./util/guards.ts";
import type { ServerConnection } from "./connection/live-connection.ts";
import { ConnectCancelledError, IncompatibleServerError, type McpServerManager } from "./server-manager.ts";
import type { LifecycleMode, McpSettings, ServerDefinition } from "./types.ts";
import { debugLog, ignored } from "./util/debug-log.ts";

export const DEFAULT_IDLE_TIMEOUT_MINUTES = 10;
export const DEFAULT_HEALTH_CHECK_INTERVAL_MS = 30_000;
export const FAILURE_BACKOFF_MS = 60_000;
const FIRST_REVIVAL_DELAY_MS = 5_000;
const MAX_REVIVAL_DELAY_MS = 60_000;
/** A revived server that stays up this long is considered healthy again. */
const STABLE_AFTER_MS = 60_000;

export interface LifecycleCallbacks {
  /** After every successful connect the lifecycle made (startup, lazy, revival, reconnect): refresh metadata. */
  onReconnect?: (name: string) => void;
  onIdleShutdown?: (name: string) => void;
  /** A connect failed; the server is in backoff now. */
  onConnectFailed?: (name: string, error: Error) => void;
}

/** A connect failed (now, or recently, and the backoff is not over): says when the next attempt may happen. */
export class ConnectBackoffError extends Error {
  readonly serverName: string;
  readonly retryInMs: number;
  constructor(serverName: string, retryInMs: number, cause: Error, failedAgoMs?: number) {
    const timing =
      failedAgoMs === undefined
        ? `no new attempt for ${formatSecondsLeft(retryInMs)}`
        : `failed ${formatSecondsLeft(failedAgoMs)} ago; next attempt in ${formatSecondsLeft(retryInMs)}`;
    super(`${cause.message} (${timing})`, { cause });
    this.name = "ConnectBackoffError";
    this.serverName = serverName;
    this.retryInMs = retryInMs;
  }
}

/** A call stopped waiting for its server to start (it was cancelled): not the server's failure. */
export class ConnectWaitCancelledError extends Error {
  constructor(serverName: string) {
    super(`The call was cancelled while MCP server "${serverName}" was starting (it goes on starting in the background).`);
    this.name = "ConnectWaitCancelledError";
  }
}

interface Failure {
  at: number;
  error: Error;
  /** An incompatible server's definition: no attempt while it is the one configured. */
  hopelessFor?: ServerDefinition;
}

interface Revivals {
  count: number;
  lastAt: number;
}

export class McpLifecycleManager {
  private readonly manager: McpServerManager;
  private readonly callbacks: LifecycleCallbacks;
  private servers = new Map<string, ServerDefinition>();
  private settings: McpSettings = {};
  private readonly failures = new Map<string, Failure>();
  private readonly revivals = new Map<string, Revivals>();
  /** Closed for being idle: they come back on next use, not by revival. */
  private readonly idleClosed = new Set<string>();
  /** `lazy-keep-alive` servers connected for use: kept up like `keep-alive` from then on. */
  private readonly inUse = new Set<string>();
  /**
   * Started only to be listed (tools/shared-listing.ts), with its request count when the listing asked for it: a
   * caller asking for one, or any request made on it since (a call that found it connected, so asked for no connect),
   * makes it a server in use.
   */
  private readonly listingOnly = new Map<string, number>();
  /** Connections already reported through onReconnect (one connect may be awaited by several callers). */
  private readonly announced = new WeakSet<ServerConnection>();
  private healthTimer: ReturnType<typeof setInterval> | undefined;
  private healthCheck: Promise<void> | undefined;
  private stopped = false;

  constructor(manager: McpServerManager, callbacks: LifecycleCallbacks = {}) {
    this.manager = manager;
    this.callbacks = callbacks;
  }

  /** The servers to manage (disabled ones are left out) and the global settings. */
  registerServers(defs: readonly ServerDefinition[], settings: McpSettings = {}): void {
    this.servers = new Map(defs.filter((def) => def.enabled !== false).map((def) => [def.name, def]));
    this.settings = settings;
  }

  /**
   * The live connection, or a new one unless the server is in failure backoff (then a ConnectBackoffError).
   * `signal` (the call's abort, Esc in Pi): once aborted, the wait rejects at once with a ConnectWaitCancelledError;
   * the connect itself goes on (another call may wait for it, and the next call finds the server started), its
   * outcome is recorded as usual, and the server is not put in backoff for the abort.
   */
  ensureConnected(name: string, signal?: AbortSignal): Promise<ServerConnection> {
    // Someone wants it: a listing that started it must leave it running (what the call does there would be lost).
    this.listingOnly.delete(name);
    return this.connected(name, signal);
  }

  /** For a listing: the connection, the listing's own (ended by closeAfterListing) unless a caller started it. */
  async connectForListing(name: string): Promise<ServerConnection> {
    const { status } = this.manager.getState(name);
    if (status !== "connected" && status !== "connecting") this.listingOnly.set(name, this.manager.requestsMade(name));
    try {
      return await this.connected(name);
    } catch (error) {
      this.listingOnly.delete(name);
      throw error;
    }
  }

  private async connected(name: string, signal?: AbortSignal): Promise<ServerConnection> {
    const def = this.requireServer(name);
    const live = this.manager.getConnection(name);
    if (live) return live;
    const failure = this.failures.get(name);
    if (failure?.hopelessFor === def) throw failure.error;
    const remaining = this.backoffRemainingMs(name);
    if (failure && remaining > 0) throw new ConnectBackoffError(name, remaining, failure.error, Date.now() - failure.at);
    if (!signal) return this.connect(def);
    if (signal.aborted) throw new ConnectWaitCancelledError(name);
    const connecting = this.connect(def);
    connecting.catch(ignored(`${name}: a connect no caller waits for any more`)); // settled (recorded, reported) either way
    return abortable(connecting, signal).catch((error: unknown) => {
      throw signal.aborted ? new ConnectWaitCancelledError(name) : error;
    });
  }

  /** Connects the `eager` and `keep-alive` servers, at most 10 at a time. Never rejects. */
  async connectStartupServers(): Promise<Map<string, ServerConnection | Error>> {
    const defs = [...this.servers.values()].filter((def) => !connectsOnFirstUse(def));
    const results = await this.manager.connectAll(defs);
    const settled = new Map<string, ServerConnection | Error>();
    for (const [name, result] of results) {
      try {
        settled.set(name, this.settle(name, result));
      } catch (error) {
        settled.set(name, error as Error);
      }
    }
    return settled;
  }

  /** Closes and connects again, clearing any backoff (for an explicit reconnect by the user). */
  async reconnect(name: string): Promise<ServerConnection> {
    const def = this.requireServer(name);
    this.failures.delete(name);
    this.revivals.delete(name);
    await this.manager.close(name);
    // Stopped while the old connection was ending: the manager refuses the connect, with a message that says why.
    return this.connect(def);
  }

  startHealthChecks(intervalMs = DEFAULT_HEALTH_CHECK_INTERVAL_MS): void {
    if (this.stopped) return;
    clearInterval(this.healthTimer);
    this.healthTimer = setInterval(() => void this.runHealthCheck().catch(ignored("health check")), intervalMs);
    this.healthTimer.unref();
  }

  /** One pass: revive dropped `keep-alive` servers, close idle ones. A pass still running is joined, not doubled. */
  runHealthCheck(): Promise<void> {
    this.healthCheck ??= this.healthCheckPass().finally(() => {
      this.healthCheck = undefined;
    });
    return this.healthCheck;
  }

  /**
   * Ends a server that was started only to learn its tools (a `lazy-keep-alive` one is then not in use: not revived),
   * unless a caller asked for it or used it meanwhile: then it is a server in use, ended by its idle timeout.
   */
  async closeAfterListing(name: string): Promise<void> {
    const requestsBefore = this.listingOnly.get(name);
    this.listingOnly.delete(name);
    if (requestsBefore !== this.manager.requestsMade(name)) return;
    this.inUse.delete(name);
    await this.manager.close(name);
  }

  /** For Pi's `turn_end`: bring back `eager` and kept-alive servers that dropped (not those closed for idling). */
  async reviveDropped(): Promise<void> {
    const revived = [...this.servers.values()].filter((def) => modeOf(def) === "eager" || this.keptAlive(def));
    await Promise.all(revived.map((def) => this.revive(def)));
  }

  /** 0 = never idle-closed: `keep-alive`, `lazy-keep-alive`, `eager` without its own `idleTimeout`, or `idleTimeout: 0`. */
  getIdleTimeoutMs(name: string): number {
    const def = this.servers.get(name);
    if (!def || modeOf(def) === "keep-alive" || modeOf(def) === "lazy-keep-alive") return 0;
    const minutes = def.idleTimeout ?? (modeOf(def) === "eager" ? 0 : (this.settings.idleTimeout ?? DEFAULT_IDLE_TIMEOUT_MINUTES));
    return Math.max(0, minutes) * 60_000;
  }

  /** How long until a failed server may be tried again (0 = now; infinite for one no attempt can help, see `Failure`). */
  backoffRemainingMs(name: string): number {
    const failure = this.failures.get(name);
    if (failure?.hopelessFor && failure.hopelessFor === this.servers.get(name)) return Number.POSITIVE_INFINITY;
    return failure ? Math.max(0, failure.at + FAILURE_BACKOFF_MS - Date.now()) : 0;
  }

  /** Clears every timer, silences the callbacks, and ends every server (also those still connecting). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.healthTimer);
    this.healthTimer = undefined;
    await this.manager.shutdown();
  }

  private requireServer(name: string): ServerDefinition {
    if (this.stopped) throw new Error(`MCP server "${name}" is unavailable: the adapter is shutting down`);
    const def = this.servers.get(name);
    if (!def) throw new Error(`MCP server "${name}" is not configured (or is disabled)`);
    return def;
  }

  private async connect(def: ServerDefinition): Promise<ServerConnection> {
    const result = await this.manager.connect(def).catch((error: unknown) => toError(error));
    return this.settle(def.name, result);
  }

  /** Bookkeeping after a connect: announce a new connection once, or start the backoff for a failure. */
  private settle(name: string, result: ServerConnection | Error): ServerConnection {
    if (!(result instanceof Error)) {
      this.failures.delete(name);
      this.idleClosed.delete(name);
      if (modeOf(this.servers.get(name)) === "lazy-keep-alive") this.inUse.add(name);
      if (!this.announced.has(result)) {
        this.announced.add(result);
        this.notify(() => this.callbacks.onReconnect?.(name));
      }
      return result;
    }
    // Cancelled by close()/stop(), maybe with a new attempt under way by now (a reconnect): the server did nothing wrong.
    if (result instanceof ConnectCancelledError || this.manager.getState(name).status === "closed") throw result;
    // Several callers may await one attempt: count (and report) its failure once.
    if (this.failures.get(name)?.error !== result) {
      debugLog(`${name}: connect failed`, result);
      const hopelessFor = result instanceof IncompatibleServerError ? this.servers.get(name) : undefined;
      this.failures.set(name, { at: Date.now(), error: result, hopelessFor });
      this.notify(() => this.callbacks.onConnectFailed?.(name, result));
    }
    if (result instanceof IncompatibleServerError) throw result;
    throw new ConnectBackoffError(name, this.backoffRemainingMs(name), result);
  }

  private async healthCheckPass(): Promise<void> {
    await Promise.all([...this.servers.values()].map((def) => (this.keptAlive(def) ? this.revive(def) : this.closeIfIdle(def))));
  }

  /** `keep-alive`, or `lazy-keep-alive` once in use: revived when it drops. */
  private keptAlive(def: ServerDefinition): boolean {
    return modeOf(def) === "keep-alive" || (modeOf(def) === "lazy-keep-alive" && this.inUse.has(def.name));
  }

  private async revive(def: ServerDefinition): Promise<void> {
    const { name } = def;
    if (this.stopped || this.idleClosed.has(name)) return;
    if (this.manager.getConnection(name)) return this.forgetRevivalsIfStable(name);
    // needs-auth does not heal by itself: only a config change (or an explicit call) is worth another attempt.
    const { status } = this.manager.getState(name);
    if (status === "connecting" || status === "needs-auth" || this.backoffRemainingMs(name) > 0) return;
    const revivals = this.revivals.get(name) ?? { count: 0, lastAt: 0 };
    if (Date.now() < revivals.lastAt + revivalDelayMs(revivals.count)) return;
    this.revivals.set(name, { count: revivals.count + 1, lastAt: Date.now() });
    await this.connect(def).catch(ignored(`${name}: reviving (recorded and reported by settle)`));
  }

  private forgetRevivalsIfStable(name: string): void {
    const revivals = this.revivals.get(name);
    if (revivals && Date.now() - revivals.lastAt >= STABLE_AFTER_MS) this.revivals.delete(name);
  }

  private async closeIfIdle(def: ServerDefinition): Promise<void> {
    const timeoutMs = this.getIdleTimeoutMs(def.name);
    if (timeoutMs === 0 || !this.manager.isIdle(def.name, timeoutMs)) return;
    // isIdle and close's removal of the connection happen in the same tick: no call can slip in between.
    const closing = this.manager.close(def.name);
    this.idleClosed.add(def.name);
    await closing;
    this.notify(() => this.callbacks.onIdleShutdown?.(def.name));
  }

  private notify(callback: () => void): void {
    if (this.stopped) return;
    try {
      callback();
    } catch (error) {
      debugLog("a connection listener failed (connection handling goes on)", error);
    }
  }
}

function modeOf(def: ServerDefinition | undefined): LifecycleMode {
  return def?.lifecycle ?? "lazy";
}

/** Not started with the session: `lazy` and `lazy-keep-alive`. Their tools come from the cache, or a bootstrap. */
export function connectsOnFirstUse(def: ServerDefinition): boolean {
  return modeOf(def) === "lazy" || modeOf(def) === "lazy-keep-alive";
}

/** 0 before the first revival, then 5 s, 10 s, 20 s, … capped at a minute. */
function revivalDelayMs(revivalsSoFar: number): number {
  return revivalsSoFar === 0 ? 0 : Math.min(MAX_REVIVAL_DELAY_MS, FIRST_REVIVAL_DELAY_MS * 2 ** (revivalsSoFar - 1));
}

/**
 * Which protocol era a server speaks, decided in one place. Revisions up to 2025-11-25 open a session with
 * `initialize` (the "legacy" era); 2026-07-28 is stateless, and a `server/discover` probe tells what a server supports
 * (the "modern" era). The SDK negotiates (`versionNegotiation: auto`); this module chooses what it is told before a
 * connect, and what follows when a connect fails for a reason that is about the era rather than the server:
 *
 * - A verdict from an earlier connect (kept with the server's metadata) skips the probe. A modern one always: when it
 *   is stale the first request fails, and the manager connects once more without it. A legacy one for
 *   LEGACY_VERDICT_MAX_AGE_MS only: a stale legacy verdict never fails (an upgraded server still answers
 *   `initialize`), so without an end it would keep an upgraded server in the old era for good.
 * - On stdio the probe goes to the server's own process. A server that exits on a request it does not know before
 *   `initialize` (servers built on some SDKs do) is a legacy server: it is started again and initialized, as the
 *   spec says ("restarting the process if the probe left it in an undefined state"). One that never answers the probe
 *   is taken for legacy after STDIO_PROBE_TIMEOUT_MS (the SDK falls back to `initialize` on the same process).
 * - A server that refuses `initialize` and names the versions it supports: with a 2026 one of ours among them (a
 *   modern-only server that answered the probe too late, a slow start), the connect is made again pinned to it; with
 *   none, no attempt can work, and IncompatibleServerError says so in one line (no other transport is tried, and the
 *   server is not retried until its config changes).
 */
import {
  type ClientOptions,
  type ConnectOptions,
  type Client,
  ProtocolError,
  ProtocolErrorCode,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/client";
import { IncompatibleServerError, type ProtocolVerdict } from "./session.ts";
import { isJsonObject, parseJsonOrUndefined } from "../util/guards.ts";

/** A legacy verdict is trusted this long; then the server is probed again (once, on its next connect). */
export const LEGACY_VERDICT_MAX_AGE_MS = 7 * 24 * 60 * 60 * 1000;
/**
 * A stdio server that has not answered `server/discover` by then is taken for legacy. Most servers answer (or exit)
 * within a second; a slower one is spoken to in the 2025 era until its verdict expires, which works.
 */
export const STDIO_PROBE_TIMEOUT_MS = 5_000;
/** The revision the 2026 era starts at: anything dated earlier is the legacy era. The SDK exports only its legacy list. */
const FIRST_MODERN_VERSION = "2026-07-28";
/** Every version the adapter speaks, newest first (what a refused server is told we support). */
export const OUR_PROTOCOL_VERSIONS: readonly string[] = [FIRST_MODERN_VERSION, ...SUPPORTED_PROTOCOL_VERSIONS];

/** How one connect attempt is made: the client's negotiation, and a verdict it starts from. */
export interface ConnectPlan {
  negotiation: NonNullable<ClientOptions["versionNegotiation"]>;
  prior?: ConnectOptions["prior"];
}

/**
 * Connects through `attempt` (one fresh client, transport and process per call), starting from `prior`, and falls
 * back as the module comment says. Rejects with the last attempt's error.
 */
export async function connectInEra<T>(
  serverName: string,
  stdio: boolean,
  prior: ProtocolVerdict | undefined,
  attempt: (plan: ConnectPlan) => Promise<T>,
): Promise<T> {
  let plan = firstPlan(stdio, prior);
  const tried = new Set<string>();
  for (;;) {
    tried.add(JSON.stringify(plan));
    try {
      return await attempt(plan);
    } catch (error) {
      const next = planAfter(serverName, stdio, plan, error);
      if (!next || tried.has(JSON.stringify(next))) throw error;
      plan = next;
    }
  }
}

/** What the client negotiated, to be kept for the next connect. */
export function verdictOf(client: Client, now = Date.now()): ProtocolVerdict {
  const version = client.getNegotiatedProtocolVersion() ?? "";
  const discover = client.getDiscoverResult();
  return client.getProtocolEra() === "modern" && discover
    ? { era: "modern", version, discover, checkedAt: now }
    : { era: "legacy", version, checkedAt: now };
}

/** Whether a verdict says the server spoke the 2026 era. */
export function isModernVersion(version: string): boolean {
  return version >= FIRST_MODERN_VERSION;
}

function firstPlan(stdio: boolean, prior: ProtocolVerdict | undefined, now = Date.now()): ConnectPlan {
  const negotiation = autoNegotiation(stdio);
  if (prior?.era === "modern") return { negotiation, prior: { kind: "modern", discover: prior.discover } };
  const age = prior ? now - prior.checkedAt : Number.POSITIVE_INFINITY;
  if (prior?.era === "legacy" && age >= 0 && age <= LEGACY_VERDICT_MAX_AGE_MS) return { negotiation, prior: { kind: "legacy" } };
  return { negotiation };
}

function autoNegotiation(stdio: boolean): ConnectPlan["negotiation"] {
  return stdio ? { mode: "auto", probe: { timeoutMs: STDIO_PROBE_TIMEOUT_MS } } : { mode: "auto" };
}

/** The plan after a failed attempt, or none when the failure is the server's (or ours), not the era's. */
function planAfter(serverName: string, stdio: boolean, plan: ConnectPlan, error: unknown): ConnectPlan | undefined {
  const supported = supportedVersions(error);
  if (supported) {
    const common = OUR_PROTOCOL_VERSIONS.filter((version) => supported.includes(version));
    if (common.length === 0) throw new IncompatibleServerError(serverName, supported, OUR_PROTOCOL_VERSIONS);
    // A legacy version in common was offered already (the SDK's `initialize` takes the server's counter-offer).
    return isModernVersion(common[0]!) ? { negotiation: { mode: { pin: common[0]! } } } : undefined;
  }
  // The probe left a stdio server unusable (it exited, or answered nonsense): a legacy server, started again.
  if (stdio && !plan.prior && error instanceof SdkError && error.code === SdkErrorCode.EraNegotiationFailed) {
    return { negotiation: plan.negotiation, prior: { kind: "legacy" } };
  }
  return undefined;
}

/** The versions a server named when it refused ours (`-32022 Unsupported protocol version`, on stdio or over HTTP). */
function supportedVersions(error: unknown): string[] | undefined {
  const data =
    error instanceof ProtocolError && error.code === ProtocolErrorCode.UnsupportedProtocolVersion ? error.data : httpErrorData(error);
  const supported = isJsonObject(data) ? data.supported : undefined;
  return Array.isArray(supported) && supported.every((version) => typeof version === "string") ? supported : undefined;
}

/** An HTTP 400 whose JSON-RPC error body is `-32022` (the SDK keeps the body's text with the status). */
function httpErrorData(error: unknown): unknown {
  if (!(error instanceof SdkHttpError)) return undefined;
  const body = error.data.text;
  const parsed = typeof body === "string" ? parseJsonOrUndefined(body) : body;
  const rpcError = isJsonObject(parsed) && isJsonObject(parsed.error) ? parsed.error : parsed;
  return isJsonObject(rpcError) && rpcError.code === ProtocolErrorCode.UnsupportedProtocolVersion ? rpcError.data : undefined;
}

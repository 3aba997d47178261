/**
 * The limits one server's calls run under, each from the server's own field or else `settings` (upstream's fields,
 * with upstream's meaning: `<= 0` is the default): how long a request may go without an answer or progress
 * (`requestTimeoutMs`), how long a call may take at all (`maxTotalTimeoutMs`), and how much of a result the model is
 * shown (`outputGuard`). Pi 1.x's built-in `timeout` (seconds per request, progress restarting it) is the server's
 * request limit when it has no `requestTimeoutMs` of its own: our field, in milliseconds, is the more specific, and a
 * file written for both hosts keeps what it says here. Also what the model is told when a time limit ends a call:
 * which limit, and how the user can raise it.
 */
import { MAX_TEXT_BYTES, MAX_TEXT_LINES } from "./content.ts";
import { formatDuration } from "../util/format-time.ts";
import { DEFAULT_MAX_TOTAL_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS } from "../server-manager.ts";
import type { McpSettings, ServerEntry } from "../types.ts";

/** The field that set the request limit: what `/mcp status` and a timeout message name. */
export type RequestLimitSource = "requestTimeoutMs" | "timeout" | "settings.requestTimeoutMs" | "default";

export interface CallLimits {
  requestTimeoutMs: number;
  requestTimeoutSource: RequestLimitSource;
  maxTotalTimeoutMs: number;
  /** Infinity: `outputGuard: false`, the model is shown everything. */
  maxTextBytes: number;
  maxTextLines: number;
}

export function callLimits(server: ServerEntry | undefined, settings: McpSettings): CallLimits {
  const guard = server?.outputGuard ?? settings.outputGuard ?? true;
  const bounds = guard === true ? {} : guard === false ? { maxBytes: Infinity, maxLines: Infinity } : guard;
  return {
    ...requestLimit(server, settings),
    maxTotalTimeoutMs: positive(server?.maxTotalTimeoutMs) ?? positive(settings.maxTotalTimeoutMs) ?? DEFAULT_MAX_TOTAL_TIMEOUT_MS,
    maxTextBytes: bounds.maxBytes ?? MAX_TEXT_BYTES,
    maxTextLines: bounds.maxLines ?? MAX_TEXT_LINES,
  };
}

function requestLimit(
  server: ServerEntry | undefined,
  settings: McpSettings,
): Pick<CallLimits, "requestTimeoutMs" | "requestTimeoutSource"> {
  const own = positive(server?.requestTimeoutMs);
  if (own !== undefined) return { requestTimeoutMs: own, requestTimeoutSource: "requestTimeoutMs" };
  const seconds = positive(server?.timeout);
  if (seconds !== undefined) return { requestTimeoutMs: seconds * 1000, requestTimeoutSource: "timeout" };
  const setting = positive(settings.requestTimeoutMs);
  if (setting !== undefined) return { requestTimeoutMs: setting, requestTimeoutSource: "settings.requestTimeoutMs" };
  return { requestTimeoutMs: DEFAULT_REQUEST_TIMEOUT_MS, requestTimeoutSource: "default" };
}

/** `/mcp status`'s line on the request limit of a server that sets one (`timeout`, `requestTimeoutMs`). */
export function requestLimitLine(server: ServerEntry, settings: McpSettings): string | undefined {
  if (server.timeout === undefined && server.requestTimeoutMs === undefined) return undefined;
  const { requestTimeoutMs, requestTimeoutSource } = requestLimit(server, settings);
  const unused =
    requestTimeoutSource === "requestTimeoutMs" && server.timeout !== undefined ? ` ("timeout" ${server.timeout} s is not used)` : "";
  return `time limit: ${formatDuration(requestTimeoutMs)} per request without an answer or progress (${requestTimeoutSource})${unused}`;
}

function positive(value: number | undefined): number | undefined {
  return value !== undefined && value > 0 ? value : undefined;
}

/**
 * The SDK's timeout error says which limit ended the call: `data.maxTotalTimeout` for the overall cap, `data.timeout`
 * for a request without an answer or progress. The SDK has cancelled the request at the server by then.
 */
export function timeoutMessage(label: string, serverName: string, limits: CallLimits, data: unknown): string {
  const total = typeof data === "object" && data !== null && "maxTotalTimeout" in data;
  const [field, ms, what] = total
    ? (["maxTotalTimeoutMs", limits.maxTotalTimeoutMs, "in all"] as const)
    : ([
        limits.requestTimeoutSource === "timeout" ? "timeout" : "requestTimeoutMs",
        limits.requestTimeoutMs,
        "without an answer or progress",
      ] as const);
  const where =
    field === "timeout"
      ? `(mcpServers.${serverName}.timeout, in seconds)`
      : `(mcpServers.${serverName}.${field} or settings.${field}, in milliseconds)`;
  return (
    `${label} timed out: it ran ${formatDuration(ms)} ${what} (the ${field} limit) and was cancelled at the server. ` +
    `If it needs longer, the user can raise "${field}" for server "${serverName}" in the MCP config ` +
    `${where}; otherwise ask the tool for less.`
  );
}

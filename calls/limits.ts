/**
 * The limits one server's calls run under, each from the server's own field or else `settings` (upstream's fields,
 * with upstream's meaning: `<= 0` is the default): how long a request may go without an answer or progress
 * (`requestTimeoutMs`), how long a call may take at all (`maxTotalTimeoutMs`), and how much of a result the model is
 * shown (`outputGuard`). Also what the model is told when a time limit ends a call: which limit, and how the user can
 * raise it.
 */
import { MAX_TEXT_BYTES, MAX_TEXT_LINES } from "./content.ts";
import { formatDuration } from "../util/format-time.ts";
import { DEFAULT_MAX_TOTAL_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS } from "../server-manager.ts";
import type { McpSettings, ServerEntry } from "../types.ts";

export interface CallLimits {
  requestTimeoutMs: number;
  maxTotalTimeoutMs: number;
  /** Infinity: `outputGuard: false`, the model is shown everything. */
  maxTextBytes: number;
  maxTextLines: number;
}

export function callLimits(server: ServerEntry | undefined, settings: McpSettings): CallLimits {
  const guard = server?.outputGuard ?? settings.outputGuard ?? true;
  const bounds = guard === true ? {} : guard === false ? { maxBytes: Infinity, maxLines: Infinity } : guard;
  return {
    requestTimeoutMs: positive(server?.requestTimeoutMs) ?? positive(settings.requestTimeoutMs) ?? DEFAULT_REQUEST_TIMEOUT_MS,
    maxTotalTimeoutMs: positive(server?.maxTotalTimeoutMs) ?? positive(settings.maxTotalTimeoutMs) ?? DEFAULT_MAX_TOTAL_TIMEOUT_MS,
    maxTextBytes: bounds.maxBytes ?? MAX_TEXT_BYTES,
    maxTextLines: bounds.maxLines ?? MAX_TEXT_LINES,
  };
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
    : (["requestTimeoutMs", limits.requestTimeoutMs, "without an answer or progress"] as const);
  return (
    `${label} timed out: it ran ${formatDuration(ms)} ${what} (the ${field} limit) and was cancelled at the server. ` +
    `If it needs longer, the user can raise "${field}" for server "${serverName}" in the MCP config ` +
    `(mcpServers.${serverName}.${field} or settings.${field}, in milliseconds); otherwise ask the tool for less.`
  );
}

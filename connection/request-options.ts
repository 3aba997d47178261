/**
 * How long a request to a server may take, and what else goes with it: one timeout restarted by each progress
 * notification (long tool runs are normal), one bound on the whole request (a call whose progress never stops still
 * ends), the caller's cancel, and the connect to fall back on.
 */
import type { Progress, RequestOptions } from "@modelcontextprotocol/client";

/** Long tool runs are normal (builds, searches); progress notifications restart the clock. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 10 * 60_000;
/** A call whose progress never stops still ends: progress restarts the request timeout, never this one. */
export const DEFAULT_MAX_TOTAL_TIMEOUT_MS = 60 * 60_000;

export interface CallOptions {
  /** Aborting sends `notifications/cancelled` to the server. */
  signal?: AbortSignal;
  /**
   * Connects the server again when it is not connected as the request goes out: the caller connected it, but it was
   * closed since (an idle close, the end of a listing). Tried once; without it, such a request fails.
   */
  connect?: () => Promise<unknown>;
  onProgress?: (progress: Progress) => void;
  /** Per request, restarted by progress; default: the manager's `requestTimeoutMs`. */
  timeoutMs?: number;
  /** The request's whole time, progress or not; default `DEFAULT_MAX_TOTAL_TIMEOUT_MS`. */
  maxTotalTimeoutMs?: number;
}

/** The SDK's options for one request; `defaultTimeoutMs`: the manager's own (`requestTimeoutMs`). */
export function requestOptions(defaultTimeoutMs: number, options: CallOptions, signal: AbortSignal | undefined): RequestOptions {
  return {
    signal,
    timeout: options.timeoutMs ?? defaultTimeoutMs,
    resetTimeoutOnProgress: true,
    maxTotalTimeout: options.maxTotalTimeoutMs ?? DEFAULT_MAX_TOTAL_TIMEOUT_MS,
    // Always ask for progress: it is what keeps a long call from timing out.
    onprogress: options.onProgress ?? ignoreProgress,
  };
}

function ignoreProgress(): void {}

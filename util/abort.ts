/**
 * Waiting on abort signals without leaving anything behind. Pi hands every tool call of a run the same signal, and
 * the SDK adds an abort listener to a request's signal that it never removes: listeners added per call piled up until
 * the run ended, and from the eleventh Node printed a leak warning. So here a signal gets one listener however many
 * waits share it, removed with the last of them; and deadlines are timers that are cleared and never keep Pi alive.
 */
import { ignored } from "./debug-log.ts";

/** The one listener on a signal, and what waits through it. */
interface AbortWaiters {
  readonly listener: () => void;
  readonly waiting: Set<() => void>;
}

const abortWaiters = new WeakMap<AbortSignal, AbortWaiters>();

/**
 * Calls `onAbort` when the signal aborts (at once if it has); the returned function stops waiting. Every wait on one
 * signal shares a single listener, removed once nothing waits.
 */
export function whenAborted(signal: AbortSignal, onAbort: () => void): () => void {
  if (signal.aborted) {
    onAbort();
    return () => {};
  }
  let waiters = abortWaiters.get(signal);
  if (!waiters) {
    const waiting = new Set<() => void>();
    const listener = () => {
      abortWaiters.delete(signal);
      // A waiter stopped by another one meanwhile is not told (a Set skips what is deleted during the loop).
      for (const waiter of waiting) waiter();
    };
    waiters = { listener, waiting };
    abortWaiters.set(signal, waiters);
    signal.addEventListener("abort", listener, { once: true });
  }
  const { listener, waiting } = waiters;
  waiting.add(onAbort);
  return () => {
    if (!waiting.delete(onAbort) || waiting.size > 0) return;
    abortWaiters.delete(signal);
    signal.removeEventListener("abort", listener);
  };
}

/** `promise`, or the signal's reason as soon as it aborts. */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    // Its outcome no longer matters, but its rejection must not go unhandled (Node would end Pi for it).
    promise.catch(ignored("work whose wait was aborted"));
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const stopWaiting = whenAborted(signal, () => reject(signal.reason));
    promise.then(
      (value) => {
        stopWaiting();
        resolve(value);
      },
      (error: unknown) => {
        stopWaiting();
        reject(error);
      },
    );
  });
}

/**
 * Runs a request with a signal of its own that follows `signal` while the request runs: whatever listeners the
 * request leaves on its signal go with it, and `signal` carries one listener for all the requests that follow it.
 */
export async function withOwnSignal<T>(signal: AbortSignal, request: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const own = new AbortController();
  const stopFollowing = whenAborted(signal, () => own.abort(signal.reason));
  try {
    return await request(own.signal);
  } finally {
    stopFollowing();
  }
}

/**
 * Aborts `controller` with `reason()` once `ms` have passed; the returned function clears the deadline. The timer does
 * not keep Pi alive: what the deadline bounds (a child process, a socket) does while it matters.
 */
export function abortAfter(controller: AbortController, ms: number, reason: () => unknown): () => void {
  const timer = setTimeout(() => controller.abort(reason()), ms);
  timer.unref();
  return () => clearTimeout(timer);
}

/**
 * `promise`'s value, or undefined once `ms` have passed or `signal` aborted, whichever comes first (a rejection of
 * `promise` still rejects). The timer and the wait on the signal end with it.
 */
export async function waitAtMost<T>(promise: Promise<T>, ms: number, signal?: AbortSignal): Promise<T | undefined> {
  let stop = () => {};
  const givenUp = new Promise<undefined>((resolve) => {
    const timer = setTimeout(() => resolve(undefined), ms);
    const stopWaiting = signal ? whenAborted(signal, () => resolve(undefined)) : () => {};
    stop = () => {
      clearTimeout(timer);
      stopWaiting();
    };
  });
  try {
    return await Promise.race([promise, givenUp]);
  } finally {
    stop();
  }
}

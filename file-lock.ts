/**
 * The cross-process lock on a shared file in the agent directory (the metadata cache, the call statistics): several
 * Pi processes may read-merge-write the same file at once, and without a lock their writes undo each other's.
 * proper-lockfile keeps a lock directory next to the file and refreshes it; a lock left by a crashed process goes
 * stale and is taken over.
 */
import { createRequire } from "node:module";
import { errorMessage, isJsonObject } from "./guards.ts";

/** A lock not refreshed for this long belongs to a dead process and is taken over. */
export const LOCK_STALE_MS = 5_000;
/** Longer than LOCK_STALE_MS, so a lock left by a crashed process is recovered rather than waited out. */
export const DEFAULT_LOCK_TIMEOUT_MS = 8_000;

/** Loaded by the first lock, not with the extension (it costs ~18 ms, and most starts write nothing). */
const requireModule = createRequire(import.meta.url);
let lockfile: typeof import("proper-lockfile") | undefined;

/** Returns the release function, or why the lock could not be had. */
export async function acquireFileLock(
  path: string,
  timeoutMs: number,
  onCompromised: (error: Error) => void,
): Promise<(() => Promise<void>) | string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      // realpath: false lets the lock exist before the file does.
      lockfile ??= requireModule("proper-lockfile") as typeof import("proper-lockfile");
      return await lockfile.lock(path, { realpath: false, stale: LOCK_STALE_MS, retries: 0, onCompromised });
    } catch (error) {
      if (errorCode(error) !== "ELOCKED") return `cannot lock ${path}: ${errorMessage(error)}; write skipped`;
      if (Date.now() >= deadline) return `${path} stayed locked by another process for ${timeoutMs} ms; write skipped`;
      // Random back-off so that waiting processes do not retry in lockstep.
      await new Promise((resolve) => setTimeout(resolve, 10 + Math.random() * 40));
    }
  }
}

export function errorCode(error: unknown): string | undefined {
  return isJsonObject(error) && typeof error.code === "string" ? error.code : undefined;
}

/**
 * The cross-process lock on a shared file in the agent directory (the metadata cache, the call statistics): several
 * Pi processes may read-merge-write the same file at once, and without a lock their writes undo each other's.
 * proper-lockfile keeps a lock directory next to the file and refreshes it; a lock left by a crashed process goes
 * stale and is taken over.
 */
import { statSync } from "node:fs";
import { mkdir, readFile } from "node:fs/promises";
import { dirname } from "node:path";
import { writeFileAtomic } from "./atomic-file.ts";
import { errorCode, errorMessage } from "./guards.ts";
import { lazyRequire } from "./lazy-load.ts";
import { ignored } from "./debug-log.ts";

/** A lock not refreshed for this long belongs to a dead process and is taken over. */
export const LOCK_STALE_MS = 5_000;
/** Longer than LOCK_STALE_MS, so a lock left by a crashed process is recovered rather than waited out. */
export const DEFAULT_LOCK_TIMEOUT_MS = 8_000;

/** Loaded by the first lock, not with the extension (it costs ~18 ms, and most starts write nothing). */
const lockfile = lazyRequire<typeof import("proper-lockfile")>("proper-lockfile");

/**
 * Returns the release function, or why the lock could not be had. `onStaleTakeover`: the lock was (most likely) taken
 * over from a holder that stopped refreshing it: that holder may be stalled rather than dead, and still write.
 */
export async function acquireFileLock(
  path: string,
  timeoutMs: number,
  onCompromised: (error: Error) => void,
  onStaleTakeover?: () => void,
): Promise<(() => Promise<void>) | string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const stale = lockIsStale(path);
    try {
      // realpath: false lets the lock exist before the file does.
      const release = await lockfile().lock(path, { realpath: false, stale: LOCK_STALE_MS, retries: 0, onCompromised });
      if (stale) onStaleTakeover?.();
      return release;
    } catch (error) {
      // ENOENT: the lock went away between proper-lockfile's look and its stat of it (released meanwhile).
      if (errorCode(error) !== "ELOCKED" && errorCode(error) !== "ENOENT")
        return `cannot lock ${path}: ${errorMessage(error)}; write skipped`;
      if (Date.now() >= deadline) return `${path} stayed locked by another process for ${timeoutMs} ms; write skipped`;
      // Random back-off so that waiting processes do not retry in lockstep.
      await new Promise((resolve) => setTimeout(resolve, 10 + Math.random() * 40));
    }
  }
}

function lockIsStale(path: string): boolean {
  try {
    return Date.now() - statSync(`${path}.lock`).mtimeMs > LOCK_STALE_MS;
  } catch {
    return false;
  }
}

/**
 * Read-merge-write of a shared file under its lock: `merge` gets the current content (undefined when the file is
 * missing or unreadable) and returns the new one, which replaces the file atomically (undefined: the file is left as
 * it is). Never throws: a write that cannot be done safely (lock not had in time, lost meanwhile, disk error) is
 * skipped and the reason returned.
 */
export async function updateFileLocked(
  path: string,
  merge: (current: string | undefined) => string | undefined,
  lockTimeoutMs = DEFAULT_LOCK_TIMEOUT_MS,
  onStaleTakeover?: () => void,
): Promise<string | undefined> {
  try {
    await mkdir(dirname(path), { recursive: true });
  } catch (error) {
    return `cannot create ${dirname(path)}: ${errorMessage(error)}`;
  }
  let compromised: Error | undefined;
  const release = await acquireFileLock(
    path,
    lockTimeoutMs,
    (error) => {
      compromised = error;
    },
    onStaleTakeover,
  );
  if (typeof release === "string") return release;
  try {
    const current = await readFile(path, "utf8").catch(() => undefined);
    const content = merge(current);
    if (content === undefined) return undefined;
    await writeFileAtomic(path, content, {
      beforeRename: () => {
        // Another process took the lock over (ours looked stale): renaming now could undo its write.
        if (compromised) throw new LockLostError(`lost the lock on ${path} (${compromised.message}); write skipped`);
      },
    });
    return undefined;
  } catch (error) {
    return error instanceof LockLostError ? error.message : `cannot write ${path}: ${errorMessage(error)}`;
  } finally {
    await release().catch(ignored(`releasing the lock of ${path}`));
  }
}

class LockLostError extends Error {}

/**
 * A lease on work that several processes could each do but one is enough for (listing a server): a small file naming
 * the holder's pid and when the lease ends. It is held while the file is there, that process lives and the time has
 * not passed; otherwise it is stale and the next process takes it over. The file appears whole (a complete temp file
 * linked into place, which fails when one is there already), so nobody reads half a lease.
 */
import { randomBytes } from "node:crypto";
import { link, mkdir, readFile, rm, rmdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { errorCode } from "./guards.ts";
import { isJsonObject } from "./guards.ts";

export interface LeaseHolder {
  pid: number;
  /** Epoch ms. */
  until: number;
}

export type LeaseAttempt = { held: true; release: () => Promise<void> } | { held: false; holder: LeaseHolder };

/**
 * Takes the lease at `path` for `ttlMs`, or says who holds it. Never throws: when the lease cannot be kept at all
 * (unwritable directory), it is reported held by us, so the work is done rather than waited for.
 */
export async function tryLease(path: string, ttlMs: number): Promise<LeaseAttempt> {
  const mine: LeaseHolder = { pid: process.pid, until: Date.now() + ttlMs };
  const temp = `${path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  const unkept: LeaseAttempt = { held: true, release: async () => {} };
  try {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(temp, JSON.stringify(mine), { mode: 0o600 });
    // Twice: a stale lease is removed once, and a process that took it over meanwhile holds it.
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await link(temp, path);
        return { held: true, release: () => releaseLease(path, mine) };
      } catch (error) {
        if (errorCode(error) !== "EEXIST") return unkept;
      }
      const holder = await readLease(path);
      if (holder && isLive(holder)) return { held: false, holder };
      await rm(path, { force: true });
    }
    const holder = await readLease(path);
    return holder ? { held: false, holder } : unkept;
  } catch {
    return unkept;
  } finally {
    await rm(temp, { force: true }).catch(() => undefined);
  }
}

/** Whether someone holds the lease at `path` now (a stale one counts as free). */
export async function isLeaseHeld(path: string): Promise<boolean> {
  const holder = await readLease(path);
  return !!holder && isLive(holder);
}

/**
 * Only our own lease goes: once it went stale, another process's may be in its place. The directory goes when empty
 * (a process taking a lease in it meanwhile finds it gone, and does the work without a lease).
 */
async function releaseLease(path: string, mine: LeaseHolder): Promise<void> {
  const holder = await readLease(path);
  if (holder?.pid !== mine.pid || holder.until !== mine.until) return;
  await rm(path, { force: true }).catch(() => undefined);
  await rmdir(dirname(path)).catch(() => undefined);
}

async function readLease(path: string): Promise<LeaseHolder | undefined> {
  try {
    const data: unknown = JSON.parse(await readFile(path, "utf8"));
    if (isJsonObject(data) && Number.isInteger(data.pid) && Number.isFinite(data.until))
      return { pid: data.pid as number, until: data.until as number };
  } catch {
    // Missing, or not a lease: free.
  }
  return undefined;
}

function isLive(holder: LeaseHolder): boolean {
  if (holder.until <= Date.now()) return false;
  try {
    process.kill(holder.pid, 0);
    return true;
  } catch (error) {
    return errorCode(error) === "EPERM"; // it exists, as another user's process
  }
}

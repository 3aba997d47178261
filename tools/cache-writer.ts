/**
 * One cache writer per agent directory and process. Every server's listing used to write the cache on its own, each
 * write taking the cross-process lock: a session's own writes contended with each other and were skipped, so most of
 * what one session learned was lost. Here entries wait in one batch while a write is in flight (the last listing per
 * server wins), and each batch first goes to the cache's journal (metadata-cache.ts: no lock, so other processes see
 * it at once and a session ending while others hold the lock loses nothing), then is merged into the cache file under
 * the lock, one merge at a time (so the lock is only ever contended by other processes). A merge that cannot be done
 * (the lock held long by others, lost to a stall) loses nothing: the batch stays in the journal for the next writer,
 * of this process or another, so it is not reported (a cache file that cannot be read is, by the next start). A batch
 * the journal cannot take is tried again, then reported once until a write succeeds again: a broken agent dir should
 * not warn again at every listing of the session.
 */

import type { CachedServerEntry, WriteResult } from "../metadata-cache.ts";
import { hasJournalEntries, journalServerEntries, writeServerEntries } from "../metadata-cache.ts";

/** A batch the journal could not take (disk error) is tried again this many times. */
const MAX_ATTEMPTS = 3;

export type CacheWriteReporter = (result: WriteResult) => void;

export class MetadataCacheWriter {
  private readonly pending = new Map<string, CachedServerEntry>();
  private running: Promise<void> | undefined;
  private failureReported = false;
  /** Settles when the entries queued since the last batch was taken are in the journal (or given up on). */
  private nextBatch = settledLater();
  /** The same for the batch being written. */
  private currentBatch: Promise<void> = Promise.resolve();

  private readonly agentDir: string;
  private readonly report: CacheWriteReporter;

  constructor(agentDir: string, report: CacheWriteReporter) {
    this.agentDir = agentDir;
    this.report = report;
  }

  /** Queues the entry; it is written with whatever else arrives before the current write ends. */
  queue(name: string, entry: CachedServerEntry): void {
    this.pending.set(name, entry);
    this.running ??= this.drain().finally(() => {
      this.running = undefined;
    });
  }

  /** Resolves when every entry queued so far can be read by other processes (or was given up on). */
  stored(): Promise<void> {
    return this.pending.size > 0 ? this.nextBatch.promise : this.currentBatch;
  }

  /**
   * Resolves when every queued entry is written or given up on. With `maxWaitMs` (shutdown), it waits for the journal
   * (no lock: nothing another process does holds it up) and only that long for the merge into the cache file, which
   * the next writer of any process does otherwise.
   */
  async flush(maxWaitMs = Number.POSITIVE_INFINITY): Promise<void> {
    await this.stored();
    let expired = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<void>((resolve) => {
      if (!Number.isFinite(maxWaitMs)) return;
      timer = setTimeout(() => {
        expired = true;
        resolve();
      }, maxWaitMs);
    });
    try {
      while (this.running && !expired) await Promise.race([this.running, deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async drain(): Promise<void> {
    let failures = 0;
    while (this.pending.size > 0) {
      const batch = new Map(this.pending);
      this.pending.clear();
      const done = this.nextBatch;
      this.nextBatch = settledLater();
      this.currentBatch = done.promise;
      const journaled = await journalServerEntries(this.agentDir, batch);
      if (!journaled.written) {
        failures += 1;
        // Entries queued meanwhile are newer than the batch's: they win.
        for (const [name, entry] of batch) if (!this.pending.has(name)) this.pending.set(name, entry);
        if (failures < MAX_ATTEMPTS) {
          void this.nextBatch.promise.then(done.settle);
          continue;
        }
        this.pending.clear();
        this.nextBatch.settle();
        this.nextBatch = settledLater();
        done.settle();
        return this.fail(journaled);
      }
      failures = 0;
      this.failureReported = false;
      done.settle();
      await this.merge();
    }
  }

  /** The journal into the cache file (unless another process's merge emptied it already). */
  private async merge(): Promise<void> {
    if (hasJournalEntries(this.agentDir)) await writeServerEntries(this.agentDir, new Map());
  }

  private fail(result: WriteResult): void {
    if (!this.failureReported) this.report(result);
    this.failureReported = true;
  }
}

/** A promise and the function that resolves it (Node 20 has no Promise.withResolvers). */
function settledLater(): { promise: Promise<void>; settle: () => void } {
  let settle!: () => void;
  const promise = new Promise<void>((resolve) => {
    settle = resolve;
  });
  return { promise, settle };
}

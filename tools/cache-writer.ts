/**
 * One cache writer per agent directory and process. Every server's listing used to write the cache on its own, each
 * write taking the cross-process lock: a session's own writes contended with each other and were skipped, so most of
 * what one session learned was lost. Here entries wait in one batch while a write is in flight (the last listing per
 * server wins), the lock is taken by one write at a time (so it is only ever contended by other processes), and a
 * skipped write keeps its entries for the next attempt instead of dropping them. A write given up on is reported once
 * until a write succeeds again: a broken cache file should not warn again at every listing of the session.
 */

import type { CachedServerEntry, WriteResult } from "../metadata-cache.ts";
import { writeServerEntries } from "../metadata-cache.ts";

/** A skipped write (lock held by another process for long, disk error) is tried again this many times. */
const MAX_ATTEMPTS = 3;

export type CacheWriteReporter = (result: WriteResult) => void;

export class MetadataCacheWriter {
  private readonly pending = new Map<string, CachedServerEntry>();
  private running: Promise<void> | undefined;
  private failureReported = false;

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

  /**
   * Resolves when every queued entry is written or given up on, or after `maxWaitMs` (shutdown must not wait out
   * three lock timeouts of another process).
   */
  async flush(maxWaitMs = Number.POSITIVE_INFINITY): Promise<void> {
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
      const result = await writeServerEntries(this.agentDir, batch);
      if (result.written) {
        failures = 0;
        this.failureReported = false;
        continue;
      }
      failures += 1;
      // Entries queued meanwhile are newer than the batch's: they win.
      for (const [name, entry] of batch) if (!this.pending.has(name)) this.pending.set(name, entry);
      if (failures >= MAX_ATTEMPTS) {
        this.pending.clear();
        if (!this.failureReported) this.report(result);
        this.failureReported = true;
        return;
      }
    }
  }
}

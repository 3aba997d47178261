/**
 * Asynchronous work that several callers share, written once: the same work asked for twice at once done once,
 * changes of one file made one after another, and many items worked through a few at a time. Each was written out
 * again wherever it was needed; here each rule is decided once (a failed run is not kept for the next caller, a failed
 * change does not stop the next one).
 */

/** Concurrent calls for one key share one run of the work; once it settles, the next call runs it anew. */
export class SharedByKey<T> {
  private readonly running = new Map<string, Promise<T>>();

  run(key: string, work: () => Promise<T>): Promise<T> {
    let running = this.running.get(key);
    if (!running) {
      running = work().finally(() => this.running.delete(key));
      this.running.set(key, running);
    }
    return running;
  }
}

/**
 * Work on one key (say, one file's read-change-write) runs one piece after another, in the order asked, so
 * concurrent changes do not undo each other. A piece that fails fails for its caller only: the next one still runs.
 */
export class KeyedQueue {
  /** The last piece asked for, per key, settled either way; removed when nothing follows it. */
  private readonly tails = new Map<string, Promise<void>>();

  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const result = (this.tails.get(key) ?? Promise.resolve()).then(work);
    const tail = result.then(ignore, ignore);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }
}

/**
 * Calls `work` for every item, at most `limit` at once, taking the items in their order; once `stop()` is true no
 * further item is taken (those under way finish). `work` must not reject: catch inside it, as the callers decide.
 */
export async function forEachAtMost<T>(
  items: readonly T[],
  limit: number,
  work: (item: T, index: number) => Promise<void>,
  stop: () => boolean = () => false,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length && !stop()) {
      const index = next++;
      await work(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

function ignore(): void {}

import { describe, expect, it } from "vitest";
import { forEachAtMost, KeyedQueue, SharedByKey } from "../util/async-work.ts";
import { deferred } from "./helpers/deferred.ts";

describe("SharedByKey", () => {
  it("runs the work once for concurrent calls with one key, apart for other keys, and anew once settled", async () => {
    const shared = new SharedByKey<number>();
    let runs = 0;
    const gate = deferred();
    const work = async () => {
      runs++;
      await gate.promise;
      return runs;
    };
    const first = shared.run("a", work);
    const second = shared.run("a", work);
    const other = shared.run("b", work);
    expect(second).toBe(first);
    expect(other).not.toBe(first);
    gate.resolve();
    expect(await first).toBe(2);
    await shared.run("a", work);
    expect(runs).toBe(3);
  });

  it("a failed run is shared by its callers and not kept for the next", async () => {
    const shared = new SharedByKey<string>();
    const failing = shared.run("a", async () => {
      throw new Error("npm failed");
    });
    await expect(failing).rejects.toThrow("npm failed");
    await expect(shared.run("a", async () => "ok")).resolves.toBe("ok");
  });
});

describe("KeyedQueue", () => {
  it("runs one key's work one piece at a time in order, other keys alongside, and a failure does not stop the next", async () => {
    const queue = new KeyedQueue();
    const events: string[] = [];
    const gate = deferred();
    const first = queue.run("file", async () => {
      events.push("first starts");
      await gate.promise;
      events.push("first ends");
      throw new Error("disk full");
    });
    const second = queue.run("file", async () => {
      events.push("second");
      return 2;
    });
    const elsewhere = queue.run("other", async () => {
      events.push("other file");
    });
    await elsewhere;
    expect(events).toEqual(["first starts", "other file"]);
    gate.resolve();
    await expect(first).rejects.toThrow("disk full");
    await expect(second).resolves.toBe(2);
    expect(events).toEqual(["first starts", "other file", "first ends", "second"]);
  });
});

describe("forEachAtMost", () => {
  it("works through every item in order with at most `limit` at once", async () => {
    let running = 0;
    let most = 0;
    const started: number[] = [];
    await forEachAtMost([10, 11, 12, 13, 14], 2, async (item, index) => {
      expect(item).toBe(10 + index);
      started.push(item);
      most = Math.max(most, ++running);
      await new Promise((resolve) => setTimeout(resolve, 5));
      running--;
    });
    expect(started).toEqual([10, 11, 12, 13, 14]);
    expect(most).toBe(2);
  });

  it("takes no further item once stop() is true, and finishes with no item", async () => {
    const done: number[] = [];
    await forEachAtMost(
      [1, 2, 3, 4],
      1,
      async (item) => void done.push(item),
      () => done.length >= 2,
    );
    expect(done).toEqual([1, 2]);
    await forEachAtMost([], 3, async () => void done.push(0));
    expect(done).toEqual([1, 2]);
  });
});

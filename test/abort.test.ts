import { getEventListeners } from "node:events";
import { afterEach, describe, expect, it, vi } from "vitest";
import { abortable, abortAfter, waitAtMost, whenAborted, withOwnSignal } from "../util/abort.ts";
import { deferred } from "./helpers/deferred.ts";

function listeners(signal: AbortSignal): number {
  return getEventListeners(signal, "abort").length;
}

afterEach(() => {
  vi.useRealTimers();
});

describe("whenAborted", () => {
  it("tells every waiter through one listener, removed when the last one stops waiting", () => {
    const controller = new AbortController();
    const stops = Array.from({ length: 20 }, () => whenAborted(controller.signal, () => {}));
    expect(listeners(controller.signal)).toBe(1);
    for (const stop of stops.slice(1)) stop();
    expect(listeners(controller.signal)).toBe(1);
    stops[0]!();
    expect(listeners(controller.signal)).toBe(0);
  });

  it("tells each waiter once, and not one that another waiter stopped while they were told", () => {
    const controller = new AbortController();
    const told: string[] = [];
    let stopSecond = () => {};
    whenAborted(controller.signal, () => {
      told.push("first");
      stopSecond();
    });
    stopSecond = whenAborted(controller.signal, () => told.push("second"));
    controller.abort();
    controller.abort();
    expect(told).toEqual(["first"]);
    expect(listeners(controller.signal)).toBe(0);
  });

  it("tells a waiter at once when the signal has aborted already, and adds no listener", () => {
    const signal = AbortSignal.abort();
    const onAbort = vi.fn();
    const stop = whenAborted(signal, onAbort);
    expect(onAbort).toHaveBeenCalledTimes(1);
    expect(listeners(signal)).toBe(0);
    stop();
  });

  it("does not tell a waiter that stopped", () => {
    const controller = new AbortController();
    const onAbort = vi.fn();
    whenAborted(controller.signal, onAbort)();
    controller.abort();
    expect(onAbort).not.toHaveBeenCalled();
  });
});

describe("abortable", () => {
  it("settles as the promise does, and takes its listener off the signal", async () => {
    const controller = new AbortController();
    await expect(abortable(Promise.resolve(42), controller.signal)).resolves.toBe(42);
    await expect(abortable(Promise.reject(new Error("no")), controller.signal)).rejects.toThrow("no");
    expect(listeners(controller.signal)).toBe(0);
  });

  it("rejects with the signal's reason as soon as it aborts, without waiting for the promise", async () => {
    const controller = new AbortController();
    const never = deferred<number>();
    const waiting = abortable(never.promise, controller.signal);
    const reason = new Error("stopped by the user");
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    expect(listeners(controller.signal)).toBe(0);
  });

  it("rejects at once on a signal aborted already, and the promise's later rejection goes nowhere", async () => {
    const reason = new Error("too late");
    const late = deferred<number>();
    const unhandled = vi.fn();
    process.on("unhandledRejection", unhandled);
    try {
      await expect(abortable(late.promise, AbortSignal.abort(reason))).rejects.toBe(reason);
      late.reject(new Error("the work failed afterwards"));
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).not.toHaveBeenCalled();
    } finally {
      process.off("unhandledRejection", unhandled);
    }
  });
});

describe("withOwnSignal", () => {
  it("gives each request a signal that aborts with the caller's reason", async () => {
    const controller = new AbortController();
    const reason = new Error("Esc");
    const seen = withOwnSignal(
      controller.signal,
      (own) => new Promise((_, reject) => own.addEventListener("abort", () => reject(own.reason))),
    );
    controller.abort(reason);
    await expect(seen).rejects.toBe(reason);
  });

  it("leaves the caller's signal one listener however many requests follow it, and none once they are done", async () => {
    const controller = new AbortController();
    const answers = Array.from({ length: 30 }, () => deferred<string>());
    const requests = answers.map((answer) =>
      withOwnSignal(controller.signal, (own) => {
        // What the SDK does: a listener on the request's signal that it never removes.
        own.addEventListener("abort", () => {});
        return answer.promise;
      }),
    );
    expect(listeners(controller.signal)).toBe(1);
    for (const answer of answers) answer.resolve("done");
    await expect(Promise.all(requests)).resolves.toHaveLength(30);
    expect(listeners(controller.signal)).toBe(0);
  });

  it("hands an aborted signal to a request made after the abort", async () => {
    const reason = new Error("gone");
    const own = await withOwnSignal(AbortSignal.abort(reason), async (signal) => signal);
    expect(own.aborted).toBe(true);
    expect(own.reason).toBe(reason);
  });
});

describe("abortAfter", () => {
  it("aborts with the reason once the time is up, unless cleared first", () => {
    vi.useFakeTimers();
    const late = new AbortController();
    abortAfter(late, 1_000, () => new Error("too slow"));
    const cleared = new AbortController();
    const clear = abortAfter(cleared, 1_000, () => new Error("too slow"));
    vi.advanceTimersByTime(999);
    expect(late.signal.aborted).toBe(false);
    clear();
    vi.advanceTimersByTime(1);
    expect(late.signal.reason).toEqual(new Error("too slow"));
    expect(cleared.signal.aborted).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("does not keep the process alive", () => {
    const spy = vi.spyOn(globalThis, "setTimeout");
    try {
      abortAfter(new AbortController(), 60_000, () => undefined)();
      const timer = spy.mock.results[0]!.value as NodeJS.Timeout;
      expect(timer.hasRef()).toBe(false);
    } finally {
      spy.mockRestore();
    }
  });
});

describe("waitAtMost", () => {
  it("gives the promise's value when it comes in time, and leaves no timer or listener", async () => {
    vi.useFakeTimers();
    const controller = new AbortController();
    await expect(waitAtMost(Promise.resolve("ready"), 5_000, controller.signal)).resolves.toBe("ready");
    expect(vi.getTimerCount()).toBe(0);
    expect(listeners(controller.signal)).toBe(0);
  });

  it("gives up with undefined once the time is up", async () => {
    vi.useFakeTimers();
    const waiting = waitAtMost(deferred<string>().promise, 5_000);
    await vi.advanceTimersByTimeAsync(5_000);
    await expect(waiting).resolves.toBeUndefined();
  });

  it("gives up with undefined when the signal aborts, at once if it has already", async () => {
    vi.useFakeTimers();
    const controller = new AbortController();
    const waiting = waitAtMost(deferred<string>().promise, 5_000, controller.signal);
    controller.abort();
    await expect(waiting).resolves.toBeUndefined();
    await expect(waitAtMost(deferred<string>().promise, 5_000, AbortSignal.abort())).resolves.toBeUndefined();
    expect(vi.getTimerCount()).toBe(0);
  });

  it("rejects as the promise does", async () => {
    await expect(waitAtMost(Promise.reject(new Error("startup broke")), 5_000)).rejects.toThrow("startup broke");
  });
});

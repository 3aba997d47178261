/**
 * Timers the adapter's own modules created that have not fired or been cleared yet: what could still run after a
 * session ended. Tracked with async_hooks, which also sees unref'd timers (`getActiveResourcesInfo` does not).
 */
import { createHook } from "node:async_hooks";
import { sep } from "node:path";
import { REPO_ROOT } from "./hosts.ts";

export interface TimerTracker {
  /** Where each pending timer of ours was created (its stack frame). */
  pending(): string[];
  stop(): void;
}

export function trackAdapterTimers(): TimerTracker {
  const live = new Map<number, string>();
  const hook = createHook({
    init(asyncId, type) {
      if (type !== "Timeout") return;
      const origin = callerFrame(new Error().stack ?? "");
      if (origin && isProductModule(origin)) live.set(asyncId, origin);
    },
    destroy(asyncId) {
      live.delete(asyncId);
    },
  });
  hook.enable();
  return { pending: () => [...live.values()], stop: () => void hook.disable() };
}

/** The first frame that is neither Node's nor this file's: the code that asked for the timer. */
function callerFrame(stack: string): string | undefined {
  return stack
    .split("\n")
    .slice(1)
    .map((line) => line.trim())
    .find((line) => !line.includes("node:") && !line.includes("adapter-timers.ts"));
}

function isProductModule(frame: string): boolean {
  const inRepo = frame.includes(`${REPO_ROOT}${sep}`);
  return inRepo && !frame.includes(`${sep}node_modules${sep}`) && !frame.includes(`${REPO_ROOT}${sep}test${sep}`);
}

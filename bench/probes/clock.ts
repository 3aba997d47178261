/**
 * Timestamps shared between the probe extensions and the bench that loads them. Pi loads every extension through
 * its own jiti instance without a module cache, so module state is not shared: globalThis is.
 */
export interface ProbeClock {
  /** When the first probe's factory ran (Pi loads extensions in the order given, each factory awaited). */
  loadStartedAt?: number;
  /** When the last probe's `session_start` handler ran (Pi awaits each extension's handler in load order). */
  sessionStartedAt?: number;
}

const KEY = "__piMcpBenchClock";

export function probeClock(): ProbeClock {
  const global = globalThis as { [KEY]?: ProbeClock };
  global[KEY] ??= {};
  return global[KEY];
}

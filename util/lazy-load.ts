/**
 * Modules loaded on first use rather than with the extension: each costs Pi's start time (a parser, a lock library,
 * the SDK half) and most sessions never need some of them. Written once because one hand-written copy kept a failed
 * import for the life of the process: here a failed load is forgotten, and the next use tries again.
 */
import { createRequire } from "node:module";

/**
 * A loader that starts `load` on its first call and gives every caller the same promise. A load that fails is
 * forgotten, so the next call tries again (a package installed meanwhile, a passing file error) instead of failing
 * for as long as the process lives.
 */
export function lazyLoad<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => {
    loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
    return loading;
  };
}

/** Packages resolve from this directory, as from every module of the adapter (they all sit beside it). */
const requireModule = createRequire(import.meta.url);

/**
 * The synchronous kind, for code that cannot wait (config loading runs in the extension factory): the package is
 * required on the first call. A require that throws keeps nothing, so the next call tries again.
 */
export function lazyRequire<T>(specifier: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= requireModule(specifier) as T);
}

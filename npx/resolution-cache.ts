/**
 * Remembered npx resolutions (`<agentDir>/mcp-npx-cache.json`), so a later start skips asking npm for its config
 * and re-checking the install. The file is private (0600) and replaced atomically; a damaged file is ignored and
 * rewritten on the next store.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { KeyedQueue } from "../util/async-work.ts";
import { writeFileAtomic } from "../util/atomic-file.ts";
import { isJsonObject } from "../util/guards.ts";

export const NPX_CACHE_FILE_NAME = "mcp-npx-cache.json";
const FORMAT_VERSION = 1;

export interface CachedResolution {
  command: string;
  /** Arguments before the user's own (shebang flags, the bin path). */
  args: string[];
  /** The file that must still exist for the resolution to hold. */
  binPath: string;
  /** Epoch ms after which the resolution is re-derived (24 h, or less while a tag's install is unconfirmed). */
  validUntil: number;
}

interface CacheFile {
  version: number;
  entries: Record<string, CachedResolution>;
}

/** Pending writes per file, so concurrent stores in this process do not drop each other's entries. */
const writeQueues = new KeyedQueue();

export function npxCacheFile(agentDir: string): string {
  return join(agentDir, NPX_CACHE_FILE_NAME);
}

export async function readCachedResolution(file: string, key: string, now: number): Promise<CachedResolution | undefined> {
  const entry = (await readEntries(file))[key];
  return entry && entry.validUntil > now ? entry : undefined;
}

export function storeResolution(file: string, key: string, resolution: CachedResolution, now: number): Promise<void> {
  return writeQueues.run(file, async () => {
    const entries = await readEntries(file);
    for (const [name, entry] of Object.entries(entries)) if (entry.validUntil <= now) delete entries[name];
    entries[key] = resolution;
    await writeFileAtomic(file, JSON.stringify({ version: FORMAT_VERSION, entries } satisfies CacheFile, null, 2));
  });
}

async function readEntries(file: string): Promise<Record<string, CachedResolution>> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(file, "utf8"));
  } catch {
    return {};
  }
  if (!isJsonObject(parsed) || parsed.version !== FORMAT_VERSION || !isJsonObject(parsed.entries)) return {};
  const entries: Record<string, CachedResolution> = {};
  for (const [key, entry] of Object.entries(parsed.entries)) if (isResolution(entry)) entries[key] = entry;
  return entries;
}

function isResolution(value: unknown): value is CachedResolution {
  return (
    isJsonObject(value) &&
    typeof value.command === "string" &&
    Array.isArray(value.args) &&
    value.args.every((arg) => typeof arg === "string") &&
    typeof value.binPath === "string" &&
    typeof value.validUntil === "number"
  );
}

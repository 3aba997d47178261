/**
 * `<agentDir>/mcp-cache.json`: every server's tools, resources, resource templates, prompts and instructions from its
 * last connection, so Pi can register them (tools, prompt commands) at startup without starting a single server.
 *
 * An entry is valid for 7 days while the server's identity (`computeServerHash`) is unchanged. Entries keep the
 * MCP names, so a `toolPrefix` change never invalidates them. Several Pi processes share the file: a write locks
 * it, reads it again, changes only its own servers and renames a private temp file over it (mode 0600). Beside it,
 * `mcp-cache-journal/` holds entries written without the lock (a session's listings, at once: they must survive a
 * session that ends while others hold the lock): readers take them with the file, and the next locked write merges
 * them into it and removes them. Of two entries for one server, the later listing wins. Within a minute after a lock
 * was taken over from a holder that stopped refreshing it (a starved CPU stalls a process for seconds), journal files
 * are kept a minute: that holder may still replace the file with what it read before a merge, and the next merge then
 * brings those entries back. A file
 * that is unreadable or not ours (corrupt, truncated, foreign, other version) is treated as empty and rebuilt by
 * the next write; within a good file, a malformed entry is dropped and the others kept. Only the hash of a
 * server's config is stored, never the config (it may hold secrets).
 */
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { rm, rmdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { type CachedServerEntry, computeServerHash, parseEntry } from "./tools/cache-entry.ts";
import { writeFileAtomic } from "./util/atomic-file.ts";
import { updateFileLocked } from "./util/file-lock.ts";
import type { ServerDefinition } from "./types.ts";
import { errorCode, errorMessage, isJsonObject } from "./util/guards.ts";
import { compareStrings } from "./util/text.ts";

export {
  type CachedServerEntry,
  computeServerHash,
  createCacheEntry,
  MAX_INSTRUCTIONS_CHARS,
  type ServerExtras,
} from "./tools/cache-entry.ts";

/**
 * 2: tool schemas are stored provider-safe (tools/json-schema.ts), so a start has nothing to convert.
 * 3: entries also hold resource templates, prompts and instructions. A version-2 file is still read (its tools
 * register at startup as before); its entries have `prompts` unset, which makes the startup list those servers
 * once in the background, and the next write stores them as version 3.
 * 4: tools also keep their `execution.taskSupport` (a `required` tool is always called as a task) and their view
 * (`_meta.ui`: an app-only tool is never offered to the model). A version-3 file is read as a version-2 one is: its
 * entries' prompts are dropped, so the startup lists those servers once in the background and no app-only tool is
 * offered to the model for longer than that listing takes.
 */
export const CACHE_VERSION = 4;
const READABLE_VERSIONS: ReadonlySet<unknown> = new Set([2, 3, CACHE_VERSION]);
export const CACHE_FILE_NAME = "mcp-cache.json";
export const CACHE_JOURNAL_DIR_NAME = "mcp-cache-journal";
export const CACHE_MAX_AGE_MS = 7 * 24 * 60 * 60 * 1000;
/** Far longer than a lock holder stalls on a loaded machine (seconds), short enough that few files pile up. */
const JOURNAL_KEEP_MS = 60_000;
/** In the journal directory, touched when the cache's lock was taken over from a stalled (or dead) holder. */
const TAKEOVER_MARK = "taken-over";

export interface MetadataCacheSnapshot {
  path: string;
  servers: ReadonlyMap<string, CachedServerEntry>;
  /** Why the file or some of its entries were ignored (empty when all was well or there was no file). */
  problems: string[];
}

export type WriteResult =
  | { written: true; path: string /** Servers whose entry was malformed and so not written. */; rejected: string[] }
  | { written: false; path: string; reason: string };

export interface WriteOptions {
  lockTimeoutMs?: number;
}

export function getCachePath(agentDir: string): string {
  return join(agentDir, CACHE_FILE_NAME);
}

/** Sync because the extension factory reads it at module scope. Never throws. */
export function loadMetadataCache(agentDir: string): MetadataCacheSnapshot {
  const path = getCachePath(agentDir);
  // The journal first: a write that merges it replaces the cache file before it removes the journal's files.
  const journal = readJournal(agentDir);
  let snapshot: MetadataCacheSnapshot;
  try {
    snapshot = { path, ...parseCacheFile(readFileSync(path, "utf8"), path) };
  } catch (error) {
    const problems = errorCode(error) === "ENOENT" ? [] : [`${path}: cannot be read (${errorMessage(error)}); ignored`];
    snapshot = { path, servers: new Map(), problems };
  }
  for (const file of journal) mergeLater(snapshot.servers as Map<string, CachedServerEntry>, file.servers);
  return snapshot;
}

export function getValidEntry(snapshot: MetadataCacheSnapshot, def: ServerDefinition, now = Date.now()): CachedServerEntry | undefined {
  const entry = snapshot.servers.get(def.name);
  if (!entry || entry.configHash !== computeServerHash(def)) return undefined;
  const age = now - entry.cachedAt;
  // A date in the future means the clock moved: the entry cannot be dated, so it is refreshed.
  return age >= 0 && age <= CACHE_MAX_AGE_MS ? entry : undefined;
}

/**
 * Replaces these servers' entries (and merges the journal) and keeps every other server's. Never throws: a write
 * that cannot be done safely (lock not had in time, disk error) is skipped and the reason returned.
 */
export async function writeServerEntries(
  agentDir: string,
  entries: ReadonlyMap<string, CachedServerEntry> | Readonly<Record<string, CachedServerEntry>>,
  options: WriteOptions = {},
): Promise<WriteResult> {
  const path = getCachePath(agentDir);
  const { updates, rejected } = checkedEntries(entries);
  let merged: JournalFile[] = [];
  let tookOver = false;
  const reason = await updateFileLocked(
    path,
    (current) => {
      merged = readJournal(agentDir);
      const servers = new Map(readServersForMerge(current, path));
      let changed = current === undefined || servers.size === 0;
      for (const file of merged) changed = mergeLater(servers, file.servers) || changed;
      changed = mergeLater(servers, updates) || changed;
      if (!changed) return undefined; // the file has it all already
      return JSON.stringify({ version: CACHE_VERSION, servers: Object.fromEntries([...servers].sort(([a], [b]) => compareStrings(a, b))) });
    },
    options.lockTimeoutMs,
    () => {
      tookOver = true;
    },
  );
  if (reason !== undefined) return { written: false, path, reason };
  await removeMergedJournal(agentDir, merged, tookOver);
  return { written: true, path, rejected };
}

/** The merged journal files go, unless a stalled lock holder may still undo the merge (see the module comment). */
async function removeMergedJournal(agentDir: string, merged: readonly JournalFile[], tookOver: boolean): Promise<void> {
  const mark = join(agentDir, CACHE_JOURNAL_DIR_NAME, TAKEOVER_MARK);
  if (tookOver) await writeFile(mark, "", { mode: 0o600 }).catch(() => undefined);
  const keep = tookOver || Date.now() - modifiedAt(mark) < JOURNAL_KEEP_MS;
  const expired = merged.filter((file) => Date.now() - file.writtenAt > JOURNAL_KEEP_MS);
  const removed = keep ? expired.map((file) => file.path) : [...merged.map((file) => file.path), mark];
  await Promise.all(removed.map((file) => rm(file, { force: true }).catch(() => undefined)));
  // Gone when empty: a single session leaves only the cache file (a writer racing this retries its journal write).
  await rmdir(dirname(mark)).catch(() => undefined);
}

function modifiedAt(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

/**
 * Puts these servers' entries where every reader sees them at once, without the lock (a file of its own in the
 * journal): for a session that must not lose a listing while other processes hold the lock, or wait for them.
 * The next `writeServerEntries` of any process merges them into the cache file. Never throws.
 */
export async function journalServerEntries(
  agentDir: string,
  entries: ReadonlyMap<string, CachedServerEntry> | Readonly<Record<string, CachedServerEntry>>,
): Promise<WriteResult> {
  const { updates, rejected } = checkedEntries(entries);
  const path = join(agentDir, CACHE_JOURNAL_DIR_NAME, `${process.pid}-${Date.now()}-${randomBytes(4).toString("hex")}.json`);
  try {
    await writeFileAtomic(path, JSON.stringify({ version: CACHE_VERSION, servers: Object.fromEntries(updates) }));
    return { written: true, path, rejected };
  } catch (error) {
    return { written: false, path, reason: `cannot write ${path}: ${errorMessage(error)}` };
  }
}

/** Whether journal entries wait to be merged into the cache file (a cheap look, without the lock). */
export function hasJournalEntries(agentDir: string): boolean {
  try {
    return readdirSync(join(agentDir, CACHE_JOURNAL_DIR_NAME)).some(isJournalFile);
  } catch {
    return false;
  }
}

function checkedEntries(entries: ReadonlyMap<string, CachedServerEntry> | Readonly<Record<string, CachedServerEntry>>) {
  const updates = new Map<string, CachedServerEntry>();
  const rejected: string[] = [];
  for (const [name, entry] of entries instanceof Map ? entries : Object.entries(entries)) {
    const stored = parseEntry(entry);
    if (stored) updates.set(name, stored);
    else rejected.push(name);
  }
  return { updates, rejected };
}

/**
 * Of two entries for a server, the later listing's (on a tie, the one merged last: a write's own over the file's).
 * True when `into` changed.
 */
function mergeLater(into: Map<string, CachedServerEntry>, from: ReadonlyMap<string, CachedServerEntry>): boolean {
  let changed = false;
  for (const [name, entry] of from) {
    const kept = into.get(name);
    if (kept && (entry.cachedAt < kept.cachedAt || (entry.cachedAt === kept.cachedAt && sameEntry(entry, kept)))) continue;
    into.set(name, entry);
    changed = true;
  }
  return changed;
}

function sameEntry(a: CachedServerEntry, b: CachedServerEntry): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

interface JournalFile {
  path: string;
  /** Epoch ms (its modification time). */
  writtenAt: number;
  servers: ReadonlyMap<string, CachedServerEntry>;
}

/** The journal's files, oldest name first; one unreadable or not ours counts as empty (and goes with the next merge). */
function readJournal(agentDir: string): JournalFile[] {
  const dir = join(agentDir, CACHE_JOURNAL_DIR_NAME);
  let names: string[];
  try {
    names = readdirSync(dir).filter(isJournalFile).sort(compareStrings);
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    const path = join(dir, name);
    try {
      const writtenAt = statSync(path).mtimeMs;
      return [{ path, writtenAt, servers: parseCacheFile(readFileSync(path, "utf8"), path).servers }];
    } catch {
      return []; // removed since it was listed
    }
  });
}

/** Not the temp file of a journal file being written (util/atomic-file.ts). */
function isJournalFile(name: string): boolean {
  return name.endsWith(".json");
}

function readServersForMerge(current: string | undefined, path: string): ReadonlyMap<string, CachedServerEntry> {
  if (current === undefined) return new Map();
  try {
    return parseCacheFile(current, path).servers;
  } catch {
    // Missing or unreadable: rebuilt from this write's entries.
    return new Map();
  }
}

/** The file's servers; everything read from it is untrusted (tools/cache-entry.ts checks each entry). */
function parseCacheFile(text: string, path: string): { servers: Map<string, CachedServerEntry>; problems: string[] } {
  const servers = new Map<string, CachedServerEntry>();
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    return { servers, problems: [`${path}: not valid JSON (${errorMessage(error)}); ignored, rebuilt on the next write`] };
  }
  if (!isJsonObject(data) || !isJsonObject(data.servers)) {
    return { servers, problems: [`${path}: not a metadata cache (no "servers" object); ignored, rebuilt on the next write`] };
  }
  if (!READABLE_VERSIONS.has(data.version)) {
    const version = JSON.stringify(data.version) ?? "none";
    return { servers, problems: [`${path}: cache version ${version}, expected ${CACHE_VERSION}; ignored, rebuilt on the next write`] };
  }
  const problems: string[] = [];
  for (const [name, raw] of Object.entries(data.servers)) {
    const entry = parseEntry(raw);
    // An older file's entries lack what later listings learn: unknown prompts mark a server to be listed again.
    if (entry && data.version !== CACHE_VERSION) delete entry.prompts;
    if (entry) servers.set(name, entry);
    else problems.push(`${path}: malformed entry for server ${JSON.stringify(name)}; ignored`);
  }
  return { servers, problems };
}

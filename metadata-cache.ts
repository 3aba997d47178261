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
import { createHash, randomBytes } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { rm, rmdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { writeFileAtomic } from "./util/atomic-file.ts";
import { updateFileLocked } from "./util/file-lock.ts";
import { toProviderSafeSchema } from "./tools/json-schema.ts";
import type { ListsFreshUntil } from "./connection/live-connection.ts";
import type { ProtocolVerdict } from "./connection/session.ts";
import type {
  McpPrompt,
  McpPromptArgument,
  McpResource,
  McpResourceTemplate,
  McpTool,
  ServerDefinition,
  ServerEntry,
  SkillEntry,
} from "./types.ts";
import { keptSkillEntry } from "./types.ts";
import { errorCode, errorMessage, isJsonObject } from "./util/guards.ts";
import { compareStrings, truncate } from "./util/text.ts";

/**
 * 2: tool schemas are stored provider-safe (tools/json-schema.ts), so a start has nothing to convert.
 * 3: entries also hold resource templates, prompts and instructions. A version-2 file is still read (its tools
 * register at startup as before); its entries have `prompts` unset, which makes the startup list those servers
 * once in the background, and the next write stores them as version 3.
 */
export const CACHE_VERSION = 3;
const READABLE_VERSIONS: ReadonlySet<unknown> = new Set([2, CACHE_VERSION]);
/** A server's `instructions` are kept (and shown to the model) up to this length. */
export const MAX_INSTRUCTIONS_CHARS = 1_000;
export const CACHE_FILE_NAME = "mcp-cache.json";
export const CACHE_JOURNAL_DIR_NAME = "mcp-cache-journal";
export const CACHE_MAX_AGE_MS = 7 * 24 * 60 * 60 * 1000;
/** Far longer than a lock holder stalls on a loaded machine (seconds), short enough that few files pile up. */
const JOURNAL_KEEP_MS = 60_000;
/** In the journal directory, touched when the cache's lock was taken over from a stalled (or dead) holder. */
const TAKEOVER_MARK = "taken-over";

export interface CachedServerEntry {
  configHash: string;
  tools: McpTool[];
  resources: McpResource[];
  resourceTemplates?: McpResourceTemplate[];
  /** Unset in an entry of a version-2 file: the server's prompts are not known yet. */
  prompts?: McpPrompt[];
  /** The server's `instructions`, cut to `MAX_INSTRUCTIONS_CHARS`. */
  instructions?: string;
  /** The protocol it spoke at that connection: the next connect starts from it (connection/era.ts). */
  protocol?: ProtocolVerdict;
  /** Until when (epoch ms) each list is valid, as the server said (`ttlMs`): a connect before then does not ask again. */
  freshUntil?: ListsFreshUntil;
  /** Its Agent Skills (MCP Skills extension): Pi learns them from here, no server starts for that. Unset: none. */
  skills?: SkillEntry[];
  cachedAt: number;
}

/** What a listing learned of a server besides its tools and resources. */
export interface ServerExtras {
  resourceTemplates: readonly McpResourceTemplate[];
  prompts: readonly McpPrompt[];
  instructions: string | undefined;
  protocol?: ProtocolVerdict;
  freshUntil?: ListsFreshUntil;
  skills?: readonly SkillEntry[];
}

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

/** The fields that decide what a server offers; behaviour-only fields (lifecycle, timeouts...) are left out. */
const IDENTITY_FIELDS = [
  "command",
  "args",
  "env",
  "cwd",
  "url",
  "headers",
  "transport",
  "auth",
  "bearerToken",
  "bearerTokenEnv",
  "exposeResources",
  "excludeTools",
] as const satisfies readonly (keyof ServerEntry)[];

export function computeServerHash(def: ServerEntry): string {
  const identity: Record<string, unknown> = {};
  for (const field of IDENTITY_FIELDS) {
    if (def[field] !== undefined) identity[field] = def[field];
  }
  return createHash("sha256").update(stableStringify(identity)).digest("hex");
}

/** JSON with object keys sorted at every level, so equal configs hash equally whatever their key order. */
function stableStringify(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => compareStrings(a, b));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${stableStringify(item)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

export function getCachePath(agentDir: string): string {
  return join(agentDir, CACHE_FILE_NAME);
}

/**
 * A fresh entry for a server just listed: only what the adapter uses of each tool and resource, schemas made
 * provider-safe once here rather than at every start.
 */
export function createCacheEntry(
  def: ServerEntry,
  tools: readonly McpTool[],
  resources: readonly McpResource[],
  now = Date.now(),
  extras: ServerExtras = { resourceTemplates: [], prompts: [], instructions: undefined },
): CachedServerEntry {
  const safeTools = tools.map((tool) => ({ ...pickTool(tool), inputSchema: toProviderSafeSchema(tool.inputSchema) }));
  const entry: CachedServerEntry = {
    configHash: computeServerHash(def),
    tools: safeTools,
    resources: resources.map(pickResource),
    resourceTemplates: extras.resourceTemplates.map(pickTemplate),
    prompts: extras.prompts.map(pickPrompt),
    cachedAt: now,
  };
  const instructions = boundedInstructions(extras.instructions);
  if (instructions) entry.instructions = instructions;
  if (extras.protocol) entry.protocol = extras.protocol;
  if (extras.freshUntil && Object.keys(extras.freshUntil).length > 0) entry.freshUntil = { ...extras.freshUntil };
  if (extras.skills && extras.skills.length > 0) entry.skills = extras.skills.map(keptSkillEntry);
  return entry;
}

/** Trimmed, and cut at `MAX_INSTRUCTIONS_CHARS` (a server may send pages of them). */
function boundedInstructions(text: string | undefined): string | undefined {
  const trimmed = text?.trim();
  if (!trimmed) return undefined;
  return truncate(trimmed, MAX_INSTRUCTIONS_CHARS);
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

// ---------------------------------------------------------------------------------------------
// Validation: everything read from the file is untrusted
// ---------------------------------------------------------------------------------------------

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
    if (entry) servers.set(name, entry);
    else problems.push(`${path}: malformed entry for server ${JSON.stringify(name)}; ignored`);
  }
  return { servers, problems };
}

function parseEntry(raw: unknown): CachedServerEntry | undefined {
  if (!isJsonObject(raw) || typeof raw.configHash !== "string" || !Number.isFinite(raw.cachedAt)) return undefined;
  if (!Array.isArray(raw.tools) || !raw.tools.every((tool) => isJsonObject(tool) && typeof tool.name === "string")) return undefined;
  const resources = raw.resources ?? [];
  if (!Array.isArray(resources) || !resources.every(isValidResource)) return undefined;
  const templates = raw.resourceTemplates ?? [];
  if (!Array.isArray(templates) || !templates.every(isValidTemplate)) return undefined;
  if (raw.prompts !== undefined && !(Array.isArray(raw.prompts) && raw.prompts.every(isValidPrompt))) return undefined;
  if (raw.instructions !== undefined && typeof raw.instructions !== "string") return undefined;
  if (raw.protocol !== undefined && !isProtocolVerdict(raw.protocol)) return undefined;
  if (raw.freshUntil !== undefined && !isFreshUntil(raw.freshUntil)) return undefined;
  const entry: CachedServerEntry = {
    configHash: raw.configHash,
    tools: raw.tools.map(pickTool),
    resources: resources.map(pickResource),
    cachedAt: raw.cachedAt as number,
  };
  if (raw.resourceTemplates !== undefined) entry.resourceTemplates = templates.map(pickTemplate);
  if (raw.prompts !== undefined) entry.prompts = raw.prompts.map(pickPrompt);
  const instructions = boundedInstructions(raw.instructions as string | undefined);
  if (instructions) entry.instructions = instructions;
  if (raw.protocol !== undefined) entry.protocol = raw.protocol as ProtocolVerdict;
  if (raw.freshUntil !== undefined) entry.freshUntil = raw.freshUntil as ListsFreshUntil;
  // A malformed skill costs only itself.
  const skills = Array.isArray(raw.skills) ? raw.skills.filter(isValidSkill).map(keptSkillEntry) : [];
  if (skills.length > 0) entry.skills = skills;
  return entry;
}

function isValidSkill(value: unknown): value is SkillEntry {
  if (!isJsonObject(value) || typeof value.uri !== "string" || !isJsonObject(value.frontmatter)) return false;
  const { name, description } = value.frontmatter;
  if (typeof name !== "string" || typeof description !== "string") return false;
  const files = value.resources;
  return (
    files === "dynamic" ||
    (Array.isArray(files) &&
      files.every(
        (file) => isJsonObject(file) && typeof file.uri === "string" && typeof file.digest === "string" && Number.isFinite(file.size),
      ))
  );
}

function isFreshUntil(value: unknown): boolean {
  return (
    isJsonObject(value) &&
    Object.entries(value).every(([list, until]) => ["tools", "resources", "prompts"].includes(list) && Number.isFinite(until))
  );
}

/** A verdict as connection/era.ts keeps it; a modern one with its `server/discover` answer (the SDK checks the rest). */
function isProtocolVerdict(value: unknown): boolean {
  if (!isJsonObject(value) || typeof value.version !== "string" || !Number.isFinite(value.checkedAt)) return false;
  if (value.era === "legacy") return true;
  return value.era === "modern" && isJsonObject(value.discover) && Array.isArray(value.discover.supportedVersions);
}

function isValidTemplate(value: unknown): value is McpResourceTemplate {
  return isJsonObject(value) && typeof value.uriTemplate === "string" && typeof value.name === "string";
}

function isValidPrompt(value: unknown): value is McpPrompt {
  if (!isJsonObject(value) || typeof value.name !== "string") return false;
  const args = value.arguments ?? [];
  return Array.isArray(args) && args.every((arg) => isJsonObject(arg) && typeof arg.name === "string");
}

function pickTemplate(template: McpResourceTemplate): McpResourceTemplate {
  const picked: McpResourceTemplate = { uriTemplate: template.uriTemplate, name: template.name };
  if (typeof template.description === "string") picked.description = template.description;
  if (typeof template.mimeType === "string") picked.mimeType = template.mimeType;
  return picked;
}

function pickPrompt(prompt: McpPrompt): McpPrompt {
  const picked: McpPrompt = { name: prompt.name };
  if (typeof prompt.title === "string") picked.title = prompt.title;
  if (typeof prompt.description === "string") picked.description = prompt.description;
  picked.arguments = (prompt.arguments ?? []).map((arg) => {
    const kept: McpPromptArgument = { name: arg.name };
    if (typeof arg.description === "string") kept.description = arg.description;
    if (arg.required === true) kept.required = true;
    return kept;
  });
  return picked;
}

function isValidResource(value: unknown): value is McpResource {
  return isJsonObject(value) && typeof value.uri === "string" && typeof value.name === "string";
}

function pickTool(tool: McpTool): McpTool {
  const picked: McpTool = { name: tool.name };
  if (typeof tool.title === "string") picked.title = tool.title;
  if (typeof tool.description === "string") picked.description = tool.description;
  if (tool.inputSchema !== undefined) picked.inputSchema = tool.inputSchema;
  if (isJsonObject(tool.outputSchema)) picked.outputSchema = tool.outputSchema;
  return picked;
}

function pickResource(resource: McpResource): McpResource {
  const picked: McpResource = { uri: resource.uri, name: resource.name };
  if (typeof resource.description === "string") picked.description = resource.description;
  if (typeof resource.mimeType === "string") picked.mimeType = resource.mimeType;
  return picked;
}

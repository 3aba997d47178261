/**
 * Call statistics (`settings.captureStats`): per MCP tool, how often it was called, how often it failed, and how
 * long calls took. Totals accumulate across sessions in a JSON file (default `<agentDir>/mcp-stats.json`), written
 * a moment after calls (`flushDelayMs`) and at shutdown, merged under a cross-process lock. Only counts and
 * durations are kept: never arguments or results.
 *
 * A session that ends while other processes hold the lock cannot wait for them: it leaves its figures in a file of
 * their own in `<stats file>.pending/`, which the next write of any process adds to the totals. The totals file
 * names the pending files already added (`merged`), so a crash between adding one and removing it never counts it
 * twice; a name is dropped once its file is gone.
 */
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../util/atomic-file.ts";
import { ignored } from "../util/debug-log.ts";
import { updateFileLocked } from "../util/file-lock.ts";
import { isJsonObject } from "../util/guards.ts";
import type { McpSettings } from "../types.ts";

export const STATS_FILE_NAME = "mcp-stats.json";
const DEFAULT_FLUSH_DELAY_MS = 5_000;
const STATS_VERSION = 1;

export interface ToolCallStats {
  calls: number;
  errors: number;
  totalMs: number;
  maxMs: number;
  lastCallAt: number;
}

/** The tracker for these settings, or undefined when statistics are off. */
export function createCallStats(settings: McpSettings, agentDir: string): CallStats | undefined {
  const option = settings.captureStats;
  if (!option) return undefined;
  const custom = typeof option === "object" ? option : {};
  const path = custom.path || join(agentDir, STATS_FILE_NAME);
  return new CallStats(path, custom.flushDelayMs ?? DEFAULT_FLUSH_DELAY_MS);
}

export class CallStats {
  readonly path: string;
  private readonly flushDelayMs: number;
  /** This session's calls, by `server/tool`. */
  private readonly session = new Map<string, ToolCallStats>();
  /** Calls not written to the file yet. */
  private unflushed = new Map<string, ToolCallStats>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(path: string, flushDelayMs: number) {
    this.path = path;
    this.flushDelayMs = flushDelayMs;
  }

  record(server: string, tool: string, durationMs: number, ok: boolean): void {
    const key = `${server}/${tool}`;
    const call: ToolCallStats = { calls: 1, errors: ok ? 0 : 1, totalMs: durationMs, maxMs: durationMs, lastCallAt: Date.now() };
    this.session.set(key, add(this.session.get(key), call));
    this.unflushed.set(key, add(this.unflushed.get(key), call));
    if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.flushDelayMs);
      this.timer.unref();
    }
  }

  /** This session's figures for one server's tools (all servers when omitted), by `server/tool`. */
  sessionStats(server?: string): Map<string, ToolCallStats> {
    return new Map([...this.session].filter(([key]) => !server || key.startsWith(`${server}/`)));
  }

  /** Adds what is not written yet to the file's totals. A failed write keeps the figures for the next one. */
  flush(lockTimeoutMs?: number): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.writing = this.writing.then(() => this.write(lockTimeoutMs));
    return this.writing;
  }

  /** At shutdown: a last write, waiting at most `lockTimeoutMs` for the lock; what it could not add is left pending. */
  async close(lockTimeoutMs: number): Promise<void> {
    await this.flush(lockTimeoutMs);
    if (this.unflushed.size === 0) return;
    const name = `${process.pid}-${Date.now()}-${randomBytes(4).toString("hex")}${PENDING_SUFFIX}`;
    try {
      await writeFileAtomic(join(pendingDir(this.path), name), JSON.stringify(Object.fromEntries(this.unflushed)));
      this.unflushed = new Map();
    } catch (error) {
      ignored(`leaving call statistics pending in ${pendingDir(this.path)}`)(error);
    }
  }

  private async write(lockTimeoutMs: number | undefined): Promise<void> {
    if (this.unflushed.size === 0) return;
    const pending = this.unflushed;
    this.unflushed = new Map();
    if (!(await mergeIntoFile(this.path, pending, lockTimeoutMs))) {
      for (const [key, stats] of pending) this.unflushed.set(key, add(this.unflushed.get(key), stats));
    }
  }
}

const PENDING_SUFFIX = ".json";

function pendingDir(path: string): string {
  return `${path}.pending`;
}

/**
 * Adds these figures, and those left pending by other sessions, to the file's totals under the cross-process lock
 * (two processes merging at once used to lose each other's calls). False when it could not be done: the caller keeps
 * the figures for the next flush.
 */
async function mergeIntoFile(path: string, figures: ReadonlyMap<string, ToolCallStats>, lockTimeoutMs?: number): Promise<boolean> {
  let merged: string[] = [];
  const reason = await updateFileLocked(
    path,
    (current) => {
      const { totals, merged: before } = parseTotals(current);
      const pending = pendingFiles(path);
      for (const [key, stats] of figures) totals.set(key, add(totals.get(key), stats));
      for (const file of pending.filter((name) => !before.has(name))) {
        for (const [key, stats] of readPending(join(pendingDir(path), file))) totals.set(key, add(totals.get(key), stats));
      }
      merged = pending;
      return JSON.stringify({ version: STATS_VERSION, tools: Object.fromEntries(totals), merged }, null, 2);
    },
    lockTimeoutMs,
  );
  if (reason !== undefined) return false;
  await Promise.all(
    merged.map((name) => rm(join(pendingDir(path), name), { force: true }).catch(ignored(`removing merged statistics ${name}`))),
  );
  return true;
}

/** The pending files now (not the temp files of ones being written). */
function pendingFiles(path: string): string[] {
  try {
    return readdirSync(pendingDir(path)).filter((name) => name.endsWith(PENDING_SUFFIX));
  } catch {
    return [];
  }
}

/** A pending file's figures; one that cannot be read counts as none (and is removed with the others). */
function readPending(file: string): Map<string, ToolCallStats> {
  try {
    return statsEntries(JSON.parse(readFileSync(file, "utf8")));
  } catch {
    return new Map();
  }
}

function add(a: ToolCallStats | undefined, b: ToolCallStats): ToolCallStats {
  if (!a) return { ...b };
  return {
    calls: a.calls + b.calls,
    errors: a.errors + b.errors,
    totalMs: a.totalMs + b.totalMs,
    maxMs: Math.max(a.maxMs, b.maxMs),
    lastCallAt: Math.max(a.lastCallAt, b.lastCallAt),
  };
}

/** The file's totals and the pending files added to them; a missing or damaged file counts as empty (it is rewritten whole). */
function parseTotals(current: string | undefined): { totals: Map<string, ToolCallStats>; merged: Set<string> } {
  const empty = { totals: new Map<string, ToolCallStats>(), merged: new Set<string>() };
  if (current === undefined) return empty;
  try {
    const data = JSON.parse(current) as { version?: unknown; tools?: unknown; merged?: unknown };
    if (data.version !== STATS_VERSION) return empty;
    const merged = Array.isArray(data.merged) ? data.merged.filter((name): name is string => typeof name === "string") : [];
    return { totals: statsEntries(data.tools), merged: new Set(merged) };
  } catch {
    return empty;
  }
}

/** The well-formed `server/tool` → figures entries of an object. */
function statsEntries(value: unknown): Map<string, ToolCallStats> {
  if (!isJsonObject(value)) return new Map();
  return new Map(Object.entries(value).filter((entry): entry is [string, ToolCallStats] => isStats(entry[1])));
}

function isStats(value: unknown): value is ToolCallStats {
  return isJsonObject(value) && ["calls", "errors", "totalMs", "maxMs", "lastCallAt"].every((field) => Number.isFinite(value[field]));
}

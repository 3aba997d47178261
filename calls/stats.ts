/**
 * Call statistics (`settings.captureStats`): per MCP tool, how often it was called, how often it failed, and how
 * long calls took. Totals accumulate across sessions in a JSON file (default `<agentDir>/mcp-stats.json`), written
 * a moment after calls (`flushDelayMs`) and at shutdown, merged under a cross-process lock. Only counts and durations are kept: never arguments or
 * results.
 */
import { join } from "node:path";
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
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.writing = this.writing.then(() => this.write());
    return this.writing;
  }

  private async write(): Promise<void> {
    if (this.unflushed.size === 0) return;
    const pending = this.unflushed;
    this.unflushed = new Map();
    if (!(await mergeIntoFile(this.path, pending))) {
      for (const [key, stats] of pending) this.unflushed.set(key, add(this.unflushed.get(key), stats));
    }
  }
}

/**
 * Adds these figures to the file's totals under the cross-process lock (two processes merging at once used to lose
 * each other's calls). False when it could not be done: the caller keeps the figures for the next flush.
 */
async function mergeIntoFile(path: string, pending: ReadonlyMap<string, ToolCallStats>): Promise<boolean> {
  const reason = await updateFileLocked(path, (current) => {
    const totals = parseTotals(current);
    for (const [key, stats] of pending) totals.set(key, add(totals.get(key), stats));
    return JSON.stringify({ version: STATS_VERSION, tools: Object.fromEntries(totals) }, null, 2);
  });
  return reason === undefined;
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

/** The file's totals; a missing or damaged file counts as empty (it is rewritten whole). */
function parseTotals(current: string | undefined): Map<string, ToolCallStats> {
  if (current === undefined) return new Map();
  try {
    const data = JSON.parse(current) as { version?: unknown; tools?: Record<string, unknown> };
    if (data.version !== STATS_VERSION || typeof data.tools !== "object" || data.tools === null) return new Map();
    return new Map(Object.entries(data.tools).filter((entry): entry is [string, ToolCallStats] => isStats(entry[1])));
  } catch {
    return new Map();
  }
}

function isStats(value: unknown): value is ToolCallStats {
  return isJsonObject(value) && ["calls", "errors", "totalMs", "maxMs", "lastCallAt"].every((field) => Number.isFinite(value[field]));
}

// The in-process cache writer: a session's listings are batched into few writes, none lost, the last per server wins.
import { mkdirSync, mkdtempSync, rmdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { acquireFileLock } from "../util/file-lock.ts";
import { getCachePath, loadMetadataCache, type WriteResult } from "../metadata-cache.ts";
import { MetadataCacheWriter } from "../tools/cache-writer.ts";

let agentDir: string | undefined;

afterEach(() => {
  if (agentDir) rmSync(agentDir, { recursive: true, force: true });
});

function entry(tool: string) {
  return { configHash: "hash", tools: [{ name: tool }], resources: [], cachedAt: Date.now() };
}

it("keeps all 76 servers listed at once in one session, and the last listing of each", async () => {
  const dir = mkdtempSync(join(tmpdir(), "mcp-cache-writer-"));
  agentDir = dir;
  const reports: WriteResult[] = [];
  const writer = new MetadataCacheWriter(dir, (result) => reports.push(result));
  const names = Array.from({ length: 76 }, (_, i) => `server-${i}`);
  for (const name of names) writer.queue(name, entry("old"));
  for (const name of names) writer.queue(name, entry("new"));
  await writer.flush();

  expect(reports).toEqual([]);
  const snapshot = loadMetadataCache(dir);
  expect([...snapshot.servers.keys()].sort()).toEqual([...names].sort());
  for (const name of names) expect(snapshot.servers.get(name)?.tools.map((tool) => tool.name)).toEqual(["new"]);
});

it("keeps entries of a write that could not be done and reports only after the retries", async () => {
  // An agent directory that cannot be created (a NUL byte in its path): every attempt fails.
  const dir = mkdtempSync(join(tmpdir(), "mcp-cache-writer-"));
  agentDir = dir;
  const reports: WriteResult[] = [];
  const writer = new MetadataCacheWriter(join(dir, "missing", "\0bad"), (result) => reports.push(result));
  writer.queue("a", entry("x"));
  await writer.flush();
  expect(reports).toHaveLength(1);
  expect(reports[0]?.written).toBe(false);
});

it("reports a write it gives up on once, until a write succeeds again", async () => {
  const dir = mkdtempSync(join(tmpdir(), "mcp-cache-writer-"));
  agentDir = dir;
  const reports: WriteResult[] = [];
  const writer = new MetadataCacheWriter(dir, (result) => reports.push(result));
  // A directory in the cache file's place: every write fails (EISDIR), even for root.
  mkdirSync(getCachePath(dir));
  writer.queue("a", entry("x"));
  await writer.flush();
  writer.queue("b", entry("y"));
  await writer.flush();
  expect(reports.map((report) => report.written)).toEqual([false]);

  rmdirSync(getCachePath(dir));
  writer.queue("c", entry("z"));
  await writer.flush();
  rmSync(getCachePath(dir));
  mkdirSync(getCachePath(dir));
  writer.queue("d", entry("w"));
  await writer.flush();
  expect(reports.map((report) => report.written)).toEqual([false, false]);
});

it("a bounded flush returns while another process holds the lock, and the entry is written once it is released", async () => {
  const dir = mkdtempSync(join(tmpdir(), "mcp-cache-writer-"));
  agentDir = dir;
  const release = await acquireFileLock(getCachePath(dir), 1_000, () => undefined);
  if (typeof release === "string") throw new Error(release);
  const writer = new MetadataCacheWriter(dir, () => undefined);
  writer.queue("a", entry("x"));
  await writer.flush(50);
  expect(loadMetadataCache(dir).servers.has("a")).toBe(false);
  await release();
  await writer.flush();
  expect(loadMetadataCache(dir).servers.has("a")).toBe(true);
});

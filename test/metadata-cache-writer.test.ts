// The in-process cache writer: a session's listings are batched into few writes, none lost, the last per server wins.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { acquireFileLock } from "../util/file-lock.ts";
import { CACHE_JOURNAL_DIR_NAME, getCachePath, loadMetadataCache, type WriteResult } from "../metadata-cache.ts";
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

it("reports a batch the journal cannot take once, until a write succeeds again", async () => {
  const dir = mkdtempSync(join(tmpdir(), "mcp-cache-writer-"));
  agentDir = dir;
  const reports: WriteResult[] = [];
  const writer = new MetadataCacheWriter(dir, (result) => reports.push(result));
  const journal = join(dir, CACHE_JOURNAL_DIR_NAME);
  // A file in the journal directory's place: every journal write fails, even for root.
  writeFileSync(journal, "");
  writer.queue("a", entry("x"));
  await writer.flush();
  writer.queue("b", entry("y"));
  await writer.flush();
  expect(reports.map((report) => report.written)).toEqual([false]);

  rmSync(journal);
  writer.queue("c", entry("z"));
  await writer.flush();
  rmSync(journal, { recursive: true, force: true }); // merged: gone already
  writeFileSync(journal, "");
  writer.queue("d", entry("w"));
  await writer.flush();
  expect(reports.map((report) => report.written)).toEqual([false, false]);
});

it("does not report a cache file it cannot replace: the entries are in the journal, and readers get them", async () => {
  const dir = mkdtempSync(join(tmpdir(), "mcp-cache-writer-"));
  agentDir = dir;
  const reports: WriteResult[] = [];
  const writer = new MetadataCacheWriter(dir, (result) => reports.push(result));
  // A directory in the cache file's place: the merge fails (EISDIR), even for root.
  mkdirSync(getCachePath(dir));
  writer.queue("a", entry("x"));
  await writer.flush();
  expect(reports).toEqual([]);
  const snapshot = loadMetadataCache(dir);
  expect(snapshot.servers.get("a")?.tools).toEqual([{ name: "x" }]);
  expect(snapshot.problems).toEqual([expect.stringMatching(/cannot be read/)]);
});

it("a bounded flush returns while another process holds the lock: the entry is read from the journal at once, and merged into the file once the lock is released", async () => {
  const dir = mkdtempSync(join(tmpdir(), "mcp-cache-writer-"));
  agentDir = dir;
  const release = await acquireFileLock(getCachePath(dir), 1_000, () => undefined);
  if (typeof release === "string") throw new Error(release);
  const writer = new MetadataCacheWriter(dir, () => undefined);
  writer.queue("a", entry("x"));
  await writer.stored();
  await writer.flush(50);
  expect(existsSync(getCachePath(dir))).toBe(false);
  expect(loadMetadataCache(dir).servers.get("a")?.tools).toEqual([{ name: "x" }]);
  await release();
  await writer.flush();
  expect(Object.keys(JSON.parse(readFileSync(getCachePath(dir), "utf8")).servers)).toEqual(["a"]);
});

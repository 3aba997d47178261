// Ten real processes write the same cache file at once, each its own server, twenty rounds each.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterEach, expect, it } from "vitest";
import { getCachePath, loadMetadataCache, writeServerEntries } from "../metadata-cache.ts";
import { acquireFileLock } from "../util/file-lock.ts";

const WRITER = fileURLToPath(new URL("./fixtures/cache-writer.mjs", import.meta.url));
const SESSION_END = fileURLToPath(new URL("./fixtures/cache-session-end.mjs", import.meta.url));
const WRITERS = 10;
const ROUNDS = 20;

interface Writer {
  child: ChildProcess;
  lines: string[];
  ready: Promise<void>;
  exited: Promise<number | null>;
}

const started: ChildProcess[] = [];
let agentDir: string | undefined;

afterEach(() => {
  for (const child of started.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
  if (agentDir) rmSync(agentDir, { recursive: true, force: true });
});

function startWriter(dir: string, serverName: string): Writer {
  const child = spawn(process.execPath, [WRITER, dir, serverName, String(ROUNDS)], { stdio: ["pipe", "pipe", "inherit"] });
  started.push(child);
  const lines: string[] = [];
  const output = createInterface({ input: child.stdout! });
  const ready = new Promise<void>((resolve) => {
    output.on("line", (line) => (line === "ready" ? resolve() : lines.push(line)));
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, lines, ready, exited };
}

it("keeps every server's latest entry when 10 processes write 20 rounds each", async () => {
  const dir = mkdtempSync(join(tmpdir(), "mcp-cache-concurrency-"));
  agentDir = dir;
  // Untrusted-looking names on purpose: they must stay JSON keys.
  const names = Array.from({ length: WRITERS }, (_, i) => (i === 0 ? "__proto__" : `server-${i}`));
  const writers = names.map((name) => startWriter(dir, name));
  await Promise.all(writers.map((writer) => writer.ready));
  for (const writer of writers) writer.child.stdin!.end("go\n");
  const codes = await Promise.all(writers.map((writer) => writer.exited));
  expect(codes).toEqual(names.map(() => 0));

  for (const writer of writers) {
    const results = writer.lines.map((line) => JSON.parse(line));
    expect(results).toHaveLength(ROUNDS);
    expect(results.filter((result) => !result.written)).toEqual([]);
  }
  const file = JSON.parse(readFileSync(getCachePath(dir), "utf8"));
  expect(Object.keys(file.servers).sort()).toEqual([...names].sort());
  const snapshot = loadMetadataCache(dir);
  expect(snapshot.problems).toEqual([]);
  for (const name of names) {
    expect(snapshot.servers.get(name)).toEqual({
      configHash: `hash-of-${name}`,
      tools: [{ name: `tool-${ROUNDS - 1}`, description: `written by ${name} in round ${ROUNDS - 1}` }],
      resources: [],
      cachedAt: ROUNDS - 1,
    });
  }
  expect(readdirSync(dir)).toEqual(["mcp-cache.json"]);
});

it("a session that ends while another process holds the lock longer than its shutdown waits still leaves its listing in the cache", async () => {
  const dir = mkdtempSync(join(tmpdir(), "mcp-cache-concurrency-"));
  agentDir = dir;
  const release = await acquireFileLock(getCachePath(dir), 1_000, () => undefined);
  if (typeof release === "string") throw new Error(release);
  try {
    const child = spawn(process.execPath, [SESSION_END, dir, "ended-early", "200"], { stdio: ["ignore", "pipe", "inherit"] });
    started.push(child);
    let stdout = "";
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    expect({ code, stdout }).toEqual({ code: 0, stdout: "exiting\n" });
    // Readers see it at once, though the cache file could not be rewritten.
    expect(loadMetadataCache(dir).servers.get("ended-early")?.tools).toEqual([{ name: "listed" }]);
  } finally {
    await release();
  }
  // The next write (any process's) takes it into the cache file itself.
  expect((await writeServerEntries(dir, {})).written).toBe(true);
  expect(Object.keys(JSON.parse(readFileSync(getCachePath(dir), "utf8")).servers)).toEqual(["ended-early"]);
  expect(readdirSync(dir).filter((name) => name !== "mcp-cache-journal")).toEqual(["mcp-cache.json"]);
  expect(loadMetadataCache(dir).servers.get("ended-early")?.tools).toEqual([{ name: "listed" }]);
});

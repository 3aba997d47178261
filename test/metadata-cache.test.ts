import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  CACHE_JOURNAL_DIR_NAME,
  CACHE_MAX_AGE_MS,
  CACHE_VERSION,
  computeServerHash,
  createCacheEntry,
  getCachePath,
  getValidEntry,
  hasJournalEntries,
  journalServerEntries,
  loadMetadataCache,
  writeServerEntries,
  type CachedServerEntry,
} from "../metadata-cache.ts";
import type { ServerDefinition } from "../types.ts";

let agentDir: string;
beforeEach(() => {
  agentDir = mkdtempSync(join(tmpdir(), "mcp-cache-test-"));
});
afterEach(() => {
  rmSync(agentDir, { recursive: true, force: true });
});

function server(name: string, extra: Partial<ServerDefinition> = {}): ServerDefinition {
  return { name, command: "npx", args: ["-y", `${name}-mcp`], source: { kind: "user", path: "/u/.pi/agent/mcp.json" }, ...extra };
}

function entryFor(def: ServerDefinition, toolName = "search", cachedAt = Date.now()): CachedServerEntry {
  return createCacheEntry(def, [{ name: toolName, description: "d", inputSchema: { type: "object", properties: {} } }], [], cachedAt);
}

function readFileJson(): any {
  return JSON.parse(readFileSync(getCachePath(agentDir), "utf8"));
}

describe("computeServerHash", () => {
  const base = server("gh", {
    env: { A: "1", B: "2" },
    headers: { X: "y" },
    url: undefined,
    excludeTools: ["a"],
  });

  it("does not depend on key order", () => {
    const reordered = { ...base, env: { B: "2", A: "1" } };
    expect(computeServerHash(reordered)).toBe(computeServerHash(base));
  });

  it("ignores behaviour-only fields, the name and the source", () => {
    const tuned = {
      ...base,
      name: "other",
      source: { kind: "project" as const, path: "/p/.pi/mcp.json" },
      lifecycle: "keep-alive" as const,
      idleTimeout: 3,
      debug: true,
      directTools: true,
      startupTimeoutMs: 5,
      enabled: false,
    };
    expect(computeServerHash(tuned)).toBe(computeServerHash(base));
  });

  it.each([
    ["command", { command: "node" }],
    ["args", { args: ["-y", "other"] }],
    ["env", { env: { A: "1", B: "3" } }],
    ["cwd", { cwd: "/tmp" }],
    ["url", { url: "http://127.0.0.1:1/mcp" }],
    ["headers", { headers: { X: "z" } }],
    ["transport", { transport: "sse" as const }],
    ["auth", { auth: "bearer" as const }],
    ["bearerToken", { bearerToken: "t" }],
    ["bearerTokenEnv", { bearerTokenEnv: "TOKEN" }],
    ["exposeResources", { exposeResources: false }],
    ["excludeTools", { excludeTools: ["b"] }],
  ])("changes with %s", (_field, change) => {
    expect(computeServerHash({ ...base, ...change })).not.toBe(computeServerHash(base));
  });

  it("is a SHA-256 hex digest", () => {
    expect(computeServerHash(base)).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe("writeServerEntries and loadMetadataCache", () => {
  it("round-trips entries with the original tool names (a toolPrefix change cannot invalidate them) and provider-safe schemas", async () => {
    const def = server("my-server");
    const entry = createCacheEntry(
      def,
      [{ name: "do.thing/x", title: "T", description: "D", inputSchema: { type: "object" }, annotations: { readOnlyHint: true } } as any],
      [{ uri: "r://1", name: "one", mimeType: "text/plain", _meta: { x: 1 } } as any],
      1000,
    );
    const result = await writeServerEntries(join(agentDir, "nested", "dir"), { "my-server": entry });
    expect(result).toEqual({ written: true, path: join(agentDir, "nested", "dir", "mcp-cache.json"), rejected: [] });

    const snapshot = loadMetadataCache(join(agentDir, "nested", "dir"));
    expect(snapshot.problems).toEqual([]);
    expect(snapshot.servers.get("my-server")).toEqual({
      configHash: computeServerHash(def),
      tools: [{ name: "do.thing/x", title: "T", description: "D", inputSchema: { type: "object", properties: {} } }],
      resources: [{ uri: "r://1", name: "one", mimeType: "text/plain" }],
      resourceTemplates: [],
      prompts: [],
      cachedAt: 1000,
    });
  });

  it("round-trips a tool's output schema (what a Pi 1.x codemode script's call resolves to), and drops one that is not an object", async () => {
    const def = server("weather");
    const outputSchema = { type: "object", properties: { temperature: { type: "number" } }, required: ["temperature"] };
    const tools = [
      { name: "now", inputSchema: { type: "object" }, outputSchema },
      { name: "odd", inputSchema: { type: "object" }, outputSchema: "not a schema" as any },
    ];
    await writeServerEntries(agentDir, { weather: createCacheEntry(def, tools, [], 1000) });
    const [now, odd] = loadMetadataCache(agentDir).servers.get("weather")!.tools;
    expect(now).toEqual({ name: "now", inputSchema: { type: "object", properties: {} }, outputSchema });
    expect(odd).toEqual({ name: "odd", inputSchema: { type: "object", properties: {} } });
  });

  it("round-trips the protocol the server spoke and until when its lists are valid; drops an entry whose are malformed", async () => {
    const modern = {
      era: "modern" as const,
      version: "2026-07-28",
      discover: { supportedVersions: ["2026-07-28"], capabilities: {} } as any,
      checkedAt: 5,
    };
    const extras = { resourceTemplates: [], prompts: [], instructions: undefined, protocol: modern, freshUntil: { tools: 61_000 } };
    await writeServerEntries(agentDir, { fresh: createCacheEntry(server("fresh"), [], [], 1000, extras) });
    expect(loadMetadataCache(agentDir).servers.get("fresh")).toMatchObject({ protocol: modern, freshUntil: { tools: 61_000 } });

    const path = getCachePath(agentDir);
    const file = JSON.parse(readFileSync(path, "utf8"));
    file.servers.oldEra = { ...file.servers.fresh, protocol: { era: "modern", version: "2026-07-28", checkedAt: 5 } };
    file.servers.odd = { ...file.servers.fresh, freshUntil: { tools: "soon" } };
    writeFileSync(path, JSON.stringify(file));
    const snapshot = loadMetadataCache(agentDir);
    expect([...snapshot.servers.keys()]).toEqual(["fresh"]);
    expect(snapshot.problems).toHaveLength(2);
  });

  it("round-trips resource templates, prompts and instructions (cut to 1,000 characters)", async () => {
    const def = server("fx");
    const extras = {
      resourceTemplates: [{ uriTemplate: "note://{id}", name: "note", _meta: {} } as any],
      prompts: [{ name: "greet", description: "Greets", arguments: [{ name: "name", required: true, extra: 1 } as any, { name: "tone" }] }],
      instructions: `  ${"x".repeat(1_500)}  `,
    };
    await writeServerEntries(agentDir, { fx: createCacheEntry(def, [], [], 1000, extras) });
    const entry = loadMetadataCache(agentDir).servers.get("fx")!;
    expect(entry.resourceTemplates).toEqual([{ uriTemplate: "note://{id}", name: "note" }]);
    expect(entry.prompts).toEqual([
      { name: "greet", description: "Greets", arguments: [{ name: "name", required: true }, { name: "tone" }] },
    ]);
    expect(entry.instructions).toBe(`${"x".repeat(999)}…`);
  });

  it("reads a version-2 file (its entries' prompts unknown) and writes the current version, keeping the other servers' entries", async () => {
    const old = { configHash: "h", tools: [{ name: "t" }], resources: [], cachedAt: 5 };
    writeFileSync(getCachePath(agentDir), JSON.stringify({ version: 2, servers: { old, other: old } }));
    const snapshot = loadMetadataCache(agentDir);
    expect(snapshot.problems).toEqual([]);
    expect(snapshot.servers.get("old")).toEqual(old);
    expect(snapshot.servers.get("old")!.prompts).toBeUndefined();
    await writeServerEntries(agentDir, { old: { ...old, prompts: [] } });
    expect(readFileJson().version).toBe(CACHE_VERSION);
    expect(loadMetadataCache(agentDir).servers.get("other")).toEqual(old);
    expect(loadMetadataCache(agentDir).servers.get("old")!.prompts).toEqual([]);
  });

  it("reads a version-3 file with its entries' prompts dropped: listed again, they learn each tool's task support and view", () => {
    const listed = { configHash: "h", tools: [{ name: "t" }], resources: [], prompts: [{ name: "p" }], cachedAt: 5 };
    writeFileSync(getCachePath(agentDir), JSON.stringify({ version: 3, servers: { listed } }));
    const snapshot = loadMetadataCache(agentDir);
    expect(snapshot.problems).toEqual([]);
    expect(snapshot.servers.get("listed")!.tools).toEqual([{ name: "t" }]);
    expect(snapshot.servers.get("listed")!.prompts).toBeUndefined();
  });

  it("changes only the servers written and keeps every other server's entry", async () => {
    const a = server("a");
    const b = server("b");
    await writeServerEntries(agentDir, { a: entryFor(a, "first"), b: entryFor(b, "first") });
    await writeServerEntries(agentDir, new Map([["a", entryFor(a, "second")]]));
    const snapshot = loadMetadataCache(agentDir);
    expect(snapshot.servers.get("a")?.tools[0].name).toBe("second");
    expect(snapshot.servers.get("b")?.tools[0].name).toBe("first");
    expect(readFileJson().version).toBe(CACHE_VERSION);
  });

  it("keeps all entries when one process writes several servers at once", async () => {
    const names = ["s1", "s2", "s3", "s4", "s5"];
    const results = await Promise.all(names.map((name) => writeServerEntries(agentDir, { [name]: entryFor(server(name)) })));
    expect(results.every((result) => result.written)).toBe(true);
    expect([...loadMetadataCache(agentDir).servers.keys()].sort()).toEqual(names);
  });

  it("writes the file with mode 0600 (even over a wider one) and leaves no temp or lock files", async () => {
    writeFileSync(getCachePath(agentDir), JSON.stringify({ version: CACHE_VERSION, servers: {} }), { mode: 0o644 });
    await writeServerEntries(agentDir, { a: entryFor(server("a")) });
    await writeServerEntries(agentDir, { b: entryFor(server("b")) });
    expect(statSync(getCachePath(agentDir)).mode & 0o777).toBe(0o600);
    expect(readdirSync(agentDir)).toEqual(["mcp-cache.json"]);
  });

  it("stores only a hash of the config, never its secrets", async () => {
    const def = server("secretive", {
      env: { API_KEY: "sk-live-ENV-SECRET" },
      headers: { Authorization: "Bearer HEADER-SECRET" },
      bearerToken: "TOKEN-SECRET",
      url: "https://user:URL-SECRET@example.com/mcp",
    });
    await writeServerEntries(agentDir, { secretive: entryFor(def) });
    const text = readFileSync(getCachePath(agentDir), "utf8");
    for (const secret of ["ENV-SECRET", "HEADER-SECRET", "TOKEN-SECRET", "URL-SECRET", "API_KEY", "Authorization"]) {
      expect(text).not.toContain(secret);
    }
    expect(getValidEntry(loadMetadataCache(agentDir), def)).toBeDefined();
  });

  it("treats server names as JSON keys only", async () => {
    const names = ["__proto__", "constructor", "../../escape", "a/b\\c", "名前"];
    const entries = Object.fromEntries(names.map((name) => [name, entryFor(server("x"), name)]));
    const result = await writeServerEntries(agentDir, entries);
    expect(result.written).toBe(true);
    const snapshot = loadMetadataCache(agentDir);
    for (const name of names) expect(snapshot.servers.get(name)?.tools[0].name).toBe(name);
    expect(readdirSync(agentDir)).toEqual(["mcp-cache.json"]);
    expect(Object.getPrototypeOf(readFileJson().servers)).toBe(Object.prototype);
  });

  it("rejects a malformed entry and writes the others", async () => {
    const bad = { configHash: "h", tools: [{ description: "no name" }], resources: [], cachedAt: 1 } as unknown as CachedServerEntry;
    const result = await writeServerEntries(agentDir, { good: entryFor(server("good")), bad });
    expect(result).toMatchObject({ written: true, rejected: ["bad"] });
    expect([...loadMetadataCache(agentDir).servers.keys()]).toEqual(["good"]);
  });

  it("returns no entries and no problem when there is no file", () => {
    expect(loadMetadataCache(agentDir)).toEqual({ path: getCachePath(agentDir), servers: new Map(), problems: [] });
  });
});

describe("a damaged cache file is ignored, then rebuilt", () => {
  const valid = () => JSON.stringify({ version: CACHE_VERSION, servers: { old: entryFor(server("old")) } });
  const cases: Array<[string, () => string, RegExp]> = [
    ["truncated", () => valid().slice(0, 40), /not valid JSON/],
    ["garbage", () => "\u0000\u00ff binary \ud800 garbage", /not valid JSON/],
    ["empty", () => "", /not valid JSON/],
    ["foreign-shaped (array)", () => "[1,2,3]", /not a metadata cache/],
    ["foreign-shaped (servers is a list)", () => JSON.stringify({ version: CACHE_VERSION, servers: [] }), /not a metadata cache/],
    ["wrong version", () => JSON.stringify({ version: 1, servers: {} }), new RegExp(`cache version 1, expected ${CACHE_VERSION}`)],
    [
      "future version",
      () => JSON.stringify({ version: CACHE_VERSION + 1, servers: { old: entryFor(server("old")) } }),
      new RegExp(`cache version ${CACHE_VERSION + 1}, expected ${CACHE_VERSION}`),
    ],
    ["versionless", () => JSON.stringify({ servers: {} }), new RegExp(`cache version none, expected ${CACHE_VERSION}`)],
  ];

  it.each(cases)("%s", async (_label, content, problem) => {
    writeFileSync(getCachePath(agentDir), content());
    const snapshot = loadMetadataCache(agentDir);
    expect(snapshot.servers.size).toBe(0);
    expect(snapshot.problems).toHaveLength(1);
    expect(snapshot.problems[0]).toMatch(problem);
    expect(snapshot.problems[0]).toContain(getCachePath(agentDir));

    const result = await writeServerEntries(agentDir, { fresh: entryFor(server("fresh")) });
    expect(result.written).toBe(true);
    const rebuilt = loadMetadataCache(agentDir);
    expect(rebuilt.problems).toEqual([]);
    expect([...rebuilt.servers.keys()]).toEqual(["fresh"]);
  });

  it("keeps the valid entries of a file with some malformed ones", async () => {
    const good = entryFor(server("good"));
    writeFileSync(
      getCachePath(agentDir),
      JSON.stringify({
        version: CACHE_VERSION,
        servers: {
          good,
          noHash: { ...good, configHash: 5 },
          noTools: { ...good, tools: "none" },
          badTool: { ...good, tools: [{ name: 1 }] },
          badResource: { ...good, resources: [{ uri: "x://" }] },
          badDate: { ...good, cachedAt: "yesterday" },
          nothing: null,
        },
      }),
    );
    const snapshot = loadMetadataCache(agentDir);
    expect([...snapshot.servers.keys()]).toEqual(["good"]);
    expect(snapshot.problems).toHaveLength(6);
    expect(snapshot.problems[0]).toMatch(/malformed entry for server "noHash"/);

    await writeServerEntries(agentDir, { other: entryFor(server("other")) });
    expect([...loadMetadataCache(agentDir).servers.keys()]).toEqual(["good", "other"]);
  });

  it("accepts an entry written without resources", () => {
    const { resources: _none, ...withoutResources } = entryFor(server("a"));
    writeFileSync(getCachePath(agentDir), JSON.stringify({ version: CACHE_VERSION, servers: { a: withoutResources } }));
    expect(loadMetadataCache(agentDir).servers.get("a")?.resources).toEqual([]);
  });

  it.skipIf(process.getuid?.() === 0)("an unreadable file (chmod 000; root bypasses permissions)", async () => {
    writeFileSync(getCachePath(agentDir), valid());
    chmodSync(getCachePath(agentDir), 0o000);
    const snapshot = loadMetadataCache(agentDir);
    expect(snapshot.servers.size).toBe(0);
    expect(snapshot.problems[0]).toMatch(/cannot be read/);
    expect((await writeServerEntries(agentDir, { fresh: entryFor(server("fresh")) })).written).toBe(true);
    expect([...loadMetadataCache(agentDir).servers.keys()]).toEqual(["fresh"]);
  });

  it("a path that cannot be read as a file (a directory), even as root", async () => {
    mkdirSync(getCachePath(agentDir));
    const snapshot = loadMetadataCache(agentDir);
    expect(snapshot.servers.size).toBe(0);
    expect(snapshot.problems[0]).toMatch(/cannot be read/);
    const result = await writeServerEntries(agentDir, { fresh: entryFor(server("fresh")) });
    expect(result).toMatchObject({ written: false, reason: expect.stringMatching(/cannot write/) });
    expect(readdirSync(agentDir)).toEqual(["mcp-cache.json"]);
  });
});

describe("getValidEntry", () => {
  const def = server("gh");
  const now = 1_700_000_000_000;
  const snapshotWith = (entry: CachedServerEntry) => ({ path: "p", servers: new Map([["gh", entry]]), problems: [] });

  it("accepts an entry up to 7 days old and refuses it after", () => {
    expect(getValidEntry(snapshotWith(entryFor(def, "t", now - CACHE_MAX_AGE_MS)), def, now)).toBeDefined();
    expect(getValidEntry(snapshotWith(entryFor(def, "t", now - CACHE_MAX_AGE_MS - 1)), def, now)).toBeUndefined();
  });

  it("refuses an entry dated in the future, of another config, or of another server", () => {
    expect(getValidEntry(snapshotWith(entryFor(def, "t", now + 60_000)), def, now)).toBeUndefined();
    expect(getValidEntry(snapshotWith(entryFor(def, "t", now)), { ...def, args: ["other"] }, now)).toBeUndefined();
    expect(getValidEntry(snapshotWith(entryFor(def, "t", now)), { ...def, name: "gl" }, now)).toBeUndefined();
  });

  it("stays valid when only behaviour settings change", () => {
    const entry = entryFor(def, "t", now);
    expect(getValidEntry(snapshotWith(entry), { ...def, lifecycle: "eager", idleTimeout: 0, directTools: ["t"] }, now)).toBe(entry);
  });
});

describe("the write lock", () => {
  const lockPath = () => `${getCachePath(agentDir)}.lock`;

  it("skips the write and says so when another process holds the lock too long", async () => {
    await writeServerEntries(agentDir, { a: entryFor(server("a"), "before") });
    mkdirSync(lockPath());
    const result = await writeServerEntries(agentDir, { a: entryFor(server("a"), "after") }, { lockTimeoutMs: 200 });
    expect(result).toMatchObject({ written: false, reason: expect.stringMatching(/stayed locked by another process/) });
    expect(loadMetadataCache(agentDir).servers.get("a")?.tools[0].name).toBe("before");
    expect(readdirSync(agentDir).sort()).toEqual(["mcp-cache.json", "mcp-cache.json.lock"]);
  });

  it("takes over a lock left by a crashed process", async () => {
    mkdirSync(lockPath());
    const longAgo = new Date(Date.now() - 60_000);
    utimesSync(lockPath(), longAgo, longAgo);
    const result = await writeServerEntries(agentDir, { a: entryFor(server("a")) }, { lockTimeoutMs: 2_000 });
    expect(result.written).toBe(true);
    expect(readdirSync(agentDir)).toEqual(["mcp-cache.json"]);
  });
});

describe("the journal (entries written without the lock)", () => {
  const journalFiles = () => readdirSync(join(agentDir, CACHE_JOURNAL_DIR_NAME)).sort();
  /** As if every journal file had been written two minutes ago. */
  const ageJournal = () => {
    const then = new Date(Date.now() - 120_000);
    for (const name of journalFiles()) utimesSync(join(agentDir, CACHE_JOURNAL_DIR_NAME, name), then, then);
  };

  it("is read with the file at once, the later listing of a server winning, and merged into the file (then removed) by the next write", async () => {
    await writeServerEntries(agentDir, { a: entryFor(server("a"), "old", 1_000), b: entryFor(server("b"), "kept", 1_000) });
    expect(
      (await journalServerEntries(agentDir, { a: entryFor(server("a"), "new", 2_000), c: entryFor(server("c"), "c", 1_000) })).written,
    ).toBe(true);
    // An older listing journaled later does not undo a newer one in the file.
    expect((await journalServerEntries(agentDir, { b: entryFor(server("b"), "older", 500) })).written).toBe(true);
    expect(journalFiles()).toHaveLength(2);
    const toolsOf = (snapshot: ReturnType<typeof loadMetadataCache>) =>
      Object.fromEntries([...snapshot.servers].map(([name, entry]) => [name, entry.tools.map((tool) => tool.name)]));
    expect(toolsOf(loadMetadataCache(agentDir))).toEqual({ a: ["new"], b: ["kept"], c: ["c"] });
    expect(hasJournalEntries(agentDir)).toBe(true);

    expect((await writeServerEntries(agentDir, {})).written).toBe(true);
    expect(Object.keys(readFileJson().servers)).toEqual(["a", "b", "c"]);
    expect(toolsOf(loadMetadataCache(agentDir))).toEqual({ a: ["new"], b: ["kept"], c: ["c"] });
    expect(readdirSync(agentDir)).toEqual(["mcp-cache.json"]);
    expect(hasJournalEntries(agentDir)).toBe(false);
  });

  it("after the lock was taken over from a stalled holder, keeps merged journal files a minute (that holder may still overwrite the merge)", async () => {
    await journalServerEntries(agentDir, { a: entryFor(server("a")) });
    // A lock its holder stopped refreshing: taken over.
    const lock = `${getCachePath(agentDir)}.lock`;
    mkdirSync(lock);
    const longAgo = new Date(Date.now() - 60_000);
    utimesSync(lock, longAgo, longAgo);
    expect((await writeServerEntries(agentDir, {})).written).toBe(true);
    // Overwritten by a writer that read the file before the merge: the journal brings the entry back.
    writeFileSync(getCachePath(agentDir), JSON.stringify({ version: CACHE_VERSION, servers: {} }));
    expect([...loadMetadataCache(agentDir).servers.keys()]).toEqual(["a"]);
    expect((await writeServerEntries(agentDir, {})).written).toBe(true);
    expect(Object.keys(readFileJson().servers)).toEqual(["a"]);
    expect(journalFiles().filter((name) => name.endsWith(".json"))).toHaveLength(1);
    ageJournal();
    expect((await writeServerEntries(agentDir, {})).written).toBe(true);
    expect(readdirSync(agentDir)).toEqual(["mcp-cache.json"]);
    expect(hasJournalEntries(agentDir)).toBe(false);
    expect(Object.keys(readFileJson().servers)).toEqual(["a"]);
  });

  it("ignores a journal file that is not ours, and removes it with the others", async () => {
    await journalServerEntries(agentDir, { a: entryFor(server("a")) });
    writeFileSync(join(agentDir, CACHE_JOURNAL_DIR_NAME, "broken.json"), "{ half");
    expect([...loadMetadataCache(agentDir).servers.keys()]).toEqual(["a"]);
    expect((await writeServerEntries(agentDir, {})).written).toBe(true);
    expect(readdirSync(agentDir)).toEqual(["mcp-cache.json"]);
    expect([...loadMetadataCache(agentDir).servers.keys()]).toEqual(["a"]);
  });

  it("a write with nothing to merge leaves the file as it is", async () => {
    await writeServerEntries(agentDir, { a: entryFor(server("a")) });
    const before = statSync(getCachePath(agentDir)).ino;
    expect((await writeServerEntries(agentDir, {})).written).toBe(true);
    expect(statSync(getCachePath(agentDir)).ino).toBe(before);
  });
});

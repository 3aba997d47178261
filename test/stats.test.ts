import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { createCallStats, STATS_FILE_NAME } from "../calls/stats.ts";
import { acquireFileLock } from "../util/file-lock.ts";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcp-stats-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const readStats = async (path: string) => JSON.parse(await readFile(path, "utf8"));

describe("call statistics", () => {
  test("off unless captureStats is set; default file in the agent dir, or the given path", () => {
    expect(createCallStats({}, dir)).toBeUndefined();
    expect(createCallStats({ captureStats: true }, dir)?.path).toBe(join(dir, STATS_FILE_NAME));
    expect(createCallStats({ captureStats: { path: join(dir, "x.json") } }, dir)?.path).toBe(join(dir, "x.json"));
  });

  test("totals accumulate across sessions; the file is private and holds only counts", async () => {
    const first = createCallStats({ captureStats: true }, dir)!;
    first.record("srv", "echo", 10, true);
    first.record("srv", "echo", 30, false);
    await first.flush();
    const second = createCallStats({ captureStats: true }, dir)!;
    second.record("srv", "echo", 20, true);
    second.record("other", "get", 5, true);
    await second.flush();
    await second.flush(); // nothing new: no change

    const file = await readStats(first.path);
    expect(file.tools["srv/echo"]).toMatchObject({ calls: 3, errors: 1, totalMs: 60, maxMs: 30 });
    expect(file.tools["other/get"]).toMatchObject({ calls: 1, errors: 0 });
    expect((await stat(first.path)).mode & 0o777).toBe(0o600);
    expect([...second.sessionStats("srv").keys()]).toEqual(["srv/echo"]);
    expect(second.sessionStats("srv").get("srv/echo")?.calls).toBe(1);
  });

  test("a damaged file is replaced, not a crash", async () => {
    const path = join(dir, STATS_FILE_NAME);
    await writeFile(path, "{ not json");
    const stats = createCallStats({ captureStats: true }, dir)!;
    stats.record("srv", "echo", 1, true);
    await stats.flush();
    expect((await readStats(path)).tools["srv/echo"].calls).toBe(1);
  });

  test("writes by itself a moment after calls", async () => {
    const stats = createCallStats({ captureStats: { flushDelayMs: 10 } }, dir)!;
    stats.record("srv", "echo", 1, true);
    await expect
      .poll(() => readStats(stats.path).catch(() => undefined), { timeout: 5_000 })
      .toMatchObject({ tools: { "srv/echo": { calls: 1 } } });
  });

  test("two trackers writing one file at once (as two Pi processes do) lose no call", async () => {
    const trackers = [0, 1].map(() => createCallStats({ captureStats: true }, dir)!);
    await Promise.all(
      trackers.map(async (tracker, index) => {
        for (let call = 0; call < 300; call++) {
          tracker.record(`server-${index}`, "tool", 1, true);
          void tracker.flush();
          if (call % 10 === 0) await new Promise((resolve) => setImmediate(resolve));
        }
        await tracker.flush();
      }),
    );
    const { tools } = await readStats(join(dir, STATS_FILE_NAME));
    expect(tools["server-0/tool"].calls + tools["server-1/tool"].calls).toBe(600);
  });

  test("a session ending while another process holds the lock leaves its figures pending; the next write adds them once", async () => {
    const path = join(dir, STATS_FILE_NAME);
    const release = await acquireFileLock(path, 1_000, () => {});
    if (typeof release === "string") throw new Error(release);
    const ending = createCallStats({ captureStats: true }, dir)!;
    ending.record("srv", "echo", 10, true);
    ending.record("srv", "echo", 20, false);
    await ending.close(200);
    await release();
    expect(await readdir(`${path}.pending`)).toHaveLength(1);
    await expect(readFile(path)).rejects.toThrow(); // nothing merged yet

    const next = createCallStats({ captureStats: true }, dir)!;
    next.record("srv", "echo", 5, true);
    await next.flush();
    expect((await readStats(path)).tools["srv/echo"]).toMatchObject({ calls: 3, errors: 1, totalMs: 35 });
    expect(await readdir(`${path}.pending`)).toEqual([]);
    next.record("srv", "echo", 5, true);
    await next.flush();
    expect((await readStats(path)).tools["srv/echo"].calls).toBe(4);
  });

  test("a pending file already added (a crash before its removal) is not counted again, and then removed", async () => {
    const path = join(dir, STATS_FILE_NAME);
    const figures = { "srv/echo": { calls: 2, errors: 0, totalMs: 4, maxMs: 2, lastCallAt: 1 } };
    await mkdir(`${path}.pending`);
    await writeFile(join(`${path}.pending`, "1-2-ab.json"), JSON.stringify(figures));
    await writeFile(path, JSON.stringify({ version: 1, tools: figures, merged: ["1-2-ab.json"] }));
    const stats = createCallStats({ captureStats: true }, dir)!;
    stats.record("srv", "echo", 1, true);
    await stats.flush();
    expect((await readStats(path)).tools["srv/echo"].calls).toBe(3);
    expect(await readdir(`${path}.pending`)).toEqual([]);
    stats.record("srv", "echo", 1, true);
    await stats.flush();
    expect(await readStats(path)).toMatchObject({ tools: { "srv/echo": { calls: 4 } }, merged: [] });
  });
});

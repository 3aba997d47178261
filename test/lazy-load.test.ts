import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { lazyLoad, lazyRequire } from "../util/lazy-load.ts";

describe("lazyLoad", () => {
  it("loads on the first call only, and gives every caller the same result", async () => {
    let loads = 0;
    const load = lazyLoad(async () => ({ n: ++loads }));
    expect(loads).toBe(0);
    const [a, b] = await Promise.all([load(), load()]);
    expect(a).toBe(b);
    expect(await load()).toBe(a);
    expect(loads).toBe(1);
  });

  it("forgets a failed load: the next call tries again", async () => {
    let attempts = 0;
    const load = lazyLoad(async () => {
      attempts++;
      if (attempts === 1) throw new Error("not installed yet");
      return "module";
    });
    await expect(load()).rejects.toThrow("not installed yet");
    await expect(load()).resolves.toBe("module");
    await expect(load()).resolves.toBe("module");
    expect(attempts).toBe(2);
  });

  it("forgets a failed dynamic import too", async () => {
    let specifier = "./no-such-module-anywhere.ts";
    const load = lazyLoad(() => import(/* @vite-ignore */ specifier));
    await expect(load()).rejects.toThrow();
    specifier = "../util/lazy-load.ts";
    await expect(load()).resolves.toHaveProperty("lazyLoad", lazyLoad);
  });
});

describe("lazyRequire", () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it("requires on the first call only, and a require that failed is tried again", () => {
    dir = mkdtempSync(join(tmpdir(), "lazy-require-"));
    const file = join(dir, "late.cjs");
    const load = lazyRequire<{ answer: number }>(file);
    expect(() => load()).toThrow(/Cannot find module/);
    writeFileSync(file, "module.exports = { answer: 42 };");
    const loaded = load();
    expect(loaded.answer).toBe(42);
    expect(load()).toBe(loaded);
  });
});

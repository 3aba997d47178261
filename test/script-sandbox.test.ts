/**
 * The script sandbox with its real engine (QuickJS in a worker thread): the API a script sees, errors with their
 * line, and escapes refused. Host calls are answered by a small table here; the real tools are in
 * script-tool.e2e.test.ts.
 */
import { describe, expect, it } from "vitest";
import { failureText, successText } from "../script/report.ts";
import { type HostCall, HostCallError, runInSandbox, type ScriptRun } from "../script/sandbox.ts";

const LIMITS = { timeoutMs: 5_000, memoryBytes: 32 * 2 ** 20 };
const CATALOG = [{ name: "notes__list", description: "List notes" }];

const host: HostCall = async (kind, payload) => {
  const input = payload as { name?: string; args?: { n?: number }; query?: string };
  if (kind === "tool" && input.name === "notes__list") return { items: Array.from({ length: input.args?.n ?? 3 }, (_, i) => ({ id: i })) };
  if (kind === "tool") throw new HostCallError(`No tool is named "${input.name}". Close matches: notes__list.`, input.name);
  if (kind === "searchTools") return [{ name: "notes__list", description: `for ${input.query}` }];
  return undefined;
};

const run = (code: string, limits = LIMITS) => runInSandbox(code, CATALOG, host, limits, undefined);
const failure = (result: ScriptRun, limits = LIMITS) => {
  expect(result.ok).toBe(false);
  return failureText(result as Exclude<ScriptRun, { ok: true }>, limits);
};

describe("script sandbox", () => {
  it("runs an async body: tool calls, searchTools, ALL_TOOLS, text, console and the return value", async () => {
    const result = await run(`
      const { items } = await tools.notes__list({ n: 5 });
      text("count " + items.length);
      console.log("found", (await searchTools("notes"))[0].name, ALL_TOOLS.length);
      return items.filter((item) => item.id % 2 === 0).map((item) => item.id);`);
    expect(result.ok).toBe(true);
    expect(successText(result)).toBe("count 5\nfound notes__list 1\n[\n  0,\n  2,\n  4\n]");
  });

  it("names the line of a syntax error and of a thrown error", async () => {
    expect(failure(await run("const a = 1;\nconst b = ;\nreturn a;"))).toMatch(/^Script failed at line 2: SyntaxError: /);
    expect(failure(await run("const a = 1;\n\nthrow new TypeError('no ' + a);"))).toMatch(/^Script failed at line 3: TypeError: no 1/);
  });

  it("passes a failed tool call's message on, with the line of the call", async () => {
    const text = failure(await run("await tools.notes__lst({});"));
    expect(text).toMatch(/^Script failed at line 1: No tool is named "notes__lst". Close matches: notes__list\./);
  });

  it("has no require, import, process, fetch, timers or host objects", async () => {
    const result = await run(`
      const seen = {};
      for (const name of ["require", "process", "fetch", "setTimeout", "setInterval", "Buffer", "module", "global", "std", "os", "WebAssembly", "XMLHttpRequest"]) {
        seen[name] = typeof globalThis[name];
      }
      let imported;
      try { await import("node:fs"); imported = "loaded"; } catch (error) { imported = error.name; }
      const names = Object.getOwnPropertyNames(globalThis).filter((name) => !/^[A-Z]/.test(name)).sort();
      return { seen, imported, names };`);
    expect(result.ok).toBe(true);
    const value = JSON.parse(result.value!) as { seen: Record<string, string>; imported: string; names: string[] };
    expect(Object.values(value.seen).every((type) => type === "undefined")).toBe(true);
    expect(value.imported).not.toBe("loaded");
    // Only the language's own lower-case globals and the script API.
    const api = ["console", "describeNamespace", "describeTool", "searchTools", "text", "tools"];
    const language = [
      "decodeURI",
      "decodeURIComponent",
      "encodeURI",
      "encodeURIComponent",
      "escape",
      "eval",
      "globalThis",
      "isFinite",
      "isNaN",
      "parseFloat",
      "parseInt",
      "performance",
      "queueMicrotask",
      "undefined",
      "unescape",
      "navigator",
      "gc",
      "atob",
      "btoa",
    ];
    expect(value.names.filter((name) => !api.includes(name) && !language.includes(name))).toEqual([]);
  });

  it("require() and a static import fail as errors of the script", async () => {
    expect(failure(await run("return require('fs');"))).toMatch(/ReferenceError: .*require/);
    expect(failure(await run("import fs from 'fs';\nreturn 1;"))).toMatch(/SyntaxError/);
  });

  it("stops an endless loop at the time limit, without holding this thread", async () => {
    const limits = { ...LIMITS, timeoutMs: 500 };
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 20);
    const result = await run("while (true) {}", limits);
    clearInterval(ticker);
    expect(failure(result, limits)).toMatch(/^Script stopped: it ran longer than its 0\.5 s limit \(settings\.script\.timeoutMs\)/);
    expect(ticks).toBeGreaterThan(5);
  });

  it("stops a memory bomb at the memory limit", async () => {
    const result = await run("const keep = []; while (true) keep.push('x'.repeat(1024 * 1024) + keep.length);");
    expect(failure(result)).toMatch(/^Script stopped: it used more than its 32 MB memory limit \(settings\.script\.memoryMb\)/);
  });

  it("fails a script that waits on a promise nothing can settle", async () => {
    expect(failure(await run("await new Promise(() => {});"))).toMatch(/can never settle/);
  });

  it("ends the script when the call is cancelled", async () => {
    const controller = new AbortController();
    const pending = runInSandbox("while (true) {}", CATALOG, host, LIMITS, controller.signal);
    setTimeout(() => controller.abort(), 100);
    expect(failure(await pending)).toMatch(/^Script cancelled\./);
  });
});

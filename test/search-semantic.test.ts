/**
 * Semantic re-ranking against a real HTTP embeddings endpoint (test/fixtures/embeddings-endpoint.mjs): the wiring,
 * the order it gives, the cache file (a second ranker asks nothing for unchanged tools), and every fallback (down,
 * slow beyond timeoutMs, not JSON, HTTP errors) giving the lexical order with the problem told once. Also the
 * `settings.search` config field.
 */
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test, vi } from "vitest";
import { embeddingsCachePath } from "../search/embeddings-cache.ts";
import { buildSearchIndex } from "../search/tool-index.ts";
import { RERANK_DEPTH, SemanticRanker } from "../search/semantic.ts";
import type { EmbeddingsSettings, ToolMetadata } from "../types.ts";
import { type EmbeddingsEndpoint as Endpoint, startEmbeddingsEndpoint } from "./fixtures/embeddings-endpoint.ts";
import { loadCorpusTools } from "./fixtures/search-eval/corpus-tools.ts";
import { createConfigSandbox } from "./config-sandbox.ts";

/** Background work under a busy CPU takes longer than expect.poll's default second. */
const POLL = { timeout: 30_000 };
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const everything = loadCorpusTools().filter((tool) => tool.serverName === "everything");
const index = buildSearchIndex(everything);
const names = (hits: readonly { tool: ToolMetadata }[]) => hits.map((hit) => hit.tool.originalName);
const lexical = (query: string) => index.search(query, RERANK_DEPTH);

async function endpoint(): Promise<Endpoint> {
  const started = await startEmbeddingsEndpoint();
  cleanups.push(() => started.close());
  return started;
}

function agentDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "mcp-semantic-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function ranker(settings: EmbeddingsSettings, dir: string, tools: readonly ToolMetadata[] = everything) {
  const reports: string[] = [];
  const semantic = new SemanticRanker(settings, dir, (message) => reports.push(message));
  cleanups.push(() => semantic.stop());
  semantic.start(tools);
  return { semantic, reports };
}

const embeddedAll =
  (semantic: SemanticRanker, count = everything.length) =>
  () =>
    semantic.statusLine().includes(`${count} of ${count} tool texts embedded`) && !semantic.statusLine().includes("embedding");

/** The tool texts a request carried (a query is one text that is not a tool's). */
const toolRequests = (served: Endpoint) =>
  served.requests.filter((request) => request.input.some((text) => text.startsWith("everything ")));

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe("semantic re-ranking", () => {
  test("the embedding puts first the tool the request means in words the tool does not use", async () => {
    const served = await endpoint();
    const { semantic, reports } = ranker({ url: served.url, model: "fixture" }, agentDir());
    await expect.poll(embeddedAll(semantic), POLL).toBe(true);

    // The fixture's model knows `zorblax` as `sum`; the words alone prefer another get- tool.
    expect(names(lexical("get zorblax"))[0]).not.toBe("get-sum");
    expect(index.unknownWordShare("get zorblax")).toBe(0.5);
    expect(names(await semantic.rerank("get zorblax", lexical("get zorblax"), index.unknownWordShare("get zorblax")))[0]).toBe("get-sum");
    // The words count for more as more of them are the catalog's own: known words keep the lexical order's first.
    expect(names(await semantic.rerank("get zorblax", lexical("get zorblax"), 0))[0]).toBe(names(lexical("get zorblax"))[0]);
    // A tool no word finds can enter the answer.
    expect(lexical("zorblax")).toEqual([]);
    expect(names(await semantic.rerank("zorblax", [], 1))[0]).toBe("get-sum");
    // An exact name keeps its lead.
    expect(names(await semantic.rerank("echo", lexical("echo"), index.unknownWordShare("echo")))[0]).toBe("echo");
    expect(reports).toEqual([]);
    // Tool texts went in batches, not one request per tool.
    expect(toolRequests(served).length).toBe(1);
  });

  test("vectors are kept in mcp-embeddings.json (0600): a second ranker asks only for the tool that changed", async () => {
    const served = await endpoint();
    const dir = agentDir();
    const first = ranker({ url: served.url, model: "fixture" }, dir);
    await expect.poll(embeddedAll(first.semantic), POLL).toBe(true);
    await first.semantic.stop();
    expect(statSync(embeddingsCachePath(dir)).mode & 0o777).toBe(0o600);
    expect(Object.keys(JSON.parse(await readFile(embeddingsCachePath(dir), "utf8")).vectors)).toHaveLength(everything.length);

    const changed = everything.map((tool) =>
      tool.originalName === "echo" ? { ...tool, description: "Echoes the input back, changed" } : tool,
    );
    const before = served.requests.length;
    const second = ranker({ url: served.url, model: "fixture" }, dir, changed);
    await expect.poll(embeddedAll(second.semantic), POLL).toBe(true);
    expect(served.requests.slice(before).map((request) => request.input)).toEqual([["everything echo: Echoes the input back, changed"]]);
    // Another model is another key: everything is asked again.
    const third = ranker({ url: served.url, model: "other" }, dir, changed);
    await expect.poll(embeddedAll(third.semantic), POLL).toBe(true);
    expect(served.requests.at(-1)!.input).toHaveLength(everything.length);
  });

  test("before startup is over (not started), the vectors kept in mcp-embeddings.json already re-rank", async () => {
    const served = await endpoint();
    const dir = agentDir();
    const first = ranker({ url: served.url, model: "fixture" }, dir);
    await expect.poll(embeddedAll(first.semantic), POLL).toBe(true);
    await first.semantic.stop();

    const early = new SemanticRanker({ url: served.url, model: "fixture" }, dir, () => {});
    cleanups.push(() => early.stop());
    early.update(everything);
    const before = served.requests.length;
    const query = "get zorblax";
    expect(names(await early.rerank(query, lexical(query), index.unknownWordShare(query)))[0]).toBe("get-sum");
    // Only the request went to the endpoint: nothing is computed before start().
    expect(served.requests.slice(before).map((request) => request.input)).toEqual([[query]]);
  });

  test("a cache file that is not ours is reported and rebuilt", async () => {
    const served = await endpoint();
    const dir = agentDir();
    writeFileSync(embeddingsCachePath(dir), "{ not json");
    const { semantic, reports } = ranker({ url: served.url, model: "fixture" }, dir);
    await expect.poll(embeddedAll(semantic), POLL).toBe(true);
    await semantic.stop();
    expect(reports).toEqual([expect.stringContaining("not a valid embeddings cache")]);
    expect(JSON.parse(await readFile(embeddingsCachePath(dir), "utf8")).version).toBe(1);
  });

  test("endpoint down: lexical order, told once, /mcp status says why", async () => {
    const port = await closedPort();
    const { semantic, reports } = ranker({ url: `http://127.0.0.1:${port}/v1`, model: "fixture" }, agentDir());
    await expect.poll(() => reports.length, POLL).toBe(1);
    expect(reports[0]).toMatch(/semantic re-ranking unavailable.*127\.0\.0\.1/);
    expect(names(await semantic.rerank("get zorblax", lexical("get zorblax"), index.unknownWordShare("get zorblax")))).toEqual(
      names(lexical("get zorblax")),
    );
    expect(semantic.statusLine()).toMatch(
      /0 of 13 tool texts embedded · failing: embeddings endpoint http:\/\/127\.0\.0\.1:\d+: fetch failed/,
    );
    semantic.update(everything); // more tools do not make it ask (and report) again within the retry delay
    await semantic.rerank("get zorblax", lexical("get zorblax"), index.unknownWordShare("get zorblax"));
    expect(reports).toHaveLength(1);
  });

  test("a query embedding later than timeoutMs is not waited for: lexical order, told once", async () => {
    const served = await endpoint();
    const { semantic, reports } = ranker({ url: served.url, model: "fixture", timeoutMs: 200 }, agentDir());
    await expect.poll(embeddedAll(semantic), POLL).toBe(true);
    const query = "get zorblax sleepy";
    expect(names(await semantic.rerank(query, lexical(query), index.unknownWordShare(query)))).toEqual(names(lexical(query)));
    expect(reports).toEqual([expect.stringContaining("did not answer within 200 ms")]);
  });

  test("an endpoint back after a failure: the next search after the retry delay has the tools embedded", async () => {
    const served = await endpoint();
    served.failing = true;
    const { semantic, reports } = ranker({ url: served.url, model: "fixture" }, agentDir());
    await expect.poll(() => reports.length, POLL).toBe(1);
    served.failing = false;
    await semantic.rerank("get zorblax", lexical("get zorblax"), index.unknownWordShare("get zorblax"));
    expect(served.requests).toHaveLength(1); // within the retry delay: not asked
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 61_000 });
    cleanups.push(() => vi.useRealTimers());
    await semantic.rerank("get zorblax", lexical("get zorblax"), index.unknownWordShare("get zorblax"));
    await expect.poll(embeddedAll(semantic), POLL).toBe(true);
    expect(index.unknownWordShare("get zorblax")).toBe(0.5);
    expect(names(await semantic.rerank("get zorblax", lexical("get zorblax"), index.unknownWordShare("get zorblax")))[0]).toBe("get-sum");
    // The words count for more as more of them are the catalog's own: known words keep the lexical order's first.
    expect(names(await semantic.rerank("get zorblax", lexical("get zorblax"), 0))[0]).toBe(names(lexical("get zorblax"))[0]);
    expect(reports).toHaveLength(1);
  });

  test.each([
    ["bad", "the answer is not JSON"],
    ["fail", "HTTP 500 fixture says no"],
  ])("an endpoint answering %s: lexical order, the reason told once", async (path, reason) => {
    const served = await endpoint();
    const { semantic, reports } = ranker({ url: `${served.origin}/${path}/v1`, model: "fixture" }, agentDir());
    await expect.poll(() => reports.length, POLL).toBe(1);
    expect(reports[0]).toContain(reason);
    expect(names(await semantic.rerank("get zorblax", lexical("get zorblax"), index.unknownWordShare("get zorblax")))).toEqual(
      names(lexical("get zorblax")),
    );
    expect(served.requests).toHaveLength(1); // the failing endpoint is left alone for a while
  });
});

describe("settings.search.embeddings", () => {
  const load = (settings: unknown) => {
    const sandbox = createConfigSandbox();
    cleanups.push(() => sandbox.remove());
    sandbox.write("home/.pi/agent/mcp.json", { mcpServers: {}, settings });
    return sandbox.load();
  };

  test("read with its fields; off when unset", () => {
    const embeddings = { url: "http://localhost:11434/v1", model: "nomic-embed-text", apiKeyEnv: "EMBED_KEY", timeoutMs: 1500 };
    const config = load({ search: { embeddings } });
    expect(config.problems).toEqual([]);
    expect(config.settings.search).toEqual({ embeddings });
    expect(load({}).settings.search).toBeUndefined();
  });

  test("a bad or missing field is a warning naming it, and re-ranking stays off", () => {
    const config = load({ search: { embeddings: { url: "ftp://x", timeoutMs: 0, colour: "red" }, other: 1 } });
    expect(config.settings.search).toEqual({});
    expect(config.problems.map((problem) => [problem.level, problem.field, problem.message])).toEqual([
      ["warning", "settings.search.embeddings.url", expect.stringMatching(/must be an http:\/\/ or https:\/\/ URL.*stays off/)],
      ["warning", "settings.search.embeddings.timeoutMs", expect.stringMatching(/must be a number > 0.*stays off/)],
      ["warning", "settings.search.embeddings.colour", expect.stringContaining("unknown field")],
      ["warning", "settings.search.embeddings.model", expect.stringMatching(/is required.*stays off/)],
      ["warning", "settings.search.other", expect.stringContaining("unknown field")],
    ]);
    expect(load({ search: true }).problems[0]).toMatchObject({ field: "settings.search", level: "warning" });
  });
});

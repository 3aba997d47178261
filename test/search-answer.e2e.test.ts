/**
 * What ToolSearch answers in the real Pi (the host of this vitest run), with server-everything and a scripted model:
 * re-ordered by an embeddings endpoint (test/fixtures/embeddings-endpoint.ts, real HTTP) when
 * `settings.search.embeddings` is set, the lexical order when that endpoint is down, and the close matches it names
 * when its five tools are no clear answer.
 */
import { randomUUID } from "node:crypto";
import { rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { type EmbeddingsEndpoint, startEmbeddingsEndpoint } from "./fixtures/embeddings-endpoint.ts";
import { faulty } from "./helpers/fault-setup.ts";
import type { ScriptStep } from "./helpers/faux-script.ts";
import { currentHost } from "./helpers/hosts.ts";
import { type McpDirs, mcpDirs, REAL_SERVERS } from "./helpers/mcp-setup.ts";
import { type PiSession, startSession } from "./helpers/pi-session.ts";
import { descendantProcesses } from "./helpers/processes.ts";

const host = currentHost();
const EVERYTHING_MARKER = "server-everything/dist/index.js";
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function sessionWith(
  settings: Record<string, unknown>,
  script: ScriptStep[],
  servers: Record<string, unknown> = {},
): Promise<{ pi: PiSession; dirs: McpDirs }> {
  const dirs = await mcpDirs({ mcpServers: { everything: REAL_SERVERS.everything, ...servers }, settings });
  cleanups.push(dirs.cleanup);
  const pi = await startSession({ extensions: ["pi-mcp-adapter.ts"], agentDir: dirs.agentDir, cwd: dirs.cwd, script });
  cleanups.push(() => pi.dispose());
  return { pi, dirs };
}

async function endpoint(): Promise<EmbeddingsEndpoint> {
  const started = await startEmbeddingsEndpoint();
  cleanups.push(() => started.close());
  return started;
}

const search = (query: string): ScriptStep => ({ toolCalls: [{ name: "ToolSearch", arguments: { query } }] });
const loaded = (pi: PiSession, at: number) => (pi.toolResults[at]!.details as { loaded: string[] }).loaded;
/** `/mcp status` once every tool text has its vector. */
const embeddedStatus = async (pi: PiSession) => {
  const status = (await pi.command("/mcp status")).text;
  return /Semantic re-ranking: fixture at .* · ([1-9]\d*) of \1 tool texts embedded$/m.test(status) ? status : "";
};
const toolTextRequests = (served: EmbeddingsEndpoint) =>
  served.requests.filter((request) => request.input.some((text) => text.startsWith("everything ")));

describe(`ToolSearch's answer on Pi ${host.version}`, () => {
  test("an embeddings endpoint re-orders it; a second session asks the endpoint only for the request", async () => {
    const served = await endpoint();
    const settings = { search: { embeddings: { url: served.url, model: "fixture" } } };
    const { pi } = await sessionWith(settings, [search("get zorblax"), "found"]);
    await expect.poll(() => embeddedStatus(pi), { timeout: 30_000 }).not.toBe("");
    await pi.prompt("add two numbers, in my words");
    // The words alone rank get-resource-reference first (test/search-semantic.test.ts); the fixture's model knows
    // `zorblax` as `sum`.
    expect(loaded(pi, 0)[0]).toBe("everything__get-sum");
    expect(pi.toolResults[0]!.text.match(/^- (\S+): /m)?.[1]).toBe("everything__get-sum");
    expect(toolTextRequests(served)).toHaveLength(1);

    await pi.restart();
    const before = served.requests.length;
    pi.script([search("get zorblax"), "found again"]);
    await expect.poll(() => embeddedStatus(pi), { timeout: 30_000 }).not.toBe("");
    await pi.prompt("again");
    expect(pi.toolResults.at(-1)!.text.match(/^- (\S+): /m)?.[1]).toBe("everything__get-sum");
    expect(served.requests.slice(before).map((request) => request.input)).toEqual([["get zorblax"]]);
    await pi.dispose();
    expect(await descendantProcesses(EVERYTHING_MARKER)).toEqual([]);
  }, 120_000); // two sessions, a server listed and every tool embedded: ~15 s, ~50 s with the CPU busy

  test("an eager server still starting: the first search is re-ranked with the vectors kept by the last session", async () => {
    const served = await endpoint();
    const settings = { search: { embeddings: { url: served.url, model: "fixture" } } };
    // An eager server that answers in the first session and, in the second, nothing until the test says so.
    const stall = join(tmpdir(), `mcp-stall-${randomUUID()}`);
    cleanups.push(async () => rmSync(stall, { force: true }));
    const { pi } = await sessionWith(settings, [], {
      slow: faulty({ FAULT_WAIT_WHILE_EXISTS: stall }, { lifecycle: "eager", startupTimeoutMs: 120_000 }),
    });
    // Two servers listed and every tool embedded: ~30 s with the CPU busy (load 30 on 2 cores: over 30 s once).
    await expect.poll(() => embeddedStatus(pi), { timeout: 60_000 }).not.toBe("");

    writeFileSync(stall, "");
    await pi.restart();
    const before = served.requests.length;
    pi.script([search("get zorblax"), "found"]);
    await pi.prompt("add two numbers, in my words");
    expect((await pi.command("/mcp status")).text).toMatch(/slow: connecting/);
    expect(pi.toolResults.at(-1)!.text.match(/^- (\S+): /m)?.[1]).toBe("everything__get-sum");
    // Only the request was embedded: the tools' vectors came from mcp-embeddings.json.
    expect(served.requests.slice(before).map((request) => request.input)).toEqual([["get zorblax"]]);
  }, 180_000);

  test("the endpoint down: the lexical answer, the user told once, /mcp status says why", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const { port } = closed.address() as { port: number };
    await new Promise((resolve) => closed.close(resolve));
    const settings = { search: { embeddings: { url: `http://127.0.0.1:${port}/v1`, model: "fixture" } } };
    const { pi } = await sessionWith(settings, [search("echo"), search("get zorblax sum"), "done"]);
    const warned = () => pi.ui.filter((record) => record.kind === "notify" && record.message.includes("semantic re-ranking unavailable"));
    await expect.poll(() => warned().length, { timeout: 30_000 }).toBe(1);
    await pi.prompt("echo, then a sum");
    expect(pi.toolResults.map((result) => result.isError)).toEqual([false, false]);
    expect(loaded(pi, 0)).toContain("everything__echo");
    expect(loaded(pi, 1)).toContain("everything__get-sum");
    expect(warned()).toHaveLength(1);
    expect((await pi.command("/mcp status")).text).toMatch(
      /0 of \d+ tool texts embedded · failing: embeddings endpoint http:\/\/127\.0\.0\.1:\d+: fetch failed/,
    );
  });

  test("no clear answer: close matches are named, and select: loads one; a clear answer names none", async () => {
    // Every tool matches the server's name equally: five are loaded, the others are as close.
    const { pi } = await sessionWith({}, [search("returns"), search("echo"), "done"]);
    await pi.prompt("what does the everything server have");
    const answer = pi.toolResults[0]!.text;
    expect(answer).toContain('Close matches not loaded (load one with ToolSearch "select:<name>"):');
    const named = [...answer.matchAll(/^- (everything__\S+): /gm)]
      .map((match) => match[1]!)
      .filter((name) => !loaded(pi, 0).includes(name));
    expect(named.length).toBeGreaterThan(0);
    expect(pi.toolResults[1]!.text).not.toContain("Close matches");

    pi.script([search(`select:${named[0]}`), "loaded"]);
    await pi.prompt("load the first close match");
    expect(loaded(pi, 2)).toEqual([named[0]]);
  });
});

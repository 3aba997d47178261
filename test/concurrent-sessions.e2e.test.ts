/**
 * Ten whole Pi sessions at once (the real `pi` CLI in print mode, ten processes) on one agent dir, as several terminal
 * panes or a subagent extension's children run them: nothing one of them listed is missing from `mcp-cache.json`
 * afterwards, and a server the ten share is started for listing once or twice, not ten times.
 *
 * Each session's model first calls ToolSearch (which waits for the startup's listings), then answers; Pi then ends
 * the session, which flushes the cache while the nine others hold or wait for its lock.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { loadMetadataCache } from "../metadata-cache.ts";
import { busyCpuDuringFile } from "./helpers/busy-cpu.ts";
import { ENTRY, faultHarness, STDIO_SERVER, startedPids } from "./helpers/fault-setup.ts";
import { currentHost } from "./helpers/hosts.ts";
import { type PrintResult, runPrint, withoutBuiltinMcpNotice } from "./helpers/pi-print.ts";

const host = currentHost();
const harness = faultHarness();
busyCpuDuringFile();

const SESSIONS = 10;
const SERVERS_PER_SESSION = 10;
/** Tools per server: a cache of 100 such servers is a few MB, rewritten under the lock by every write. */
const FILLER_TOOLS = Number(process.env.CONCURRENT_SESSION_TOOLS ?? 100);
/** `CONCURRENT_SESSION_RUNS=10` for the full check; one run in the suite (each is ten Pi processes on a loaded machine). */
const RUNS = Number(process.env.CONCURRENT_SESSION_RUNS ?? 1);
const RUN_TIMEOUT_MS = 240_000;

/** The session's model loads the echo tool of each of its servers (ToolSearch waits for the startup's listings). */
function script(servers: readonly string[]) {
  return [
    { toolCalls: [{ name: "ToolSearch", arguments: { query: `select:${servers.map((name) => `${name}__echo`).join(",")}` } }] },
    "done",
  ];
}

function server(logFile: string): Record<string, unknown> {
  return { command: process.execPath, args: [STDIO_SERVER], env: { FIXTURE_LOG: logFile, FIXTURE_FILLER_TOOLS: String(FILLER_TOOLS) } };
}

interface SessionConfig {
  path: string;
  servers: string[];
}

/** Ten sessions, each with its config, all on `agentDir`; resolves when all have exited. */
async function runSessions(agentDir: string, cwd: string, configs: readonly SessionConfig[]) {
  return Promise.all(
    configs.map(({ path, servers }) =>
      runPrint({
        extensions: [ENTRY],
        script: script(servers),
        prompts: ["load echo"],
        agentDir,
        cwd,
        args: ["--mcp-config", path],
        timeoutMs: RUN_TIMEOUT_MS,
      }),
    ),
  );
}

/** The servers whose echo tool the session's ToolSearch did not know when it answered (it loads 5, names the rest). */
function unknownTo(result: PrintResult, servers: readonly string[]): string[] {
  const text = result.toolResults[0]?.text ?? "";
  return servers.filter((name) => !text.includes(`${name}__echo`) || text.includes(`No MCP tool is named "${name}__echo"`));
}

async function writeConfig(path: string, servers: Record<string, unknown>): Promise<SessionConfig> {
  await writeFile(path, JSON.stringify({ mcpServers: servers }));
  return { path, servers: Object.keys(servers) };
}

function cachedServers(agentDir: string): string[] {
  const snapshot = loadMetadataCache(agentDir);
  expect(snapshot.problems).toEqual([]);
  return [...snapshot.servers].filter(([, entry]) => entry.tools.length > 0).map(([name]) => name);
}

describe(`${SESSIONS} Pi ${host.version} sessions at once on one agent dir, CPU busy`, () => {
  test(`each with its own ${SERVERS_PER_SESSION} servers: every server a session listed is in the cache afterwards, in each of ${RUNS} runs`, {
    timeout: RUNS * RUN_TIMEOUT_MS + 30_000,
  }, async () => {
    const lost: string[][] = [];
    const listed: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const dirs = await harness.dirs({}); // a fresh agent dir each run
      const logs = join(dirs.cwd, "logs");
      await mkdir(logs);
      const configs: SessionConfig[] = [];
      for (let session = 0; session < SESSIONS; session++) {
        const servers: Record<string, unknown> = {};
        for (let i = 0; i < SERVERS_PER_SESSION; i++) servers[`p${session}s${i}`] = server(join(logs, `p${session}s${i}.log`));
        configs.push(await writeConfig(join(dirs.cwd, `mcp-${session}.json`), servers));
      }
      const results = await runSessions(dirs.agentDir, dirs.cwd, configs);
      expect(results.map((result) => ({ exitCode: result.exitCode, stderr: withoutBuiltinMcpNotice(result.stderr) }))).toEqual(
        configs.map(() => ({ exitCode: 0, stderr: "" })),
      );
      // What a session knew when its ToolSearch answered it had listed. ToolSearch waits for the startup's listings
      // only so long (the shared-config test below checks it waits); on a starved CPU a listing can still be running
      // when the session ends, and then there is nothing of it to keep.
      const known = configs.flatMap((config, index) => config.servers.filter((name) => !unknownTo(results[index]!, [name]).length));
      const cached = new Set(cachedServers(dirs.agentDir));
      lost.push(known.filter((name) => !cached.has(name)));
      listed.push(known.length);
    }
    expect(lost).toEqual(Array.from({ length: RUNS }, () => []));
    expect(Math.min(...listed)).toBeGreaterThan(0);
  });

  test(`one shared config of ${SERVERS_PER_SESSION} uncached servers: each started at most twice for listing, every session knows every tool`, {
    timeout: RUN_TIMEOUT_MS + 30_000,
  }, async () => {
    const dirs = await harness.dirs({});
    const names = Array.from({ length: SERVERS_PER_SESSION }, (_, i) => `shared${i}`);
    const config = await writeConfig(
      join(dirs.cwd, "mcp-shared.json"),
      Object.fromEntries(names.map((name) => [name, server(join(dirs.cwd, `${name}.log`))])),
    );
    const results = await runSessions(
      dirs.agentDir,
      dirs.cwd,
      Array.from({ length: SESSIONS }, () => config),
    );
    expect(results.map((result) => result.exitCode)).toEqual(results.map(() => 0));
    // Every session knew all ten servers' tools when its ToolSearch answered.
    expect(results.map((result) => unknownTo(result, names))).toEqual(results.map(() => []));
    const starts = Object.fromEntries(names.map((name) => [name, startedPids(join(dirs.cwd, `${name}.log`)).length]));
    expect(
      Object.values(starts).filter((count) => count < 1 || count > 2),
      JSON.stringify(starts),
    ).toEqual([]);
    expect(cachedServers(dirs.agentDir).sort()).toEqual([...names].sort());
  });
});

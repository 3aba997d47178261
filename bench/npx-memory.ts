/**
 * 5. What npx resolution saves for five real npx-configured servers from npm: peak RSS of each server's whole
 * process tree (sum of VmHWM over npm exec + sh + node, sampled from /proc) and the time from spawn to an answered
 * `tools/list`, plain `npx -y <package>` against the command the resolver finds (`node <bin>`). Each package is
 * installed once into a temp npm cache first (a warm cache, as after a user's first launch); npx still asks the
 * registry on every start, as it does in real use. Runs alternate between the two; median (min–max). Linux only.
 *
 *   node node_modules/jiti/lib/jiti-cli.mjs bench/npx-memory.ts [--quick]
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SpawnForm } from "../npx/bins.ts";
import { resolveNpxCommand } from "../npx-resolver.ts";
import { fixed, median, reportFinding, runs, sleep, spread, table } from "./measure.ts";
import { descendantPids, statusKiB } from "./proc-tree.ts";

const RUNS = runs(3, 1);
const SAMPLE_INTERVAL_MS = 20;
/** Keeps sampling a little after tools/list, so the peak of the startup work is in. */
const SETTLE_MS = 500;
const ANSWER_TIMEOUT_MS = 120_000;

interface BenchServer {
  label: string;
  packageName: string;
  /** What follows `npx -y <package>`. */
  args: (root: string) => string[];
}

const SERVERS: BenchServer[] = [
  { label: "memory", packageName: "@modelcontextprotocol/server-memory", args: () => [] },
  { label: "everything", packageName: "@modelcontextprotocol/server-everything", args: () => ["stdio"] },
  { label: "filesystem", packageName: "@modelcontextprotocol/server-filesystem", args: (root) => [join(root, "project")] },
  { label: "sequential-thinking", packageName: "@modelcontextprotocol/server-sequential-thinking", args: () => [] },
  { label: "context7", packageName: "@upstash/context7-mcp", args: () => [] },
];

interface Measurement {
  peakTreeKiB: number;
  readyMs: number;
}

const root = await mkdtemp(join(tmpdir(), "npx-memory-bench-"));
const project = join(root, "project");
const agentDir = join(root, "agent");
const env: NodeJS.ProcessEnv = {
  ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_config_/i.test(name))),
  npm_config_cache: join(root, "npm-cache"),
  npm_config_userconfig: join(root, "npmrc"),
  npm_config_update_notifier: "false",
  MEMORY_FILE_PATH: join(root, "memory.jsonl"),
};
const npxCommand = (server: BenchServer): SpawnForm => ({ command: "npx", args: ["-y", server.packageName, ...server.args(root)] });

try {
  await mkdir(project);
  await writeFile(join(root, "npmrc"), "");
  // Warm-up: npx installs each package into the temp cache (not measured).
  for (const server of SERVERS) await measure(npxCommand(server));
  const coldStart = performance.now();
  const resolved = await Promise.all(SERVERS.map((server) => resolve(server)));
  const coldResolveMs = performance.now() - coldStart;

  const npx = SERVERS.map((): Measurement[] => []);
  const direct = SERVERS.map((): Measurement[] => []);
  const resolveMs: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    // Alternate which goes first, so drift on a shared machine hits both alike.
    for (const variant of run % 2 === 0 ? ["npx", "direct"] : ["direct", "npx"]) {
      for (const [i, server] of SERVERS.entries()) {
        if (variant === "npx") {
          npx[i].push(await measure(npxCommand(server)));
          continue;
        }
        const start = performance.now();
        const command = await resolve(server);
        resolveMs.push(performance.now() - start);
        direct[i].push(await measure(command));
      }
    }
  }
  printTables(npx, direct, resolved);
  console.log(
    `\nResolution: ${fixed(coldResolveMs)} ms for the five at once with a fresh agent dir (asks npm for its config), ` +
      `then ${spread(resolveMs, 1)} ms per server from mcp-npx-cache.json.`,
  );
} finally {
  await rm(root, { recursive: true, force: true });
}

async function resolve(server: BenchServer): Promise<SpawnForm> {
  const { args } = npxCommand(server);
  const resolution = await resolveNpxCommand("npx", args, { agentDir, env, cwd: project });
  if (resolution?.kind !== "resolved")
    throw new Error(`${server.packageName} did not resolve: ${resolution?.reason ?? "not an npx command"}`);
  return resolution;
}

/** Starts the server, answers initialize + tools/list over stdio, and samples the tree's memory meanwhile. */
async function measure({ command, args }: SpawnForm): Promise<Measurement> {
  const start = performance.now();
  const child = spawn(command, args, { cwd: project, env, detached: true, stdio: ["pipe", "pipe", "ignore"] });
  const peaks = new Map<number, number>();
  const sample = () => {
    for (const pid of [child.pid!, ...descendantPids(child.pid!)]) {
      const peak = statusKiB("VmHWM", pid);
      if (peak !== undefined) peaks.set(pid, Math.max(peak, peaks.get(pid) ?? 0));
    }
  };
  const sampler = setInterval(sample, SAMPLE_INTERVAL_MS);
  try {
    await toolsListAnswered(child);
    const readyMs = performance.now() - start;
    await sleep(SETTLE_MS);
    sample();
    return { peakTreeKiB: [...peaks.values()].reduce((sum, kib) => sum + kib, 0), readyMs };
  } finally {
    clearInterval(sampler);
    await stopGroup(child);
  }
}

function toolsListAnswered(child: ReturnType<typeof spawn>): Promise<void> {
  const send = (message: object) => child.stdin!.write(`${JSON.stringify(message)}\n`);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("no tools/list answer")), ANSWER_TIMEOUT_MS);
    let buffered = "";
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      buffered += chunk;
      const lines = buffered.split("\n");
      buffered = lines.pop()!;
      for (const line of lines) {
        let message: { id?: unknown };
        try {
          message = JSON.parse(line);
        } catch {
          continue; // a server's stray log line on stdout
        }
        if (message.id === 1) {
          send({ jsonrpc: "2.0", method: "notifications/initialized" });
          send({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} });
        } else if (message.id === 2) {
          clearTimeout(timer);
          resolve();
        }
      }
    });
    child.on("exit", (code) => reject(new Error(`server exited (${code})`)));
    send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "npx-memory-bench", version: "1" } },
    });
  });
}

async function stopGroup(child: ReturnType<typeof spawn>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  process.kill(-child.pid!, "SIGTERM");
  const timer = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), 3_000);
  await exited;
  clearTimeout(timer);
}

/** The installed version, read next to the resolved entry point (`…/node_modules/<package>/…`). */
function installedVersion(server: BenchServer, command: SpawnForm): string {
  const entry = [command.command, ...command.args].find((part) => part.includes(`node_modules/${server.packageName}/`));
  if (!entry) return "?";
  const packageDir = entry.slice(0, entry.indexOf(`node_modules/${server.packageName}/`)) + `node_modules/${server.packageName}`;
  try {
    return (JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as { version: string }).version;
  } catch {
    return "?";
  }
}

function printTables(npx: Measurement[][], direct: Measurement[][], resolved: SpawnForm[]): void {
  const memory = (runs: Measurement[]) => runs.map((run) => run.peakTreeKiB);
  const ready = (runs: Measurement[]) => runs.map((run) => run.readyMs);
  // Per run, the five servers together (as one Pi session with all five would hold them).
  const totals = (perServer: Measurement[][], pick: (runs: Measurement[]) => number[]) =>
    perServer[0].map((_, run) => perServer.reduce((sum, runs) => sum + pick(runs)[run], 0));
  const rows = SERVERS.map((server, i) => [
    `${server.packageName}@${installedVersion(server, resolved[i])}`,
    spread(memory(npx[i]), 1, 1024),
    spread(memory(direct[i]), 1, 1024),
    fixed(median(memory(direct[i])) / median(memory(npx[i])), 2),
    spread(ready(npx[i])),
    spread(ready(direct[i])),
  ]);
  const npxMemory = totals(npx, memory);
  const directMemory = totals(direct, memory);
  rows.push([
    "**all five**",
    spread(npxMemory, 1, 1024),
    spread(directMemory, 1, 1024),
    fixed(median(directMemory) / median(npxMemory), 2),
    spread(totals(npx, ready)),
    spread(totals(direct, ready)),
  ]);
  console.log(`Five npx-configured servers, ${RUNS} alternating run${RUNS === 1 ? "" : "s"} of each; median (min–max).\n`);
  console.log(
    table(
      ["server (npx -y …)", "peak tree RSS, npx, MB", "resolved, MB", "resolved ÷ npx", "spawn → tools/list, npx, ms", "resolved, ms"],
      rows,
    ),
  );
  const saved = (median(npxMemory) - median(directMemory)) / 1024;
  console.log();
  reportFinding(
    `npx resolution: five real npx-configured servers peak at ${fixed(median(directMemory) / 1024, 0)} MB instead of ${fixed(median(npxMemory) / 1024, 0)} MB ` +
      `(${fixed(saved, 0)} MB saved) and answer tools/list in ${fixed(median(totals(direct, ready)) / 1000, 1)} s instead of ${fixed(median(totals(npx, ready)) / 1000, 1)} s (sums over the five).`,
  );
}

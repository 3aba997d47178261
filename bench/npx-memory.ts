/**
 * What npx resolution saves for a typical npx-configured server (`npx -y @modelcontextprotocol/server-memory`):
 * peak RSS of the whole process tree (sum of VmHWM over npm exec + sh + node, sampled from /proc) and the time from
 * spawn to an answered `tools/list`, plain npx against the resolved command, N alternating runs in one process,
 * median and min–max. Both use one warm temp npm cache; npx still asks the registry on each start, as it does in
 * real use. Linux only. Prints a markdown table.
 *
 *   node node_modules/jiti/lib/jiti-cli.mjs bench/npx-memory.ts [runs=8]
 */
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { type ResolvedCommand, resolveNpxCommand } from "../npx-resolver.ts";
import { descendantPids, peakRssKiB } from "./proc-tree.ts";

const SERVER = ["-y", "@modelcontextprotocol/server-memory"];
const RUNS = Number(process.argv[2] ?? 8);
const SAMPLE_INTERVAL_MS = 20;
/** Keeps sampling a little after tools/list, so the peak of the startup work is in. */
const SETTLE_MS = 500;
const ANSWER_TIMEOUT_MS = 120_000;

interface Measurement {
  peakTreeKiB: number;
  readyMs: number;
}

const root = await mkdtemp(join(tmpdir(), "npx-memory-bench-"));
const env: NodeJS.ProcessEnv = {
  ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_config_/i.test(name))),
  npm_config_cache: join(root, "npm-cache"),
  npm_config_update_notifier: "false",
  MEMORY_FILE_PATH: join(root, "memory.jsonl"),
};

try {
  const project = join(root, "project");
  await mkdir(project);
  await writeFile(join(root, "npmrc"), "");
  env.npm_config_userconfig = join(root, "npmrc");

  // Warm-up: npx installs into the temp cache; the first resolution (fresh agent dir) is timed separately.
  await measure({ command: "npx", args: SERVER }, project);
  const agentDir = join(root, "agent");
  const coldStart = performance.now();
  const resolved = await resolveNpxCommand("npx", SERVER, { agentDir, env, cwd: project });
  const coldResolveMs = performance.now() - coldStart;
  if (!resolved) throw new Error("the server did not resolve");

  const npx: Measurement[] = [];
  const direct: Measurement[] = [];
  const resolveMs: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    // Alternate which goes first, so drift on a shared machine hits both alike.
    const order = run % 2 === 0 ? ["npx", "direct"] : ["direct", "npx"];
    for (const variant of order) {
      if (variant === "npx") {
        npx.push(await measure({ command: "npx", args: SERVER }, project));
        continue;
      }
      const start = performance.now();
      const command = await resolveNpxCommand("npx", SERVER, { agentDir, env, cwd: project });
      resolveMs.push(performance.now() - start);
      direct.push(await measure(command ?? resolved, project));
    }
  }
  printTable(npx, direct, resolveMs, coldResolveMs, resolved);
} finally {
  await rm(root, { recursive: true, force: true });
}

/** Starts the server, answers initialize + tools/list over stdio, and samples the tree's memory meanwhile. */
async function measure({ command, args }: ResolvedCommand, cwd: string): Promise<Measurement> {
  const start = performance.now();
  const child = spawn(command, args, { cwd, env, detached: true, stdio: ["pipe", "pipe", "ignore"] });
  const peaks = new Map<number, number>();
  const sample = () => {
    for (const pid of [child.pid!, ...descendantPids(child.pid!)]) {
      const peak = peakRssKiB(pid);
      if (peak !== undefined) peaks.set(pid, Math.max(peak, peaks.get(pid) ?? 0));
    }
  };
  const sampler = setInterval(sample, SAMPLE_INTERVAL_MS);
  try {
    await toolsListAnswered(child);
    const readyMs = performance.now() - start;
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
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
        const message = JSON.parse(line);
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

function printTable(npx: Measurement[], direct: Measurement[], resolveMs: number[], coldResolveMs: number, resolved: ResolvedCommand) {
  const median = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    const mid = sorted.length >> 1;
    return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  };
  const spread = (values: number[], scale: number, digits: number) => {
    const fmt = (value: number) => (value / scale).toFixed(digits);
    return `${fmt(median(values))} (${fmt(Math.min(...values))}–${fmt(Math.max(...values))})`;
  };
  const memory = (runs: Measurement[]) => runs.map((run) => run.peakTreeKiB);
  const ready = (runs: Measurement[]) => runs.map((run) => run.readyMs);
  const directTotal = direct.map((run, i) => run.readyMs + resolveMs[i]);

  console.log(`npx -y @modelcontextprotocol/server-memory, ${RUNS} alternating runs each; resolved to: ${resolved.command} ${resolved.args.join(" ")}\n`);
  console.log("| variant | peak tree RSS, MB (median, min–max) | spawn → tools/list, ms | resolve + spawn → tools/list, ms |");
  console.log("|---|---|---|---|");
  console.log(`| plain npx | ${spread(memory(npx), 1024, 1)} | ${spread(ready(npx), 1, 0)} | — |`);
  console.log(`| resolved (node <bin>) | ${spread(memory(direct), 1024, 1)} | ${spread(ready(direct), 1, 0)} | ${spread(directTotal, 1, 0)} |`);
  console.log(
    `| resolved / npx (medians) | ${(median(memory(direct)) / median(memory(npx))).toFixed(2)} | ` +
      `${(median(ready(direct)) / median(ready(npx))).toFixed(2)} | ${(median(directTotal) / median(ready(npx))).toFixed(2)} |`,
  );
  console.log(`\nresolution: first ${coldResolveMs.toFixed(0)} ms (fresh agent dir, asks npm for its config), then ${spread(resolveMs, 1, 1)} ms from mcp-npx-cache.json`);
}

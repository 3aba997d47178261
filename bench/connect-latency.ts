/**
 * Connect latency: from `connect()` to tools/list (and resources/list) answered, for server-everything over stdio.
 * Baseline in the same run: the bare SDK doing the same (`StdioClientTransport`, `client.connect`,
 * `client.listTools`, `client.listResources`). Runs alternate between the two so machine load hits both alike.
 * Prints median (min–max) per side and the ratio of medians.
 *
 * The manager passes the whole parent environment (the SDK only a whitelist), so it pays for whatever that
 * environment makes a child do: with NODE_EXTRA_CA_CERTS set, every node server parses the CA bundle at start
 * (≈45 ms here). Run with `env -u NODE_EXTRA_CA_CERTS` to compare the code paths alone.
 *
 *   node node_modules/jiti/lib/jiti-cli.mjs bench/connect-latency.ts [runs] [--quick]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { performance } from "node:perf_hooks";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { McpServerManager } from "../server-manager.ts";
import type { ServerDefinition } from "../types.ts";
import { fixed, median, runs, spread, table } from "./measure.ts";

const RUNS = Number(process.argv.slice(2).find((arg) => /^\d+$/.test(arg)) ?? runs(15, 4));
const EVERYTHING = join(
  dirname(fileURLToPath(import.meta.url)),
  "..",
  "node_modules",
  "@modelcontextprotocol",
  "server-everything",
  "dist",
  "index.js",
);
const agentDir = mkdtempSync(join(tmpdir(), "pi-mcp-bench-"));

async function timeBaseline(): Promise<number> {
  const start = performance.now();
  const client = new Client({ name: "bench", version: "0" });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [EVERYTHING, "stdio"], stderr: "pipe" }));
  await client.listTools();
  await client.listResources();
  const elapsed = performance.now() - start;
  await client.close();
  return elapsed;
}

async function timeManager(run: number): Promise<number> {
  const manager = new McpServerManager({ agentDir });
  const def: ServerDefinition = {
    name: `everything-${run}`,
    command: process.execPath,
    args: [EVERYTHING, "stdio"],
    source: { kind: "user", path: "bench" },
  };
  const start = performance.now();
  await manager.connect(def);
  const elapsed = performance.now() - start;
  await manager.closeAll();
  return elapsed;
}

try {
  await timeBaseline(); // warm the file cache; not counted
  const baseline: number[] = [];
  const manager: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    baseline.push(await timeBaseline());
    manager.push(await timeManager(run));
  }
  console.log(
    `server-everything over stdio, connect → tools/list and resources/list answered, ${RUNS} alternating runs each; median (min–max)\n`,
  );
  console.log(
    table(
      ["client", "latency, ms", "ratio"],
      [
        ["bare SDK (baseline)", spread(baseline), "1.00"],
        ["McpServerManager", spread(manager), fixed(median(manager) / median(baseline), 2)],
      ],
    ),
  );
} finally {
  rmSync(agentDir, { recursive: true, force: true });
}

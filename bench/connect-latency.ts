/**
 * Connect latency: from `connect()` to tools/list (and resources/list) answered, for server-everything (a 2025-era
 * server, on SDK v1) over stdio. Baseline in the same run: the bare SDK v2 client doing the same
 * (`StdioClientTransport`, `client.connect`, `client.listTools`, `client.listResources`), each side in two states:
 * the protocol verdict known (the manager's kept in the metadata cache; the bare client's `prior`: no probe) and the
 * first connect ever (the `server/discover` probe: the manager probes on the server's own process, the SDK's `auto`
 * on a sibling process it starts for the probe alone). Runs alternate so machine load hits all alike.
 * Prints median (min–max) per row and the ratio of medians to the bare client in the same state.
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
import type { ProtocolVerdict } from "../connection/session.ts";
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

const LEGACY: ProtocolVerdict = { era: "legacy", version: "2025-11-25", checkedAt: Date.now() };

/** The bare client; with `probe`, in `auto` negotiation, else told the server is a 2025-era one. */
async function timeBaseline(probe: boolean): Promise<number> {
  const start = performance.now();
  const client = new Client({ name: "bench", version: "0" }, probe ? { versionNegotiation: { mode: "auto" } } : {});
  const transport = new StdioClientTransport({ command: process.execPath, args: [EVERYTHING, "stdio"], stderr: "pipe" });
  await client.connect(transport, probe ? {} : { prior: { kind: "legacy" } });
  await client.listTools();
  await client.listResources();
  const elapsed = performance.now() - start;
  await client.close();
  return elapsed;
}

/** The manager; with `probe`, as at a server's first connect ever, else with the verdict its cache would hold. */
async function timeManager(run: number, probe: boolean): Promise<number> {
  const manager = new McpServerManager({ agentDir, priorProtocol: probe ? undefined : () => LEGACY });
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
  await timeBaseline(false); // warm the file cache; not counted
  const times = { baseline: [] as number[], manager: [] as number[], baselineProbe: [] as number[], managerProbe: [] as number[] };
  for (let run = 0; run < RUNS; run++) {
    times.baseline.push(await timeBaseline(false));
    times.manager.push(await timeManager(run, false));
    times.baselineProbe.push(await timeBaseline(true));
    times.managerProbe.push(await timeManager(run, true));
  }
  console.log(
    `server-everything over stdio, connect → tools/list and resources/list answered, ${RUNS} alternating runs each; median (min–max)\n`,
  );
  const ratio = (values: number[], base: number[]) => fixed(median(values) / median(base), 2);
  console.log(
    table(
      ["client", "latency, ms", "ratio"],
      [
        ["bare SDK v2 client, verdict known (baseline)", spread(times.baseline), "1.00"],
        ["McpServerManager, verdict known", spread(times.manager), ratio(times.manager, times.baseline)],
        ["bare SDK v2 client, `auto` (baseline for the probe)", spread(times.baselineProbe), "1.00"],
        ["McpServerManager, first connect (the probe)", spread(times.managerProbe), ratio(times.managerProbe, times.baselineProbe)],
      ],
    ),
  );
} finally {
  rmSync(agentDir, { recursive: true, force: true });
}

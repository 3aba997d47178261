/**
 * Connect latency: from `connect()` to tools/list (and resources/list) answered, for server-everything (a 2025-era
 * server, on SDK v1) over stdio. Baseline in the same run: the bare SDK v2 client doing the same
 * (`StdioClientTransport`, `client.connect`, `client.listTools`, `client.listResources`), each side in two states:
 * the protocol verdict known (the manager's kept in the metadata cache; the bare client's `prior`: no probe) and the
 * first connect ever (the `server/discover` probe: the manager probes on the server's own process, the SDK's `auto`
 * on a sibling process it starts for the probe alone). Each state is a comparison of its own, the two clients
 * alternating run by run (bench/measure.ts `alternate`); the ratio is taken pair by pair.
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
import { alternate, comparisonTable, runs } from "./measure.ts";

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

let managerRuns = 0;

/** The manager; with `probe`, as at a server's first connect ever, else with the verdict its cache would hold. */
async function timeManager(probe: boolean): Promise<number> {
  const manager = new McpServerManager({ agentDir, known: probe ? undefined : () => ({ protocol: LEGACY }) });
  const def: ServerDefinition = {
    name: `everything-${managerRuns++}`,
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
  // Each state its own comparison: the manager against the bare client, alternating run by run.
  const known = await alternate(
    RUNS,
    () => timeBaseline(false),
    () => timeManager(false),
  );
  const probe = await alternate(
    RUNS,
    () => timeBaseline(true),
    () => timeManager(true),
  );
  console.log(
    `server-everything over stdio, connect → tools/list and resources/list answered; each comparison alternates its two ` +
      `clients, ${RUNS} pairs after a warm-up of each; median (min–max)\n`,
  );
  console.log(
    comparisonTable([
      { candidate: "McpServerManager, verdict known", baseline: "bare SDK v2 client, verdict known", samples: known },
      { candidate: "McpServerManager, first connect (the probe)", baseline: "bare SDK v2 client, `auto`", samples: probe },
    ]),
  );
} finally {
  rmSync(agentDir, { recursive: true, force: true });
}

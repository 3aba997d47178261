/**
 * The first call of a lazy stdio server, before and after the connection layer moved to the official SDK v2, for a
 * 2025-era server (the corpus's `everything`, on SDK v1) and a 2026-07-28 one (test/fixtures/servers/v2-server.mjs).
 * Each run is a fresh process (bench/first-call-run.ts): the manager loaded, nothing connected; timed are loading
 * the connection code (the SDK) and then spawn → connect → lists → the call's result.
 *
 * Each comparison in the same run, on its own: its baseline and its candidate alternate run by run (bench/measure.ts
 * `alternate`: one unmeasured warm-up of each), and its ratio is taken pair by pair. The clients compared:
 *   - the adapter before the move: the McpServerManager of commit 0a811fc, extracted from this clone's history
 *     (bench/before-move.ts);
 *   - the adapter now, with the protocol verdict known (kept in the metadata cache since an earlier connect: every
 *     lazy start after the first) and without it (the first connect ever: the `server/discover` probe first);
 *   - the bare SDK v2 client (its StdioClientTransport, tools/list, the call), with the verdict and without it (`auto`:
 *     the SDK probes on a short-lived sibling process), as the floor.
 * Servers are started without NODE_EXTRA_CA_CERTS: the manager passes the whole environment and the SDK's transport a
 * whitelist, and a Node server parses that bundle at start (bench/connect-latency.ts says more).
 *
 *   node node_modules/jiti/lib/jiti-cli.mjs bench/first-call.ts [--quick]
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { ProtocolVerdict } from "../connection/session.ts";
import { McpServerManager } from "../server-manager.ts";
import { REPO_ROOT } from "../test/helpers/hosts.ts";
import { BEFORE_MOVE_LABEL, checkoutBeforeMove } from "./before-move.ts";
import {
  FIRST_CALL_SERVERS,
  type FirstCallResult,
  type FirstCallSample,
  type FirstCallServer,
  parseFirstCallResult,
} from "./first-call-run.ts";
import {
  alternate,
  type ComparisonRow,
  comparisonTable,
  fixed,
  median,
  type Paired,
  pairedRatios,
  pick,
  reportFinding,
  runs,
} from "./measure.ts";

const ROUNDS = runs(10, 3);
const RUN_SCRIPT = join(REPO_ROOT, "bench/first-call-run.ts");
const JITI_CLI = join(REPO_ROOT, "node_modules/jiti/lib/jiti-cli.mjs");
const execFileAsync = promisify(execFile);
const { NODE_EXTRA_CA_CERTS: _caBundle, ...childEnv } = process.env;

type ClientKind = "bare-known" | "bare-probe" | "before" | "after-known" | "after-probe";
const LABELS: Record<ClientKind, string> = {
  "bare-known": "bare SDK v2 client, verdict known",
  "bare-probe": "bare SDK v2 client, `auto` (probe on a sibling process)",
  before: `adapter ${BEFORE_MOVE_LABEL}`,
  "after-known": "adapter now, verdict known (every lazy start after the first)",
  "after-probe": "adapter now, first connect ever (the probe)",
};
const SERVERS = Object.keys(FIRST_CALL_SERVERS) as FirstCallServer[];
const SERVER_LABELS: Record<FirstCallServer, string> = { "2025": "2025 server", "2026": "2026 server" };
/** One side of a comparison: a client on a server. */
type Side = { server: FirstCallServer; kind: ClientKind };
const side = (server: FirstCallServer, kind: ClientKind): Side => ({ server, kind });
/** The comparisons, each candidate against its own baseline (those with the old adapter only when it was checked out). */
const COMPARISONS = {
  moveKnown: { baseline: side("2025", "before"), candidate: side("2025", "after-known") },
  moveProbe: { baseline: side("2025", "before"), candidate: side("2025", "after-probe") },
  floor2025: { baseline: side("2025", "bare-known"), candidate: side("2025", "after-known") },
  era: { baseline: side("2025", "after-known"), candidate: side("2026", "after-known") },
  floor2026: { baseline: side("2026", "bare-known"), candidate: side("2026", "after-known") },
  probe2026: { baseline: side("2026", "bare-probe"), candidate: side("2026", "after-probe") },
} satisfies Record<string, { baseline: Side; candidate: Side }>;
type ComparisonId = keyof typeof COMPARISONS;

const before = checkoutBeforeMove();
try {
  const verdicts = await knownVerdicts();
  const sample = ({ server, kind }: Side): FirstCallSample => ({
    server,
    client: kind.startsWith("bare") ? "bare" : { adapterRoot: kind === "before" ? before!.root : REPO_ROOT },
    prior: kind.endsWith("known") ? verdicts[server] : undefined,
  });
  const measured = new Map<ComparisonId, Paired<FirstCallResult>>();
  for (const [id, { baseline, candidate }] of Object.entries(COMPARISONS) as [ComparisonId, (typeof COMPARISONS)[ComparisonId]][]) {
    if (!before && baseline.kind === "before") continue;
    measured.set(
      id,
      await alternate(
        ROUNDS,
        () => runSample(sample(baseline)),
        () => runSample(sample(candidate)),
      ),
    );
  }
  const named = ({ server, kind }: Side) => `${SERVER_LABELS[server]}: ${LABELS[kind]}`;
  const figure = (id: ComparisonId, name: keyof FirstCallResult) => pick(measured.get(id)!, (result) => result[name]);
  const rows = (name: keyof FirstCallResult): ComparisonRow[] =>
    [...measured.keys()].map((id) => ({
      baseline: named(COMPARISONS[id].baseline),
      candidate: named(COMPARISONS[id].candidate),
      samples: figure(id, name),
    }));
  console.log(
    `Fresh process per run; each comparison alternates its two clients, ${ROUNDS} pairs after a warm-up of each; ` +
      "median (min–max). 2025-era server: the corpus's `everything` (SDK v1); 2026-07-28 server: `v2-server.mjs` (SDK v2), " +
      "both over stdio.\n",
  );
  console.log("First call (spawn, connect, lists, the call's result), with the connection code (SDK) already loaded:\n");
  console.log(comparisonTable(rows("callMs")));
  console.log("\nLoading the connection code (the SDK) before it, in the same runs:\n");
  console.log(comparisonTable(rows("loadMs")));
  console.log();
  const ratio = (id: ComparisonId) => {
    const { baseline, candidate } = figure(id, "callMs");
    return `${pairedRatios(candidate, baseline)} (${fixed(median(candidate))} ms ÷ ${fixed(median(baseline))} ms)`;
  };
  if (before) {
    reportFinding(
      "First call of a lazy 2025-era stdio server, the adapter now ÷ before the move to SDK v2, pair by pair: " +
        `${ratio("moveKnown")} with the verdict known, ${ratio("moveProbe")} at the first connect ever (the probe).`,
    );
  }
  reportFinding(
    "First call of a lazy stdio server through the adapter now (verdict known), a 2026-07-28 server ÷ a 2025-era one, " +
      `pair by pair: ${ratio("era")}; ÷ the bare SDK v2 client on the 2026 server: ${ratio("floor2026")}.`,
  );
} finally {
  before?.cleanup();
}

/** What each server spoke, from one connect through the manager now (also a warm-up of both servers). */
async function knownVerdicts(): Promise<Record<FirstCallServer, ProtocolVerdict>> {
  const agentDir = mkdtempSync(join(tmpdir(), "bench-first-call-"));
  const manager = new McpServerManager({ agentDir });
  try {
    const verdicts: Partial<Record<FirstCallServer, ProtocolVerdict>> = {};
    for (const server of SERVERS) {
      const connection = await manager.connect({
        name: server,
        command: process.execPath,
        args: [...FIRST_CALL_SERVERS[server].args],
        source: { kind: "user", path: "bench" },
      });
      verdicts[server] = connection.protocol;
    }
    return verdicts as Record<FirstCallServer, ProtocolVerdict>;
  } finally {
    await manager.closeAll();
    rmSync(agentDir, { recursive: true, force: true });
  }
}

async function runSample(sample: FirstCallSample): Promise<FirstCallResult> {
  const { stdout, stderr } = await execFileAsync(process.execPath, [JITI_CLI, RUN_SCRIPT, JSON.stringify(sample)], {
    cwd: REPO_ROOT,
    env: childEnv,
    timeout: 60_000,
  }).catch((error: { message: string; stderr?: string }) => {
    throw new Error(`first-call run ${JSON.stringify(sample)} failed: ${error.message}\n${error.stderr ?? ""}`);
  });
  const result = parseFirstCallResult(stdout);
  if (!result) throw new Error(`first-call run printed no result:\n${stdout.slice(-2_000)}\n${stderr.slice(-2_000)}`);
  return result;
}

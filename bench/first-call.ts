/**
 * The first call of a lazy stdio server, before and after the connection layer moved to the official SDK v2, for a
 * 2025-era server (the corpus's `everything`, on SDK v1) and a 2026-07-28 one (test/fixtures/servers/v2-server.mjs).
 * Each run is a fresh process (bench/first-call-run.ts): the manager loaded, nothing connected; timed are loading
 * the connection code (the SDK) and then spawn → connect → lists → the call's result.
 *
 * In the same run, alternating (the order rotates every round, after one unmeasured warm-up of each):
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
import { fixed, median, pairedRatios, reportFinding, runs, spread, table } from "./measure.ts";

const ROUNDS = runs(10, 3);
const RUN_SCRIPT = join(REPO_ROOT, "bench/first-call-run.ts");
const JITI_CLI = join(REPO_ROOT, "node_modules/jiti/lib/jiti-cli.mjs");
const execFileAsync = promisify(execFile);
const { NODE_EXTRA_CA_CERTS: _caBundle, ...childEnv } = process.env;

type ClientKind = "bare-known" | "bare-probe" | "before" | "after-known" | "after-probe";
const LABELS: Record<ClientKind, string> = {
  "bare-known": "bare SDK v2 client, verdict known (floor)",
  "bare-probe": "bare SDK v2 client, `auto` (probe on a sibling process)",
  before: `adapter ${BEFORE_MOVE_LABEL}`,
  "after-known": "adapter now, verdict known (every lazy start after the first)",
  "after-probe": "adapter now, first connect ever (the probe)",
};
/** The floor each row is divided by: the bare client in the same state (the old adapter never probes). */
const FLOOR: Record<ClientKind, ClientKind> = {
  "bare-known": "bare-known",
  "bare-probe": "bare-probe",
  before: "bare-known",
  "after-known": "bare-known",
  "after-probe": "bare-probe",
};
const SERVERS = Object.keys(FIRST_CALL_SERVERS) as FirstCallServer[];

const before = checkoutBeforeMove();
try {
  const verdicts = await knownVerdicts();
  const kinds = (Object.keys(LABELS) as ClientKind[]).filter((kind) => kind !== "before" || before);
  const variants = SERVERS.flatMap((server) => kinds.map((kind) => ({ server, kind })));
  const sample = ({ server, kind }: (typeof variants)[number]): FirstCallSample => ({
    server,
    client: kind.startsWith("bare") ? "bare" : { adapterRoot: kind === "before" ? before!.root : REPO_ROOT },
    prior: kind.endsWith("known") ? verdicts[server] : undefined,
  });
  const results = new Map(variants.map((variant) => [`${variant.server}/${variant.kind}`, [] as FirstCallResult[]]));
  for (const variant of variants) await runSample(sample(variant));
  for (let round = 0; round < ROUNDS; round++) {
    // Rotate the order, so drift on a shared machine hits every variant alike.
    const shift = (round * 3) % variants.length;
    for (const variant of [...variants.slice(shift), ...variants.slice(0, shift)]) {
      results.get(`${variant.server}/${variant.kind}`)!.push(await runSample(sample(variant)));
    }
  }
  const of = (server: FirstCallServer, kind: ClientKind, pick: keyof FirstCallResult = "callMs") =>
    (results.get(`${server}/${kind}`) ?? []).map((result) => result[pick]);
  const call = (server: FirstCallServer, kind: ClientKind) => median(of(server, kind));
  const ratio = (a: number, b: number) => fixed(a / b, 2);

  console.log(
    `Fresh process per run, ${ROUNDS} rounds of ${variants.length} alternating runs; median (min–max). First call: spawn, ` +
      "connect, lists, the call's result, with the connection code (SDK) already loaded; its load is the column before.\n",
  );
  for (const server of SERVERS) {
    const title =
      server === "2025" ? "2025-era server (corpus `everything`, SDK v1)" : "2026-07-28 server (`v2-server.mjs`, SDK v2, stdio)";
    const rows = kinds.map((kind) => [
      LABELS[kind],
      spread(of(server, kind, "loadMs")),
      spread(of(server, kind)),
      ratio(call(server, kind), call(server, FLOOR[kind])),
      before ? ratio(call(server, kind), call(server, "before")) : "–",
      server === "2026" ? ratio(call(server, kind), call("2025", kind)) : "1.00",
    ]);
    console.log(`${title}:\n`);
    console.log(table(["client", "SDK load, ms", "first call, ms", "÷ bare client", "÷ before the move", "÷ 2025 server's"], rows));
    console.log();
  }
  const perRound = (server: FirstCallServer, kind: ClientKind, base: ClientKind) => pairedRatios(of(server, kind), of(server, base));
  if (before) {
    reportFinding(
      `First call of a lazy 2025-era stdio server, the adapter now ÷ before the move to SDK v2, round by round: ` +
        `${perRound("2025", "after-known", "before")} with the verdict known (${fixed(call("2025", "after-known"))} ms and ` +
        `${fixed(call("2025", "before"))} ms), ${perRound("2025", "after-probe", "before")} at the first connect ever (the probe).`,
    );
  }
  const vs2025 = (kind: ClientKind) => pairedRatios(of("2026", kind), of("2025", kind));
  reportFinding(
    `First call of a lazy 2026-07-28 stdio server, round by round: with the verdict known ${vs2025("after-known")} the ` +
      `2025 server's and ${perRound("2026", "after-known", "bare-known")} the bare SDK v2 client's (${fixed(call("2026", "after-known"))} ms); ` +
      `with the probe ${vs2025("after-probe")} the 2025 server's and ${perRound("2026", "after-probe", "bare-probe")} the bare client's.`,
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

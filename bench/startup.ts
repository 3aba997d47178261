/**
 * 2. Startup, and the Pi process's memory. Each run is a fresh process (bench/session-run.ts) on the host's Node:
 *   - Pi alone (with the two probe extensions only): the baseline;
 *   - Pi with the adapter, 45 corpus servers / 1,052 tools from the cache (lazy servers, none started);
 * Measured: extension load → session_start done, processes running once startup settled (OS process table), RSS
 * after a GC. The adapter run then has the model call a tool of a lazy corpus server (direct via MCP_DIRECT_TOOLS),
 * whose first call starts the server: time to the first tool result, against the bare SDK spawning the same server,
 * connecting and calling (measured in the baseline run's process).
 * Each comparison runs on its own, its baseline and its candidate alternating run by run after one unmeasured
 * warm-up of each (bench/measure.ts `alternate`), and its ratios are taken pair by pair:
 *   - the adapter against Pi alone (what the adapter adds);
 *   - the adapter against the adapter before the move to the SDK v2 (the last commit on SDK v1, bench/before-move.ts):
 *     the same cache and the same call;
 *   - to tell the host's share from ours: Pi alone registering the same 1,052 tools in session_start (where the
 *     adapter does) against while loading extensions.
 *
 *   node node_modules/jiti/lib/jiti-cli.mjs bench/startup.ts [--quick] [--hosts=0.73.1,0.87.1,1.6.0]
 */
import { BEFORE_MOVE_LABEL, checkoutBeforeMove } from "./before-move.ts";
import { corpusServers } from "./corpus.ts";
import { alternate, comparisonTable, fixed, median, type Paired, pairedRatios, pick, reportFinding, reportGoal, runs } from "./measure.ts";
import type { PiHost } from "../test/helpers/hosts.ts";
import { benchHosts, type CorpusToolCall, type SessionRunOptions, type SessionRunResult, spawnSessionRun } from "./session-run.ts";

const MAX_ADDED_MS = 100;
const RUNS = runs(5, 2);
const ATTRIBUTION_RUNS = runs(3, 1);
const SERVERS = corpusServers().length;
const TOOLS = corpusServers().reduce((sum, server) => sum + server.tools.length, 0);
const CALL: CorpusToolCall = { server: "everything", tool: "echo", arguments: { message: "hello" } };

const before = checkoutBeforeMove();
const adapterRun = { servers: SERVERS, extension: true, directTools: `${CALL.server}/${CALL.tool}`, firstCall: CALL };
const variants = {
  alone: { servers: SERVERS, extension: false, sdkCall: CALL },
  adapter: adapterRun,
  adapterBefore: { ...adapterRun, adapterRoot: before?.root },
  toolsAtSessionStart: { servers: 0, extension: false, registerCorpusTools: "session_start" },
  toolsAtLoad: { servers: 0, extension: false, registerCorpusTools: "factory" },
} satisfies Record<string, SessionRunOptions>;
type Variant = keyof typeof variants;

interface HostRuns {
  added: Paired<SessionRunResult>;
  move?: Paired<SessionRunResult>;
  attribution: Paired<SessionRunResult>;
}

console.log(
  `Fresh process per run; each comparison alternates its two runs, ${RUNS} pairs (${ATTRIBUTION_RUNS} for the attribution) ` +
    `after a warm-up of each; the adapter with ${SERVERS} servers, ${fixed(TOOLS)} tools from the cache; median (min–max).\n`,
);
try {
  for (const host of benchHosts()) measureHost(host, await runHost(host));
} finally {
  before?.cleanup();
}

async function runHost(host: PiHost): Promise<HostRuns> {
  const compare = (rounds: number, baseline: Variant, candidate: Variant) =>
    alternate(
      rounds,
      () => spawnSessionRun(host, variants[baseline]),
      () => spawnSessionRun(host, variants[candidate]),
    );
  return {
    added: await compare(RUNS, "alone", "adapter"),
    move: before ? await compare(RUNS, "adapterBefore", "adapter") : undefined,
    attribution: await compare(ATTRIBUTION_RUNS, "toolsAtLoad", "toolsAtSessionStart"),
  };
}

function measureHost(host: PiHost, { added, move, attribution }: HostRuns): void {
  const startup = (paired: Paired<SessionRunResult>) => pick(paired, (result) => result.startupMs);
  const rssMB = (paired: Paired<SessionRunResult>) => pick(paired, (result) => result.rssKiB / 1024);
  const difference = ({ baseline, candidate }: Paired<number>) => median(candidate) - median(baseline);
  const adapter = `adapter, ${SERVERS} lazy servers cached`;
  const adapterBefore = `adapter ${BEFORE_MOVE_LABEL}, the same`;

  console.log(`Pi ${host.version}:\n`);
  console.log("Load → session_start done:\n");
  console.log(
    comparisonTable([
      { candidate: adapter, baseline: "Pi alone", samples: startup(added) },
      ...(move ? [{ candidate: adapter, baseline: adapterBefore, samples: startup(move) }] : []),
      {
        candidate: `Pi alone registering the ${fixed(TOOLS)} tools in session_start`,
        baseline: "the same while loading",
        samples: startup(attribution),
      },
    ]),
  );
  console.log("\nRSS after startup and a GC:\n");
  console.log(
    comparisonTable(
      [
        { candidate: adapter, baseline: "Pi alone", samples: rssMB(added) },
        ...(move ? [{ candidate: adapter, baseline: adapterBefore, samples: rssMB(move) }] : []),
      ],
      "MB",
      1,
    ),
  );
  // The call's two sides in the same pair of runs: the adapter's in its run, the bare SDK's in Pi alone's.
  const firstCall = (paired: Paired<SessionRunResult>) => pick(paired, (result) => result.firstCallMs ?? Number.NaN);
  const againstSdk = { baseline: added.baseline.map((result) => result.sdkCallMs ?? Number.NaN), candidate: firstCall(added).candidate };
  console.log("\nFirst result of a lazy server's tool (the call starts it):\n");
  console.log(
    comparisonTable([
      { candidate: "adapter: tool execution start → result", baseline: "bare SDK v2: spawn, connect, call", samples: againstSdk },
      ...(move ? [{ candidate: "adapter now", baseline: `adapter ${BEFORE_MOVE_LABEL}`, samples: firstCall(move) }] : []),
    ]),
  );
  console.log();
  const addedMs = difference(startup(added));
  reportGoal({
    goal: `Pi ${host.version}: startup time added at ${fixed(TOOLS)} tools (median difference to Pi alone, alternating with it)`,
    target: `< ${MAX_ADDED_MS} ms`,
    measured: `+${fixed(addedMs)} ms`,
    met: addedMs < MAX_ADDED_MS,
    margin:
      addedMs < MAX_ADDED_MS
        ? `${fixed(MAX_ADDED_MS - addedMs)} ms to spare`
        : `over by ${fixed(addedMs - MAX_ADDED_MS)} ms; Pi alone takes +${fixed(difference(startup(attribution)))} ms longer to register the same tools in session_start than while loading`,
  });
  const processes = Math.max(
    ...added.candidate.map((result) => result.processes),
    ...(move?.candidate ?? []).map((result) => result.processes),
  );
  reportGoal({
    goal: `Pi ${host.version}: processes started at startup with ${SERVERS} lazy servers`,
    target: "0",
    measured: `${processes} (most in any run)`,
    met: processes === 0,
  });
  const rssAdded = difference(rssMB(added));
  reportFinding(
    `Pi ${host.version}: process RSS with the adapter and ${fixed(TOOLS)} cached tools: ${rssAdded >= 0 ? "+" : ""}${fixed(rssAdded, 1)} MB over Pi alone (medians after startup and a GC).`,
  );
  if (move) {
    const moved = startup(move);
    reportFinding(
      `Pi ${host.version}: startup with ${fixed(TOOLS)} cached tools, the adapter now ÷ before the move to SDK v2, pair by pair: ` +
        `${pairedRatios(moved.candidate, moved.baseline)} (load → session_start done; ${fixed(median(moved.candidate))} ms and ` +
        `${fixed(median(moved.baseline))} ms).`,
    );
  }
  reportFinding(
    `Pi ${host.version}: first result of a lazy server's tool: ${fixed(median(againstSdk.candidate))} ms through the adapter, ` +
      `${fixed(median(againstSdk.baseline))} ms for the bare SDK v2 to spawn, connect and call (pair by pair ` +
      `${pairedRatios(againstSdk.candidate, againstSdk.baseline)}×)` +
      `${move ? `; the adapter now ÷ before the move ${pairedRatios(firstCall(move).candidate, firstCall(move).baseline)}` : ""}.`,
  );
  console.log();
}

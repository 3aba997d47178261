/**
 * 2. Startup, and the Pi process's memory. Each run is a fresh process (bench/session-run.ts) on the host's Node:
 *   - Pi alone (with the two probe extensions only): the baseline;
 *   - Pi with the adapter, 45 corpus servers / 1,052 tools from the cache (lazy servers, none started);
 * alternating, after one unmeasured warm-up of each (jiti's transpile cache). Measured: extension load →
 * session_start done, processes running once startup settled (OS process table), RSS after a GC.
 * The adapter run then has the model call a tool of a lazy corpus server (direct via MCP_DIRECT_TOOLS), whose
 * first call starts the server: time to the first tool result, against the bare SDK spawning the same server,
 * connecting and calling (measured in the baseline run's process).
 * To tell the host's share from ours: Pi alone registering the same 1,052 tools, in session_start (where the
 * adapter does) and while loading extensions.
 * Before and after the move to the SDK v2 in the same run: the adapter of the last commit on SDK v1
 * (bench/before-move.ts) runs as a third variant, alternating with the other two, the same cache and the same call.
 *
 *   node node_modules/jiti/lib/jiti-cli.mjs bench/startup.ts [--quick] [--hosts=0.73.1,0.87.1,1.6.0]
 */
import { BEFORE_MOVE_LABEL, checkoutBeforeMove } from "./before-move.ts";
import { corpusServers } from "./corpus.ts";
import { fixed, median, pairedRatios, reportFinding, reportGoal, runs, spread, table } from "./measure.ts";
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
/** The runs every round makes, in the order of an even round (odd rounds reverse it). */
const compared: Variant[] = before ? ["alone", "adapter", "adapterBefore"] : ["alone", "adapter"];

const ms = (results: SessionRunResult[], pick: (result: SessionRunResult) => number | undefined) =>
  results.map(pick).filter((value): value is number => value !== undefined);

console.log(
  `Fresh process per run; ${RUNS} alternating runs of Pi alone, of the adapter${before ? " and of the adapter before the move" : ""} ` +
    `(${SERVERS} servers, ${fixed(TOOLS)} tools from the cache), ${ATTRIBUTION_RUNS} of each attribution run; median (min–max).\n`,
);
try {
  for (const host of benchHosts()) measureHost(host, await runHost(host));
} finally {
  before?.cleanup();
}

async function runHost(host: PiHost): Promise<Record<Variant, SessionRunResult[]>> {
  const results: Record<Variant, SessionRunResult[]> = {
    alone: [],
    adapter: [],
    adapterBefore: [],
    toolsAtSessionStart: [],
    toolsAtLoad: [],
  };
  for (const variant of compared) await spawnSessionRun(host, variants[variant]);
  for (let run = 0; run < RUNS; run++) {
    // Alternate the order, so drift on a shared machine hits every variant alike.
    const order: Variant[] = run % 2 === 0 ? [...compared] : [...compared].reverse();
    if (run < ATTRIBUTION_RUNS) order.push("toolsAtSessionStart", "toolsAtLoad");
    for (const variant of order) results[variant].push(await spawnSessionRun(host, variants[variant]));
  }
  return results;
}

function measureHost(host: PiHost, results: Record<Variant, SessionRunResult[]>): void {
  const startup = (variant: Variant) => ms(results[variant], (result) => result.startupMs);
  const added = median(startup("adapter")) - median(startup("alone"));
  const addedBefore = median(startup("adapterBefore")) - median(startup("alone"));
  const addedByPiRegistering = median(startup("toolsAtSessionStart")) - median(startup("toolsAtLoad"));

  console.log(`Pi ${host.version}:\n`);
  const rows: [string, Variant][] = [
    ["Pi alone (baseline)", "alone"],
    [`adapter, ${SERVERS} lazy servers cached`, "adapter"],
    ...(before ? [[`adapter ${BEFORE_MOVE_LABEL}, the same`, "adapterBefore"] as [string, Variant]] : []),
    [`Pi alone registering the ${fixed(TOOLS)} tools in session_start`, "toolsAtSessionStart"],
    [`Pi alone registering the ${fixed(TOOLS)} tools while loading`, "toolsAtLoad"],
  ];
  console.log(
    table(
      ["run", "load → session_start done, ms", "processes after startup", "RSS after startup, MB", "peak RSS, MB"],
      rows.map(([label, variant]) => [
        label,
        spread(startup(variant), 0),
        spread(ms(results[variant], (result) => result.processes)),
        spread(
          ms(results[variant], (result) => result.rssKiB),
          1,
          1024,
        ),
        spread(
          ms(results[variant], (result) => result.peakRssKiB),
          1,
          1024,
        ),
      ]),
    ),
  );
  console.log();
  const firstCall = (variant: Variant) => ms(results[variant], (result) => result.firstCallMs);
  const sdkCall = ms(results.alone, (result) => result.sdkCallMs);
  console.log(
    table(
      ["first result of a lazy server's tool (the call starts it)", "ms", "ratio"],
      [
        ["bare SDK v2: spawn, connect, call", spread(sdkCall), "1.00"],
        ["adapter: tool execution start → result", spread(firstCall("adapter")), fixed(median(firstCall("adapter")) / median(sdkCall), 2)],
        ...(before
          ? [
              [
                `adapter ${BEFORE_MOVE_LABEL}`,
                spread(firstCall("adapterBefore")),
                fixed(median(firstCall("adapterBefore")) / median(sdkCall), 2),
              ],
            ]
          : []),
      ],
    ),
  );
  console.log();
  reportGoal({
    goal: `Pi ${host.version}: startup time added at ${fixed(TOOLS)} tools (median difference to Pi alone)`,
    target: `< ${MAX_ADDED_MS} ms`,
    measured: `+${fixed(added)} ms${before ? ` (before the move to SDK v2: +${fixed(addedBefore)} ms)` : ""}`,
    met: added < MAX_ADDED_MS,
    margin:
      added < MAX_ADDED_MS
        ? `${fixed(MAX_ADDED_MS - added)} ms to spare`
        : `over by ${fixed(added - MAX_ADDED_MS)} ms; Pi alone takes +${fixed(addedByPiRegistering)} ms longer to register the same tools in session_start than while loading`,
  });
  const processes = Math.max(...ms(results.adapter, (result) => result.processes));
  reportGoal({
    goal: `Pi ${host.version}: processes started at startup with ${SERVERS} lazy servers`,
    target: "0",
    measured: `${processes} (most in any run)`,
    met: processes === 0,
  });
  const rssAdded = (median(ms(results.adapter, (result) => result.rssKiB)) - median(ms(results.alone, (result) => result.rssKiB))) / 1024;
  reportFinding(
    `Pi ${host.version}: process RSS with the adapter and ${fixed(TOOLS)} cached tools: ${rssAdded >= 0 ? "+" : ""}${fixed(rssAdded, 1)} MB over Pi alone (medians after startup and a GC).`,
  );
  if (before) {
    reportFinding(
      `Pi ${host.version}: startup with ${fixed(TOOLS)} cached tools, the adapter now ÷ before the move to SDK v2, run by run: ` +
        `${pairedRatios(startup("adapter"), startup("adapterBefore"))} (load → session_start done; ` +
        `${fixed(median(startup("adapter")))} ms and ${fixed(median(startup("adapterBefore")))} ms, Pi alone ${fixed(median(startup("alone")))} ms).`,
    );
  }
  const firstCallNow = median(firstCall("adapter"));
  reportFinding(
    `Pi ${host.version}: first result of a lazy server's tool: ${fixed(firstCallNow)} ms through the adapter` +
      `${before ? ` (${fixed(median(firstCall("adapterBefore")))} ms before the move)` : ""}, ${fixed(median(sdkCall))} ms for the ` +
      `bare SDK v2 to spawn, connect and call (${fixed(firstCallNow / median(sdkCall), 2)}×).`,
  );
  console.log();
}

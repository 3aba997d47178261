/**
 * 4. Call overhead: a tool call through the adapter — the tool Pi registered for it, i.e. `executeMcpTool` on a
 * connected server, then the conversion of the result for Pi — against the bare SDK's `client.callTool` on another
 * process of the same corpus server, in the same run. Calls alternate between the two (which goes first alternates
 * too), after a warm-up, in blocks: the ratio is taken per block and its median (min–max) reported, so that a burst
 * of load from elsewhere skews one block rather than the whole figure. Prints p50/p95 per side over all calls too.
 * Runs on the host of this process (Pi 0.73.1 on Node 20, 0.87.1 or 1.x with PI_TEST_HOST on Node 22).
 *
 *   node node_modules/jiti/lib/jiti-cli.mjs bench/call-overhead.ts [--quick]
 */
import type { ToolDefinition } from "@mariozechner/pi-coding-agent";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { currentHost, REPO_ROOT } from "../test/helpers/hosts.ts";
import { startSession } from "../test/helpers/pi-session.ts";
import { CORPUS_SERVER_SCRIPT, firstCorpusServers, prepareCorpusAgent } from "./corpus.ts";
import { fixed, median, percentile, reportGoal, runs, spread, table } from "./measure.ts";

const MAX_RATIO = 1.1;
const BLOCKS = runs(10, 2);
const CALLS_PER_BLOCK = 200;
/** Enough for the JIT to settle on both paths: with fewer, the ratio drifts from run to run. */
const WARM_UP_CALLS = runs(500, 100);
const SERVER = "everything";
const TOOL = "echo";
const PI_NAME = `${SERVER}__${TOOL}`;
const ARGS = { message: "hello from the bench" };

const host = currentHost();
const agent = await prepareCorpusAgent(firstCorpusServers(1));
const pi = await startSession({ extensions: [`${REPO_ROOT}/pi-mcp-adapter.ts`], agentDir: agent.agentDir, cwd: agent.cwd });
const client = new Client({ name: "bench", version: "0" });
try {
  // Pi's own definition of the tool, as the adapter registered it (the session's registry, not a copy).
  const definition = (pi.session as unknown as { getToolDefinition(name: string): ToolDefinition | undefined }).getToolDefinition(PI_NAME);
  if (!definition) throw new Error(`Pi has no tool ${PI_NAME}`);
  const viaAdapter = async () => {
    const result = await definition.execute("bench", ARGS, undefined, undefined, undefined as never);
    if (result.content.length !== 1) throw new Error("unexpected adapter result");
  };
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [CORPUS_SERVER_SCRIPT, SERVER], stderr: "ignore" }));
  const viaSdk = async () => {
    const result = await client.callTool({ name: TOOL, arguments: ARGS });
    if (result.isError) throw new Error("unexpected SDK result");
  };
  const time = async (call: () => Promise<void>) => {
    const start = performance.now();
    await call();
    return performance.now() - start;
  };
  for (let i = 0; i < WARM_UP_CALLS; i++) {
    await viaAdapter(); // the first call starts the lazy server
    await viaSdk();
  }
  const adapter: number[][] = [];
  const sdk: number[][] = [];
  for (let block = 0; block < BLOCKS; block++) {
    adapter.push([]);
    sdk.push([]);
    for (let i = 0; i < CALLS_PER_BLOCK; i++) {
      if (i % 2 === 0) {
        adapter[block].push(await time(viaAdapter));
        sdk[block].push(await time(viaSdk));
      } else {
        sdk[block].push(await time(viaSdk));
        adapter[block].push(await time(viaAdapter));
      }
    }
  }
  const blockRatios = (p: number) => adapter.map((times, block) => percentile(times, p) / percentile(sdk[block], p));
  const addedUs = adapter.map((times, block) => (percentile(times, 0.5) - percentile(sdk[block], 0.5)) * 1000);
  const allAdapter = adapter.flat();
  const allSdk = sdk.flat();
  const row = (label: string, values: number[]) => [label, fixed(percentile(values, 0.5), 3), fixed(percentile(values, 0.95), 3)];
  const ratio50 = median(blockRatios(0.5));
  console.log(
    `${BLOCKS} blocks of ${CALLS_PER_BLOCK} alternating calls each of ${SERVER}/${TOOL} (corpus server over stdio) after ` +
      `${WARM_UP_CALLS} warm-up calls, Pi ${host.version}. Ratios: per block, median (min–max).\n`,
  );
  console.log(
    table(
      ["path", "p50 ms", "p95 ms"],
      [
        row("bare SDK client.callTool (baseline)", allSdk),
        row("adapter: Pi's tool → executeMcpTool", allAdapter),
        ["ratio", spread(blockRatios(0.5), 2), spread(blockRatios(0.95), 2)],
      ],
    ),
  );
  console.log();
  reportGoal({
    goal: `Pi ${host.version}: call latency through the adapter ÷ bare SDK (p50)`,
    target: `≤ ${fixed(MAX_RATIO, 2)}`,
    measured: `${spread(blockRatios(0.5), 2)} (p95: ${fixed(median(blockRatios(0.95)), 2)})`,
    met: ratio50 <= MAX_RATIO,
    margin: `the adapter adds ${fixed(median(addedUs), 0)} µs per call (p50)${ratio50 <= MAX_RATIO ? "" : `, ${pointsOver(ratio50)} over`}`,
  });
} finally {
  await client.close();
  await pi.dispose();
  await agent.cleanup();
}

/** How far a ratio is over the goal, in percentage points of the bare SDK's latency. */
function pointsOver(ratio: number): string {
  const points = Math.round((ratio - MAX_RATIO) * 100);
  return `${points} ${points === 1 ? "point" : "points"}`;
}

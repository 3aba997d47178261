/**
 * 4. Call overhead: a tool call through the adapter against the bare SDK v2 client's `client.callTool`, each on its
 * own process of the same server, in the same run:
 *   - `McpServerManager.callTool` (the goal: the adapter's connection layer against the SDK it is built on);
 *   - Pi's tool as the adapter registered it (`executeMcpTool` on the connected server, then the result converted
 *     for Pi): what a model's call costs;
 *   - the bare client over our stdio transport (connection/stdio-transport.ts: the server in a process group of its
 *     own, the whole environment passed, our line reader), to tell the transport's share from the manager's code;
 *   - the bare client over the SDK's transport with the server started by `setsid` (Linux): in a session of its own,
 *     as `detached` starts it in ours (Node has no other way to a process group), which on Linux also puts it in a
 *     scheduling group of its own (autogroup): under load, that alone makes its answers slower;
 * against a 2025-era server (the corpus's `everything`, on SDK v1), and the manager against a 2026-07-28 server
 * (test/fixtures/servers/v2-server.mjs over stdio, where every request carries its `_meta` envelope) too. And the
 * manager with the protocol trace on (`/mcp trace on`: a line per message written to a file) against it off.
 *
 * Each comparison runs on its own (one after the other), its two paths alternating call by call (bench/measure.ts
 * `alternate`: which goes first alternates too), so each server waits only for the other's call, as in a burst of
 * calls. In blocks, each on fresh server processes (and, for Pi's tool, a fresh Pi session) after a warm-up of its
 * own: on a loaded machine how the scheduler treats one process sways its latency for as long as it lives, so a run
 * on one set of processes measures that set's luck. A block's p50 (and p90) of each side make a pair; the ratio is
 * taken per pair and its median (min–max) reported, so that a burst of load from elsewhere skews one block rather
 * than the whole figure. Runs on the host of this process (Pi 0.73.1 on Node 20, 0.87.1 or 1.x with PI_TEST_HOST on
 * Node 22).
 *
 *   node node_modules/jiti/lib/jiti-cli.mjs bench/call-overhead.ts [--quick]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ToolDefinition } from "@mariozechner/pi-coding-agent";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import type { Transport } from "@modelcontextprotocol/client";
import { GroupedStdioTransport } from "../connection/stdio-transport.ts";
import { ProtocolTrace } from "../connection/protocol-trace.ts";
import { McpServerManager } from "../server-manager.ts";
import { currentHost, REPO_ROOT } from "../test/helpers/hosts.ts";
import { startSession } from "../test/helpers/pi-session.ts";
import { CORPUS_SERVER_SCRIPT, firstCorpusServers, prepareCorpusAgent } from "./corpus.ts";
import { alternate, comparisonTable, fixed, median, type Paired, percentile, pick, reportGoal, runs, spread, timed } from "./measure.ts";

const MAX_RATIO = 1.1;
const BLOCKS = runs(12, 2);
const CALLS_PER_BLOCK = 200;
/** Calls per path, per block on its fresh processes; a comparison's first block's is longer, for the JIT to settle. */
const WARM_UP_CALLS = runs(100, 50);
const FIRST_WARM_UP_CALLS = runs(500, 100);
const SERVER = "everything";
const TOOL = "echo";
const PI_NAME = `${SERVER}__${TOOL}`;
const ARGS = { message: "hello from the bench" };
const CORPUS_SERVER = { command: process.execPath, args: [CORPUS_SERVER_SCRIPT, SERVER] };
const V2_SERVER = { command: process.execPath, args: [join(REPO_ROOT, "test/fixtures/servers/v2-server.mjs")] };
const V2_ARGS = { text: "hello from the bench" };

type Path = "sdk" | "sdkOwnSession" | "sdkOurTransport" | "manager" | "pi" | "sdk2026" | "manager2026" | "managerTraced";
/** The comparisons: each path against the bare client on the same server. */
const COMPARISONS = [
  { path: "sdkOwnSession", base: "sdk", label: "2025 era: bare SDK v2 client, the server in a session of its own (setsid)" },
  { path: "sdkOurTransport", base: "sdk", label: "2025 era: bare SDK v2 client over our stdio transport" },
  { path: "manager", base: "sdk", label: "2025 era: McpServerManager.callTool" },
  { path: "pi", base: "sdk", label: "2025 era: Pi's tool → executeMcpTool" },
  { path: "manager2026", base: "sdk2026", label: "2026-07-28 (v2-server.mjs echo): McpServerManager.callTool" },
  { path: "managerTraced", base: "manager", label: "2025 era: McpServerManager.callTool, the protocol trace on" },
] as const satisfies readonly { path: Path; base: Path; label: string }[];
type Comparison = (typeof COMPARISONS)[number];
const BASE_LABELS: Record<Comparison["base"], string> = {
  sdk: "bare SDK v2 client.callTool",
  sdk2026: "bare SDK v2 client.callTool, 2026-07-28",
  manager: "McpServerManager.callTool, the trace off",
};

/** One path, connected to a server process of its own. */
interface OpenPath {
  call(): Promise<void>;
  close(): Promise<void>;
}

const host = currentHost();
const agent = await prepareCorpusAgent(firstCorpusServers(1));
const managerDir = mkdtempSync(join(tmpdir(), "bench-call-overhead-"));
try {
  // Per comparison, per block: each side's call times, ms.
  const times = new Map<Comparison, Paired<number[]>>();
  for (const comparison of COMPARISONS) {
    const blocks: Paired<number[]> = { baseline: [], candidate: [] };
    for (let block = 0; block < BLOCKS; block++) {
      const base = await openPath(comparison.base);
      try {
        const path = await openPath(comparison.path);
        try {
          const measured = await alternate(
            CALLS_PER_BLOCK,
            () => timed(base.call),
            () => timed(path.call),
            block === 0 ? FIRST_WARM_UP_CALLS : WARM_UP_CALLS,
          );
          blocks.baseline.push(measured.baseline);
          blocks.candidate.push(measured.candidate);
        } finally {
          await path.close();
        }
      } finally {
        await base.close();
      }
    }
    times.set(comparison, blocks);
  }
  report(times);
} finally {
  rmSync(managerDir, { recursive: true, force: true });
  await agent.cleanup();
}

function openPath(path: Path): Promise<OpenPath> {
  switch (path) {
    case "sdk":
      return openClient(new StdioClientTransport({ ...CORPUS_SERVER, stderr: "ignore" }), TOOL, ARGS);
    case "sdkOwnSession": {
      const ownSession = { command: "setsid", args: [CORPUS_SERVER.command, ...CORPUS_SERVER.args] };
      return openClient(new StdioClientTransport({ ...ownSession, stderr: "ignore" }), TOOL, ARGS);
    }
    case "sdkOurTransport": {
      const ourTransport = { ...CORPUS_SERVER, env: process.env as Record<string, string>, maxBufferSize: 2 ** 24 };
      return openClient(new GroupedStdioTransport(ourTransport), TOOL, ARGS);
    }
    case "sdk2026":
      return openClient(new StdioClientTransport({ ...V2_SERVER, stderr: "ignore" }), TOOL, V2_ARGS, "modern");
    case "manager":
      return openManager(SERVER, CORPUS_SERVER, ARGS);
    case "manager2026":
      return openManager("v2", V2_SERVER, V2_ARGS, "modern");
    case "managerTraced":
      return openManager(SERVER, CORPUS_SERVER, ARGS, undefined, true);
    case "pi":
      return openPiTool();
  }
}

/**
 * The bare SDK v2 client, listing first as the manager does (its callTool reads the listed tool's output schema);
 * with `era: "modern"`, in `auto` negotiation and checked to speak 2026-07-28.
 */
async function openClient(transport: Transport, tool: string, args: Record<string, unknown>, era?: "modern"): Promise<OpenPath> {
  const client = new Client({ name: "bench", version: "0" }, era ? { versionNegotiation: { mode: "auto" } } : {});
  const close = () => client.close();
  try {
    await client.connect(transport);
    if (era && client.getProtocolEra() !== era) throw new Error("the v2 server was not spoken to in the 2026 era");
    await client.listTools();
    return { call: async () => checked(await client.callTool({ name: tool, arguments: args })), close };
  } catch (error) {
    await close();
    throw error;
  }
}

async function openManager(
  name: string,
  server: typeof CORPUS_SERVER,
  args: Record<string, unknown>,
  era?: "modern",
  traced = false,
): Promise<OpenPath> {
  const trace = new ProtocolTrace(managerDir, Number.POSITIVE_INFINITY);
  if (traced) trace.on();
  // Every manager is given a trace, as in a Pi session: off, it is what each message pays when nobody traces.
  const manager = new McpServerManager({ agentDir: managerDir, trace });
  const close = () => manager.closeAll().then(() => trace.off());
  try {
    const connection = await manager.connect({ name, ...server, source: { kind: "user", path: "bench" } });
    if (era && connection.protocol.era !== era) throw new Error("the manager did not speak the 2026 era to the v2 server");
    return { call: async () => checked(await manager.callTool(name, TOOL, args)), close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** Pi's own definition of the tool, as the adapter registered it (the session's registry, not a copy). */
async function openPiTool(): Promise<OpenPath> {
  const pi = await startSession({ extensions: [`${REPO_ROOT}/pi-mcp-adapter.ts`], agentDir: agent.agentDir, cwd: agent.cwd });
  const close = () => pi.dispose();
  const session = pi.session as unknown as { getToolDefinition(name: string): ToolDefinition | undefined };
  const definition = session.getToolDefinition(PI_NAME);
  if (!definition) {
    await close();
    throw new Error(`Pi has no tool ${PI_NAME}`);
  }
  return {
    call: async () => {
      // The first call starts the lazy server (in the warm-up).
      const result = await definition.execute("bench", ARGS, undefined, undefined, undefined as never);
      if (result.content.length !== 1) throw new Error("unexpected adapter result");
    },
    close,
  };
}

function checked(result: { isError?: unknown }): void {
  if (result.isError) throw new Error(`unexpected error result: ${JSON.stringify(result)}`);
}

function report(times: Map<Comparison, Paired<number[]>>): void {
  const perBlock = (comparison: Comparison, p: number) => pick(times.get(comparison)!, (values) => percentile(values, p));
  const ratios = (comparison: Comparison, p: number) => {
    const { baseline, candidate } = perBlock(comparison, p);
    return candidate.map((value, block) => value / baseline[block]);
  };
  const addedUs = (comparison: Comparison) => {
    const { baseline, candidate } = perBlock(comparison, 0.5);
    return median(candidate.map((value, block) => (value - baseline[block]) * 1000));
  };
  const rows = (p: number) =>
    COMPARISONS.map((comparison) => ({
      candidate: comparison.label,
      baseline: BASE_LABELS[comparison.base],
      samples: perBlock(comparison, p),
    }));
  console.log(
    `Each comparison on its own: ${BLOCKS} blocks, each on fresh server processes (and a fresh Pi session for Pi's ` +
      `tool), alternating its two paths call by call, ${CALLS_PER_BLOCK} calls each, after a warm-up (${FIRST_WARM_UP_CALLS} ` +
      `calls each in the first block, ${WARM_UP_CALLS} in the others), Pi ${host.version}. The corpus's everything/echo ` +
      "(2025 era) unless named. Per block, each side's p50 (p90); median (min–max) over the blocks, ratios pair by pair.\n",
  );
  console.log("p50:\n");
  console.log(comparisonTable(rows(0.5), "ms", 3));
  console.log("\np90:\n");
  console.log(comparisonTable(rows(0.9), "ms", 3));
  console.log();
  const [ownSession, ourTransport, manager, pi, manager2026, traced] = COMPARISONS;
  const ratio50 = median(ratios(manager, 0.5));
  const ratio = (comparison: Comparison, q: number) => fixed(median(ratios(comparison, q)), 2);
  reportGoal({
    goal: `Pi ${host.version}: call latency, McpServerManager.callTool ÷ bare SDK v2 client (p50)`,
    target: `≤ ${fixed(MAX_RATIO, 2)}`,
    measured:
      `${spread(ratios(manager, 0.5), 2)} (p90: ${ratio(manager, 0.9)}; Pi's tool: ${ratio(pi, 0.5)}; ` +
      `2026 server: ${ratio(manager2026, 0.5)})`,
    met: ratio50 <= MAX_RATIO,
    margin:
      `per call (p50), the manager ${signedUs(addedUs(manager))} (the bare client over our stdio transport ` +
      `${signedUs(addedUs(ourTransport))}, with its server in a session of its own ${signedUs(addedUs(ownSession))}), ` +
      `Pi's tool ${signedUs(addedUs(pi))}` +
      `${ratio50 <= MAX_RATIO ? "" : `; ${pointsOver(ratio50)} over`}`,
  });
  console.log(
    `The protocol trace on ÷ off (McpServerManager.callTool, p50): ${spread(ratios(traced, 0.5), 2)} ` +
      `(p90: ${ratio(traced, 0.9)}), ${signedUs(addedUs(traced))} per call`,
  );
}

function signedUs(us: number): string {
  return `${us < 0 ? "−" : "+"}${fixed(Math.abs(us))} µs`;
}

/** How far a ratio is over the goal, in percentage points of the bare SDK's latency. */
function pointsOver(ratio: number): string {
  // One decimal: a ratio shown as 1.10 may still be over it.
  const points = fixed((ratio - MAX_RATIO) * 100, 1);
  return `${points} ${points === "1.0" ? "point" : "points"}`;
}

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
 * (test/fixtures/servers/v2-server.mjs over stdio, where every request carries its `_meta` envelope) too.
 *
 * Each comparison alternates its two paths call by call (which goes first alternates too), so each server waits
 * only for the other's call, as in a burst of calls: with every path taking turns, each server would sit idle for
 * several calls, and waking it would add to both sides and dilute the ratio. In blocks, each on fresh server processes
 * (and a fresh Pi session) after a warm-up of its own: on a loaded machine how the scheduler treats one process
 * sways its latency for as long as it lives, so a run on one set of processes measures that set's luck. The ratio is
 * taken per block and its median (min–max) reported, so that a burst of load from elsewhere skews one block rather
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
import { GroupedStdioTransport } from "../connection/stdio-transport.ts";
import { McpServerManager } from "../server-manager.ts";
import { currentHost, REPO_ROOT } from "../test/helpers/hosts.ts";
import { startSession } from "../test/helpers/pi-session.ts";
import { CORPUS_SERVER_SCRIPT, firstCorpusServers, prepareCorpusAgent } from "./corpus.ts";
import { fixed, median, percentile, reportGoal, runs, spread, table } from "./measure.ts";

const MAX_RATIO = 1.1;
const BLOCKS = runs(12, 2);
const CALLS_PER_BLOCK = 200;
/** Calls per path, per block on its fresh processes; the first block's is longer, for the JIT to settle on every path. */
const WARM_UP_CALLS = runs(100, 50);
const FIRST_WARM_UP_CALLS = runs(500, 100);
const SERVER = "everything";
const TOOL = "echo";
const PI_NAME = `${SERVER}__${TOOL}`;
const ARGS = { message: "hello from the bench" };
const CORPUS_SERVER = { command: process.execPath, args: [CORPUS_SERVER_SCRIPT, SERVER] };
const V2_SERVER = { command: process.execPath, args: [join(REPO_ROOT, "test/fixtures/servers/v2-server.mjs")] };
const V2_ARGS = { text: "hello from the bench" };

type Path = "sdk" | "sdkOwnSession" | "sdkOurTransport" | "manager" | "pi" | "sdk2026" | "manager2026";
/** The comparisons: each path against the bare client on the same server, alternating call by call. */
const COMPARISONS = [
  { path: "sdkOwnSession", base: "sdk", label: "2025 era: bare SDK v2 client, the server in a session of its own (setsid)" },
  { path: "sdkOurTransport", base: "sdk", label: "2025 era: bare SDK v2 client over our stdio transport" },
  { path: "manager", base: "sdk", label: "2025 era: McpServerManager.callTool" },
  { path: "pi", base: "sdk", label: "2025 era: Pi's tool → executeMcpTool" },
  { path: "manager2026", base: "sdk2026", label: "2026-07-28 (v2-server.mjs echo): McpServerManager.callTool" },
] as const satisfies readonly { path: Path; base: Path; label: string }[];
type Comparison = (typeof COMPARISONS)[number];
/** Per comparison, per block: the path's call times and the baseline's, ms. */
type Times = Map<Comparison, { path: number[][]; base: number[][] }>;

interface OpenPaths {
  calls: Record<Path, () => Promise<void>>;
  close(): Promise<void>;
}

const host = currentHost();
const agent = await prepareCorpusAgent(firstCorpusServers(1));
const managerDir = mkdtempSync(join(tmpdir(), "bench-call-overhead-"));
try {
  const times: Times = new Map(COMPARISONS.map((comparison) => [comparison, { path: [], base: [] }]));
  for (let block = 0; block < BLOCKS; block++) {
    const open = await openPaths();
    try {
      const warmUp = block === 0 ? FIRST_WARM_UP_CALLS : WARM_UP_CALLS;
      // The comparisons' order rotates too.
      const shift = block % COMPARISONS.length;
      for (const comparison of [...COMPARISONS.slice(shift), ...COMPARISONS.slice(0, shift)]) {
        const pair = [open.calls[comparison.path], open.calls[comparison.base]];
        for (let i = 0; i < warmUp; i++) for (const call of pair) await call();
        const measured = { path: [] as number[], base: [] as number[] };
        for (let i = 0; i < CALLS_PER_BLOCK; i++) {
          for (const side of i % 2 === 0 ? (["path", "base"] as const) : (["base", "path"] as const)) {
            const start = performance.now();
            await open.calls[comparison[side]]();
            measured[side].push(performance.now() - start);
          }
        }
        times.get(comparison)!.path.push(measured.path);
        times.get(comparison)!.base.push(measured.base);
      }
    } finally {
      await open.close();
    }
  }
  report(times);
} finally {
  rmSync(managerDir, { recursive: true, force: true });
  await agent.cleanup();
}

/** Every path connected, each to a server process of its own started for this block. */
async function openPaths(): Promise<OpenPaths> {
  const pi = await startSession({ extensions: [`${REPO_ROOT}/pi-mcp-adapter.ts`], agentDir: agent.agentDir, cwd: agent.cwd });
  const manager = new McpServerManager({ agentDir: managerDir });
  const client = new Client({ name: "bench", version: "0" });
  const clientOurTransport = new Client({ name: "bench", version: "0" });
  const clientOwnSession = new Client({ name: "bench", version: "0" });
  const client2026 = new Client({ name: "bench", version: "0" }, { versionNegotiation: { mode: "auto" } });
  const close = async () => {
    await Promise.all([client.close(), clientOurTransport.close(), clientOwnSession.close(), client2026.close(), manager.closeAll()]);
    await pi.dispose();
  };
  try {
    // Pi's own definition of the tool, as the adapter registered it (the session's registry, not a copy).
    const session = pi.session as unknown as { getToolDefinition(name: string): ToolDefinition | undefined };
    const definition = session.getToolDefinition(PI_NAME);
    if (!definition) throw new Error(`Pi has no tool ${PI_NAME}`);
    await client.connect(new StdioClientTransport({ ...CORPUS_SERVER, stderr: "ignore" }));
    const ourTransport = { ...CORPUS_SERVER, env: process.env as Record<string, string>, maxBufferSize: 2 ** 24 };
    await clientOurTransport.connect(new GroupedStdioTransport(ourTransport));
    const ownSession = { command: "setsid", args: [CORPUS_SERVER.command, ...CORPUS_SERVER.args] };
    await clientOwnSession.connect(new StdioClientTransport({ ...ownSession, stderr: "ignore" }));
    await client2026.connect(new StdioClientTransport({ ...V2_SERVER, stderr: "ignore" }));
    if (client2026.getProtocolEra() !== "modern") throw new Error("the v2 server was not spoken to in the 2026 era");
    await manager.connect({ name: SERVER, ...CORPUS_SERVER, source: { kind: "user", path: "bench" } });
    const v2 = await manager.connect({ name: "v2", ...V2_SERVER, source: { kind: "user", path: "bench" } });
    if (v2.protocol.era !== "modern") throw new Error("the manager did not speak the 2026 era to the v2 server");
    // The bare clients list first too: their callTool reads the listed tool (output schema), as the manager's does.
    await Promise.all([client.listTools(), clientOurTransport.listTools(), clientOwnSession.listTools(), client2026.listTools()]);
    const checked = (result: { isError?: unknown }) => {
      if (result.isError) throw new Error(`unexpected error result: ${JSON.stringify(result)}`);
    };
    const calls: Record<Path, () => Promise<void>> = {
      sdk: async () => checked(await client.callTool({ name: TOOL, arguments: ARGS })),
      sdkOwnSession: async () => checked(await clientOwnSession.callTool({ name: TOOL, arguments: ARGS })),
      sdkOurTransport: async () => checked(await clientOurTransport.callTool({ name: TOOL, arguments: ARGS })),
      manager: async () => checked(await manager.callTool(SERVER, TOOL, ARGS)),
      pi: async () => {
        // The first call starts the lazy server (in the warm-up).
        const result = await definition.execute("bench", ARGS, undefined, undefined, undefined as never);
        if (result.content.length !== 1) throw new Error("unexpected adapter result");
      },
      sdk2026: async () => checked(await client2026.callTool({ name: TOOL, arguments: V2_ARGS })),
      manager2026: async () => checked(await manager.callTool("v2", TOOL, V2_ARGS)),
    };
    return { calls, close };
  } catch (error) {
    await close();
    throw error;
  }
}

function report(times: Times): void {
  const of = (comparison: Comparison) => times.get(comparison)!;
  const blockRatios = (comparison: Comparison, p: number) =>
    of(comparison).path.map((values, block) => percentile(values, p) / percentile(of(comparison).base[block], p));
  const addedUs = (comparison: Comparison) =>
    median(of(comparison).path.map((values, block) => (percentile(values, 0.5) - percentile(of(comparison).base[block], 0.5)) * 1000));
  const p = (values: number[][], q: number) => fixed(percentile(values.flat(), q), 3);
  console.log(
    `${BLOCKS} blocks, each on fresh server processes and a fresh Pi session; in each, every comparison alternates its ` +
      `two paths call by call, ${CALLS_PER_BLOCK} calls each, after a warm-up (${FIRST_WARM_UP_CALLS} calls each in the ` +
      `first block, ${WARM_UP_CALLS} in the others), Pi ${host.version}. Baseline: the bare SDK v2 client.callTool on the ` +
      "same server (the corpus's everything/echo, 2025 era, unless named). Ratios per block, median (min–max).\n",
  );
  console.log(
    table(
      ["path", "p50 ms", "p90 ms", "bare p50 ms", "bare p90 ms", "p50 ratio", "p90 ratio", "added (p50)"],
      COMPARISONS.map((comparison) => [
        comparison.label,
        p(of(comparison).path, 0.5),
        p(of(comparison).path, 0.9),
        p(of(comparison).base, 0.5),
        p(of(comparison).base, 0.9),
        spread(blockRatios(comparison, 0.5), 2),
        spread(blockRatios(comparison, 0.9), 2),
        signedUs(addedUs(comparison)),
      ]),
    ),
  );
  console.log();
  const [ownSession, ourTransport, manager, pi, manager2026] = COMPARISONS;
  const ratio50 = median(blockRatios(manager, 0.5));
  const ratio = (comparison: Comparison, q: number) => fixed(median(blockRatios(comparison, q)), 2);
  reportGoal({
    goal: `Pi ${host.version}: call latency, McpServerManager.callTool ÷ bare SDK v2 client (p50)`,
    target: `≤ ${fixed(MAX_RATIO, 2)}`,
    measured:
      `${spread(blockRatios(manager, 0.5), 2)} (p90: ${ratio(manager, 0.9)}; Pi's tool: ${ratio(pi, 0.5)}; ` +
      `2026 server: ${ratio(manager2026, 0.5)})`,
    met: ratio50 <= MAX_RATIO,
    margin:
      `per call (p50), the manager ${signedUs(addedUs(manager))} (the bare client over our stdio transport ` +
      `${signedUs(addedUs(ourTransport))}, with its server in a session of its own ${signedUs(addedUs(ownSession))}), ` +
      `Pi's tool ${signedUs(addedUs(pi))}` +
      `${ratio50 <= MAX_RATIO ? "" : `; ${pointsOver(ratio50)} over`}`,
  });
}

function signedUs(us: number): string {
  return `${us < 0 ? "−" : "+"}${fixed(Math.abs(us))} µs`;
}

/** How far a ratio is over the goal, in percentage points of the bare SDK's latency. */
function pointsOver(ratio: number): string {
  const points = Math.round((ratio - MAX_RATIO) * 100);
  return `${points} ${points === 1 ? "point" : "points"}`;
}

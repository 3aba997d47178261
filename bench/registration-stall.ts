/**
 * Registration stall: how long Pi's event loop is blocked while the adapter registers tools it did not have in the
 * cache (a server listed for the first time, in the background after `session_start`). Once the session is bound,
 * each `registerTool` makes Pi rebuild its whole tool registry, so registering n tools one by one costs n rebuilds
 * of up to n tools; nothing else runs meanwhile (no keystroke, no model stream). Measured as the longest gap
 * between ticks of a 5 ms timer, from the session's start until every tool is known; a run with no tools to
 * register gives the baseline of the same run. Runs on the host of this process (Pi 0.73.1 on Node 20, 0.87.1 or
 * 1.x with PI_TEST_HOST on Node 22).
 *
 *   node node_modules/jiti/lib/jiti-cli.mjs bench/registration-stall.ts [--quick]
 */
import { currentHost, REPO_ROOT } from "../test/helpers/hosts.ts";
import { mcpDirs } from "../test/helpers/mcp-setup.ts";
import { startSession } from "../test/helpers/pi-session.ts";
import { fixed, median, reportFinding, runs, table } from "./measure.ts";

const FAULTY_SERVER = `${REPO_ROOT}/test/fixtures/servers/faulty-server.mjs`;
/** The fixture's own tools, listed besides the extra ones. */
const FIXTURE_TOOLS = 6;
const TICK_MS = 5;
const RUNS = runs(3, 1);

interface Case {
  label: string;
  servers: number;
  tools: number;
  resources?: number;
}

const CASES: Case[] = [
  { label: "no tool to register (baseline)", servers: 1, tools: 0 },
  { label: "1 server × 1,000 tools", servers: 1, tools: 1_000 },
  { label: "1 server × 2,000 tools", servers: 1, tools: 2_000 },
  { label: "1 server × 4,000 tools", servers: 1, tools: 4_000 },
  { label: "20 servers × 300 tools", servers: 20, tools: 300 },
  { label: "1 server × 4,000 resources", servers: 1, tools: 0, resources: 4_000 },
];

/** The longest event-loop stall (ms) from the session's start until `/mcp status` shows every server's tools. */
async function measure(run: Case): Promise<number> {
  const servers = Object.fromEntries(
    Array.from({ length: run.servers }, (_, index) => [
      `s${index + 1}`,
      {
        command: process.execPath,
        args: [FAULTY_SERVER],
        lifecycle: "eager",
        env: { FAULT_EXTRA_TOOLS: String(run.tools), ...(run.resources ? { FAULT_RESOURCES: String(run.resources) } : {}) },
      },
    ]),
  );
  const dirs = await mcpDirs({ mcpServers: servers });
  const pi = await startSession({ extensions: [`${REPO_ROOT}/pi-mcp-adapter.ts`], agentDir: dirs.agentDir, cwd: dirs.cwd });
  // From the session's start on (loading the extension is measured by the startup bench): the servers are listed
  // in the background, which takes their processes a few hundred ms to start.
  let longest = 0;
  let last = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last - TICK_MS);
    last = now;
  }, TICK_MS);
  try {
    const deadline = Date.now() + 120_000;
    for (;;) {
      const { text } = await pi.command("/mcp status");
      const connected = text.match(/✓ s\d+: connected/g)?.length ?? 0;
      if (connected === run.servers) break;
      if (Date.now() > deadline) throw new Error(`the servers did not all connect:\n${text}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return longest;
  } finally {
    clearInterval(ticker);
    await pi.dispose();
    await dirs.cleanup();
  }
}

const host = currentHost();
const rows: string[][] = [];
for (const run of CASES) {
  const stalls: number[] = [];
  for (let index = 0; index < RUNS; index++) stalls.push(await measure(run));
  const total = run.servers * (run.tools + FIXTURE_TOOLS) + (run.resources ?? 0);
  rows.push([run.label, fixed(total), `${fixed(median(stalls))} ms`, stalls.map((stall) => fixed(stall)).join(", ")]);
  if (run.tools === 4_000)
    reportFinding(
      `Pi ${host.version}: longest event-loop stall while registering 4,000 uncached tools of one server: ${fixed(median(stalls))} ms`,
    );
}
console.log(`Pi ${host.version}, median of ${RUNS} run(s) each:\n`);
console.log(table(["uncached server(s)", "tools and resources listed", "longest stall", "runs (ms)"], rows));

/**
 * Ten Pi sessions started at once on one agent dir, ten lazy servers none of them has cached (stdio fixture servers
 * of 200 tools): how long until every session knows its tools (each session's model has ToolSearch load the echo tool
 * of each server, which waits for the startup's listings, then answers; the time is until the last of the ten
 * exited), and how many server processes were started to list them.
 *
 * - shared: the ten sessions share one config, as terminal panes or a subagent extension's children do: a server one
 *   session is listing is waited for by the others (tools/shared-listing.ts).
 * - baseline, same run: each session has its own copy of the ten servers (other names), so nothing can be shared and
 *   every session lists every server (100 starts), as all of them did before listings were shared.
 *
 * Runs alternate between the two so machine load hits both alike. The real `pi` CLI in print mode (the host of
 * `PI_TEST_HOST`, its Node), a scripted faux model.
 *
 *   PI_TEST_HOST=0.73.1 node node_modules/jiti/lib/jiti-cli.mjs bench/concurrent-sessions.ts [runs] [--quick]
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { currentHost, REPO_ROOT } from "../test/helpers/hosts.ts";
import { runPrint } from "../test/helpers/pi-print.ts";
import { fixed, median, reportFinding, runs, spread, table } from "./measure.ts";

const RUNS = Number(process.argv.slice(2).find((arg) => /^\d+$/.test(arg)) ?? runs(3, 1));
const SESSIONS = 10;
const SERVERS = 10;
const TOOLS = 200;
const STDIO_SERVER = join(REPO_ROOT, "test/fixtures/servers/stdio-server.mjs");
const ENTRY = join(REPO_ROOT, "pi-mcp-adapter.ts");

interface Outcome {
  seconds: number;
  starts: number;
  /** Sessions whose ToolSearch knew the echo tool of every server. */
  complete: number;
}

/** One round of ten sessions; `shared`: one config for all, else one per session with servers of its own. */
async function round(shared: boolean): Promise<Outcome> {
  const dir = mkdtempSync(join(tmpdir(), "pi-mcp-bench-concurrency-"));
  try {
    const agentDir = join(dir, "agent");
    mkdirSync(agentDir);
    const startLog = join(dir, "starts.log");
    const config = (session: number) => {
      const prefix = shared ? "s" : `p${session}s`;
      const servers = Object.fromEntries(
        Array.from({ length: SERVERS }, (_, i) => [
          `${prefix}${i}`,
          { command: process.execPath, args: [STDIO_SERVER], env: { FIXTURE_LOG: startLog, FIXTURE_FILLER_TOOLS: String(TOOLS) } },
        ]),
      );
      const path = join(dir, `mcp-${shared ? "shared" : session}.json`);
      writeFileSync(path, JSON.stringify({ mcpServers: servers }));
      return { path, names: Object.keys(servers) };
    };
    const configs = Array.from({ length: SESSIONS }, (_, session) => config(session));
    const start = performance.now();
    const results = await Promise.all(
      configs.map(({ path, names }) => {
        const query = `select:${names.map((name) => `${name}__echo`).join(",")}`;
        const script = [{ toolCalls: [{ name: "ToolSearch", arguments: { query } }] }, "done"];
        return runPrint({
          extensions: [ENTRY],
          script,
          prompts: ["load echo"],
          agentDir,
          cwd: dir,
          args: ["--mcp-config", path],
          timeoutMs: 300_000,
        });
      }),
    );
    const seconds = (performance.now() - start) / 1000;
    const failed = results.filter((result) => result.exitCode !== 0);
    if (failed.length > 0) throw new Error(`${failed.length} sessions failed: ${failed[0]!.stderr.slice(0, 500)}`);
    const starts = readFileSync(startLog, "utf8")
      .split("\n")
      .filter((line) => line.includes('"start"')).length;
    const complete = results.filter((result) => !(result.toolResults[0]?.text ?? "No MCP tool").includes("No MCP tool")).length;
    return { seconds, starts, complete };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const sharedRuns: Outcome[] = [];
const ownRuns: Outcome[] = [];
for (let run = 0; run < RUNS; run++) {
  ownRuns.push(await round(false));
  sharedRuns.push(await round(true));
}
const host = currentHost();
console.log(
  `Pi ${host.version}: ${SESSIONS} sessions started at once on one agent dir, ${SERVERS} uncached lazy servers of ${TOOLS} tools each; ${RUNS} alternating runs each; median (min–max)\n`,
);
const row = (label: string, outcomes: Outcome[]) => [
  label,
  spread(
    outcomes.map((outcome) => outcome.seconds),
    1,
  ),
  spread(outcomes.map((outcome) => outcome.starts)),
  outcomes.map((outcome) => `${outcome.complete}/${SESSIONS}`).join(", "),
];
console.log(
  table(
    ["configs", "until all ten know their tools and exited, s", "server starts for listing", "sessions whose ToolSearch saw every server"],
    [row("one per session, own servers (baseline: nothing to share)", ownRuns), row("one shared config", sharedRuns)],
  ),
);
const seconds = (outcomes: Outcome[]) => median(outcomes.map((outcome) => outcome.seconds));
reportFinding(
  `Pi ${host.version}: ${SESSIONS} sessions sharing a config of ${SERVERS} uncached servers know their tools in ${fixed(seconds(sharedRuns), 1)} s with ${fixed(median(sharedRuns.map((outcome) => outcome.starts)))} server starts, against ${fixed(seconds(ownRuns), 1)} s and ${fixed(median(ownRuns.map((outcome) => outcome.starts)))} starts when every session lists every server (${fixed(seconds(ownRuns) / seconds(sharedRuns), 2)}× as long)`,
);

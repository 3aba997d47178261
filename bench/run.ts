/**
 * The benchmark suite: `npm run bench`. Runs each section as a process of its own (the sections that drive Pi do so
 * on each host's Node), prints its markdown as it finishes, and writes the report: date, machine, commands, the
 * goals, every section's tables.
 *
 *   npm run bench                          # everything; writes bench/RESULTS.md and the summary in docs/performance.md
 *   npm run bench -- --quick               # fewer runs: a look, not a record (bench/out/RESULTS.md)
 *   npm run bench -- tokens startup        # chosen sections (bench/out/RESULTS.md)
 *   npm run bench -- --hosts=0.73.1        # one Pi host (bench/out/RESULTS.md)
 *
 * Hand-written notes in bench/RESULTS.md between `<!-- notes:start -->` and `<!-- notes:end -->` are kept.
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, release, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { HOSTS, type PiHost, packageDirOf, REPO_ROOT } from "../test/helpers/hosts.ts";
import type { Goal, SummaryLine } from "./measure.ts";
import { benchHosts } from "./session-run.ts";

interface Section {
  id: string;
  title: string;
  script: string;
  nodeArgs?: string[];
  /** Run once per Pi host, in-process on that host's Node (else the section handles the hosts itself, or has none). */
  perHost?: boolean;
}

const SECTIONS: Section[] = [
  { id: "tokens", title: "1. Tokens at the first request", script: "tokens.ts" },
  {
    id: "startup",
    title: "2. Startup, first call of a lazy server, Pi process memory (before and after the move to SDK v2)",
    script: "startup.ts",
  },
  {
    id: "first-call",
    title: "2b. First call of a lazy stdio server, 2025 and 2026 eras, before and after the move to SDK v2",
    script: "first-call.ts",
  },
  { id: "search", title: "3. Search latency and scale", script: "search-latency.ts", nodeArgs: ["--expose-gc"] },
  { id: "calls", title: "4. Call overhead", script: "call-overhead.ts", perHost: true },
  { id: "npx", title: "5. Memory of npx-configured servers", script: "npx-memory.ts" },
  { id: "quality", title: "6. Search quality", script: "search-quality.ts" },
  { id: "quality-pi", title: "6b. Search quality over the real Pi (MetaTool held-out)", script: "search-quality-pi.ts", perHost: true },
  {
    id: "quality-semantic",
    title: "6c. Search quality with semantic re-ranking (a real sentence encoder)",
    script: "search-quality-semantic.ts",
  },
  { id: "connect", title: "Connect latency (server manager against the bare SDK)", script: "connect-latency.ts" },
  { id: "registration", title: "Registration stall (tools listed for the first time)", script: "registration-stall.ts", perHost: true },
  { id: "script-engines", title: "7a. Script engines (quickjs-wasi, quickjs-emscripten)", script: "script-engines.ts" },
  { id: "script-calls", title: "7b. Tool calls from a codemode script vs direct", script: "script-overhead.ts", perHost: true },
  { id: "script-task", title: "7. The orders task: direct calls vs one codemode script", script: "script-task.ts" },
  { id: "skills", title: "8. Skills: always-on tokens at 1, 10 and 100 skills", script: "skills-tokens.ts", perHost: true },
  { id: "tasks", title: "9. Tasks: a task-backed call against a plain one, and what polling costs", script: "tasks.ts" },
  {
    id: "concurrency",
    title: "Ten sessions at once on one agent dir (uncached servers listed once)",
    script: "concurrent-sessions.ts",
    perHost: true,
  },
];

const RESULTS_FILE = join(REPO_ROOT, "bench/RESULTS.md");
const SCRATCH_RESULTS_FILE = join(REPO_ROOT, "bench/out/RESULTS.md");
const SUMMARY_PAGE = join(REPO_ROOT, "docs/performance.md");
const JITI_CLI = join(REPO_ROOT, "node_modules/jiti/lib/jiti-cli.mjs");
const NOTES = { start: "<!-- notes:start -->", end: "<!-- notes:end -->" };
const SUMMARY_BLOCK = { start: "<!-- bench-summary:start -->", end: "<!-- bench-summary:end -->" };

const args = process.argv.slice(2);
const quick = args.includes("--quick");
const hostsFlag = args.find((arg) => arg.startsWith("--hosts="));
const chosen = args.filter((arg) => !arg.startsWith("--"));
const unknown = chosen.filter((id) => !SECTIONS.some((section) => section.id === id));
if (unknown.length > 0) {
  console.error(`unknown section ${unknown.join(", ")}; sections: ${SECTIONS.map((section) => section.id).join(", ")}`);
  process.exit(2);
}
const sections = chosen.length > 0 ? SECTIONS.filter((section) => chosen.includes(section.id)) : SECTIONS;
const hosts = benchHosts();
/** Only a complete, full-length run on every host is a record. */
const isRecord = !quick && chosen.length === 0 && hosts.length === Object.keys(HOSTS).length;

interface SectionOutcome {
  section: Section;
  markdown: string;
  seconds: number;
  failed: boolean;
}

const scratch = mkdtempSync(join(tmpdir(), "bench-run-"));
const summaryFile = join(scratch, "summary.jsonl");
writeFileSync(summaryFile, "");
const started = new Date();
const outcomes: SectionOutcome[] = [];
try {
  for (const section of sections) {
    const parts: string[] = [];
    let failed = false;
    const sectionStart = performance.now();
    for (const host of section.perHost ? hosts : [undefined]) {
      console.error(`▶ ${section.title}${host ? ` (Pi ${host.version})` : ""}`);
      const result = await runSection(section, host);
      parts.push(result.stdout.trim());
      failed ||= result.failed;
    }
    const outcome = { section, markdown: parts.join("\n\n"), seconds: (performance.now() - sectionStart) / 1000, failed };
    outcomes.push(outcome);
    console.log(`\n## ${section.title}\n\n${outcome.markdown}\n`);
  }
  const summary = readFileSync(summaryFile, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as SummaryLine);
  const file = isRecord ? RESULTS_FILE : SCRATCH_RESULTS_FILE;
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileSync(file, report(summary, existsSync(RESULTS_FILE) ? readFileSync(RESULTS_FILE, "utf8") : ""));
  if (isRecord) updateSummaryPage(summary);
  console.error(
    `\nWrote ${file}${isRecord ? " and the summary in docs/performance.md" : " (not a full run: bench/RESULTS.md is left as it was)"}.`,
  );
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
if (outcomes.some((outcome) => outcome.failed)) process.exitCode = 1;

function runSection(section: Section, host: PiHost | undefined): Promise<{ stdout: string; failed: boolean }> {
  const node = host?.nodeBinary ?? process.execPath;
  const sectionArgs = [...(section.nodeArgs ?? []), JITI_CLI, join(REPO_ROOT, "bench", section.script), ...(hostsFlag ? [hostsFlag] : [])];
  const env = {
    ...process.env,
    BENCH_SUMMARY_FILE: summaryFile,
    ...(quick ? { BENCH_QUICK: "1" } : {}),
    ...(host ? { PI_TEST_HOST: host.version } : {}),
  };
  return new Promise((resolve) => {
    const child = spawn(node, sectionArgs, { cwd: REPO_ROOT, env, stdio: ["ignore", "pipe", "inherit"] });
    let stdout = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.on("error", (error) => resolve({ stdout: `${stdout}\n\n**The section could not start: ${error.message}**`, failed: true }));
    child.on("close", (code, signal) => {
      const failed = code !== 0;
      resolve({
        stdout: failed ? `${stdout}\n\n**The section failed (${signal ?? `exit ${code}`}); its error is in the console output.**` : stdout,
        failed,
      });
    });
  });
}

function report(summary: SummaryLine[], previous: string): string {
  const goals = summary.flatMap((line) => ("goal" in line ? [line.goal] : []));
  const findings = summary.flatMap((line) => ("finding" in line ? [line.finding] : []));
  const notes = between(previous, NOTES) ?? "\n(none yet)\n";
  const command = ["npm run bench", ...args].join(" ").replace("npm run bench ", "npm run bench -- ");
  return [
    "# Benchmark results",
    "",
    `Written by \`${command}\` on ${started.toISOString().slice(0, 16).replace("T", " ")} UTC` +
      `${isRecord ? "" : " (a partial or quick run: not the record in bench/RESULTS.md)"}; ` +
      `the suite took ${Math.round(outcomes.reduce((sum, outcome) => sum + outcome.seconds, 0))} s.`,
    "",
    `Machine: ${machine()}.`,
    "",
    "Every figure is a median over runs with its min–max, or a ratio or difference to a baseline measured in the same run. " +
      "Token counts use the o200k tokenizer (`gpt-tokenizer`), an approximation of what any given provider counts.",
    "",
    "## Goals",
    "",
    goalsTable(goals),
    "",
    ...(findings.length > 0 ? ["Other figures:", "", ...findings.map((finding) => `- ${finding}`), ""] : []),
    "## Notes",
    "",
    `${NOTES.start}${notes}${NOTES.end}`,
    "",
    "## Commands",
    "",
    "Each section runs on its own (`node node_modules/jiti/lib/jiti-cli.mjs bench/<script>`, options in each script's header):",
    "",
    ...outcomes.map(
      ({ section, seconds }) =>
        `- ${section.title}: \`bench/${section.script}\`${section.nodeArgs ? ` (node ${section.nodeArgs.join(" ")})` : ""}` +
        `${section.perHost ? " once per host (`PI_TEST_HOST`, that host's Node)" : ""}, ${Math.round(seconds)} s`,
    ),
    "",
    ...outcomes.flatMap(({ section, markdown }) => [`## ${section.title}`, "", markdown, ""]),
  ].join("\n");
}

function goalsTable(goals: Goal[]): string {
  if (goals.length === 0) return "(no goal was measured in this run)";
  const rows = goals.map(
    (goal) =>
      `| ${goal.goal} | ${goal.target} | ${goal.measured} | ${goal.met ? "met" : "**missed**"}${goal.margin ? `: ${goal.margin}` : ""} |`,
  );
  return ["| goal | target | measured | verdict |", "| --- | --- | --- | --- |", ...rows].join("\n");
}

function machine(): string {
  const cpu = cpus();
  const node22 = HOSTS["0.87.1"].nodeBinary;
  const node22Hosts = Object.values(HOSTS)
    .filter((host) => host.nodeBinary === node22)
    .map((host) => `Pi ${host.version}`)
    .join(", ");
  const node22Version = existsSync(node22) ? execFileSync(node22, ["--version"], { encoding: "utf8" }).trim() : "not installed";
  const piVersions = Object.values(HOSTS).map((host) => `${host.packageName} ${packageVersion(packageDirOf(host))}`);
  return [
    `${cpu.length} cores (${cpu[0]?.model.trim() ?? "unknown CPU"}), ${Math.round(totalmem() / 2 ** 30)} GiB memory, Linux ${release()}`,
    `Node ${process.version} (Pi 0.73.1 and the other sections) and ${node22Version} (${node22Hosts})`,
    piVersions.join(", "),
    `@modelcontextprotocol/client ${packageVersion(join(REPO_ROOT, "node_modules/@modelcontextprotocol/client"))} (before the move: @modelcontextprotocol/sdk ${packageVersion(join(REPO_ROOT, "node_modules/@modelcontextprotocol/sdk"))})`,
    "shared with other work (figures from a quiet machine would be lower, ratios about the same)",
  ].join("; ");
}

function packageVersion(dir: string): string {
  return (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { version: string }).version;
}

function between(text: string, markers: { start: string; end: string }): string | undefined {
  const start = text.indexOf(markers.start);
  const end = text.indexOf(markers.end);
  return start >= 0 && end > start ? text.slice(start + markers.start.length, end) : undefined;
}

/** The summary in docs/performance.md: the goals and other figures of this run, and where the rest is. */
function updateSummaryPage(summary: SummaryLine[]): void {
  const page = readFileSync(SUMMARY_PAGE, "utf8");
  if (between(page, SUMMARY_BLOCK) === undefined) {
    throw new Error(`docs/performance.md has no ${SUMMARY_BLOCK.start} … ${SUMMARY_BLOCK.end} block`);
  }
  const goals = summary.flatMap((line) => ("goal" in line ? [line.goal] : []));
  const findings = summary.flatMap((line) => ("finding" in line ? [line.finding] : []));
  const block = [
    "",
    `Measured by \`npm run bench\` (a few minutes on 2 cores; \`npm run bench -- --quick\` for a look) on ` +
      `${started.toISOString().slice(0, 10)}. The tables, the machine, and why a goal is missed are in ` +
      "[bench/RESULTS.md](../bench/RESULTS.md). Figures are medians, or ratios to a baseline measured in the same run.",
    "",
    goalsTable(goals),
    "",
    ...findings.map((finding) => `- ${finding}`),
    "",
  ].join("\n");
  const start = page.indexOf(SUMMARY_BLOCK.start) + SUMMARY_BLOCK.start.length;
  writeFileSync(SUMMARY_PAGE, `${page.slice(0, start)}${block}${page.slice(page.indexOf(SUMMARY_BLOCK.end))}`);
}

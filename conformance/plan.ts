/**
 * Which client scenarios of the MCP conformance suite run, and at which spec version: every scenario of the
 * suite's client requirement sets (2025-11-25 and 2026-07-28), each at its set's version, with the set's `not_scored`
 * ones (extensions, scenarios added after the revision shipped) run and reported but not required; then the client
 * scenarios no set names (the 2025-03-26 backward-compatibility ones, the skills extension), once each. A scenario in
 * both sets runs once per set: the two wires differ (a handshake and sessions, or none), so one run covers one.
 *
 * The baseline of expected failures may name only scenarios no set requires (extensions): every required one passes.
 */
import { readFileSync } from "node:fs";

/** The requirement sets this runner covers, oldest first (the suite ships one file per revision). */
export const REQUIREMENT_SETS = ["2025-11-25", "2026-07-28"] as const;
export const OUTSIDE_SETS = "in no set";

export interface ScenarioRun {
  scenario: string;
  /** The `--spec-version` it runs at. */
  specVersion: string;
  /** The requirement set that lists it, or `OUTSIDE_SETS`. */
  set: string;
  /** Why a failure here would not count against conformance (the suite's `not_scored` reason, or `no set`); absent when required. */
  notScored?: string;
}

/** The suite's `list` output, as text. */
export type ListCommand = (args: string[]) => Promise<string>;

/** Every run, in set order: a set's scenarios as the suite lists them, then the scenarios outside every set. */
export async function planRuns(list: ListCommand): Promise<ScenarioRun[]> {
  const runs: ScenarioRun[] = [];
  for (const revision of REQUIREMENT_SETS)
    runs.push(...parseRequirementSet(await list(["list", "--client", "--requirements", revision]), revision));
  const covered = new Set(runs.map((run) => run.scenario));
  for (const { scenario, versions } of parseClientScenarios(await list(["list", "--client"]))) {
    if (covered.has(scenario)) continue;
    // An extension is not on the spec timeline: it runs on the newest wire.
    const specVersion = versions.includes("extension") ? REQUIREMENT_SETS.at(-1)! : versions.at(-1)!;
    runs.push({
      scenario,
      specVersion,
      set: OUTSIDE_SETS,
      notScored: versions.includes("extension") ? "extension" : `${versions.join(", ")} only`,
    });
  }
  return runs;
}

/**
 * `list --client --requirements REV`: the "Client scenarios" section (required), then "Run and reported, but never
 * scored:" with a `reason (n):` line over each group of `- name [leg]` lines.
 */
export function parseRequirementSet(text: string, revision: string): ScenarioRun[] {
  const runs: ScenarioRun[] = [];
  let section: "client" | "not-scored" | undefined;
  let reason = "";
  for (const line of text.split("\n")) {
    if (/^\S/.test(line))
      section = line.startsWith("Client scenarios") ? "client" : line.startsWith("Run and reported") ? "not-scored" : undefined;
    const required = /^ {2}- (\S+)$/.exec(line);
    const group = /^ {2}(\S.*) \(\d+\):$/.exec(line);
    const notScored = /^ {4}- (\S+) \[client\]$/.exec(line);
    if (section === "client" && required) runs.push({ scenario: required[1]!, specVersion: revision, set: revision });
    if (section === "not-scored" && group) reason = group[1]!;
    if (section === "not-scored" && notScored)
      runs.push({ scenario: notScored[1]!, specVersion: revision, set: revision, notScored: reason });
  }
  if (!runs.some((run) => !run.notScored)) throw new Error(`the suite lists no required client scenario for ${revision}:\n${text}`);
  return runs;
}

/** `list --client`: `  - name [version,version]` or `[extension]`. */
export function parseClientScenarios(text: string): { scenario: string; versions: string[] }[] {
  return [...text.matchAll(/^ {2}- (\S+) \[([^\]]+)\]$/gm)].map((match) => ({ scenario: match[1]!, versions: match[2]!.split(",") }));
}

/** The `client:` list of the baseline file: scenario names, each expected to fail at every version it runs at. */
export function readBaseline(file: string): string[] {
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

/** Why the baseline cannot be used with these runs, or nothing: it names only known scenarios that no set requires. */
export function baselineProblems(baseline: readonly string[], runs: readonly ScenarioRun[]): string[] {
  const problems: string[] = [];
  const unknown = baseline.filter((name) => !runs.some((run) => run.scenario === name));
  if (unknown.length > 0)
    problems.push(`Not a client scenario of this suite version: ${unknown.join(", ")} (see: conformance list --client)`);
  const required = baseline.filter((name) => runs.some((run) => run.scenario === name && !run.notScored));
  if (required.length > 0)
    problems.push(`Required by a requirement set, so it must pass (the baseline is for extensions): ${required.join(", ")}`);
  return problems;
}

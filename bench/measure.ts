/**
 * What every bench shares: summaries of repeated measurements (median with min–max, percentiles, ratios), markdown
 * tables, comparisons measured pair by pair (`alternate`), token counts and goal verdicts (process-tree memory
 * readings are in proc-tree.ts).
 *
 * Machines are noisy, so a figure is a median over runs with its range, and a claim is a ratio or a difference to a
 * baseline measured in the same run. A bench states each goal through `reportGoal`: the verdict is printed with its
 * section and, when the suite runs (`bench/run.ts` sets `BENCH_SUMMARY_FILE`), collected for the summary;
 * `reportFinding` does the same for a notable figure that is not a goal.
 */
import { appendFileSync } from "node:fs";
import { encode } from "gpt-tokenizer/encoding/o200k_base";

/** `--quick` (or `BENCH_QUICK=1`, set by the suite): fewer runs, for a look rather than a record. */
export const QUICK = process.argv.includes("--quick") || process.env.BENCH_QUICK === "1";

/** How many repetitions: the full number, or the quick one. */
export function runs(full: number, quick: number): number {
  return QUICK ? quick : full;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Nearest-rank percentile (p in 0..1). */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
}

export function fixed(value: number, digits = 0): string {
  return value.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** `median (min–max)`, values divided by `scale` first (e.g. 1024 for KiB → MiB). */
export function spread(values: readonly number[], digits = 0, scale = 1): string {
  const scaled = values.map((value) => value / scale);
  if (scaled.length === 1) return fixed(scaled[0], digits);
  return `${fixed(median(scaled), digits)} (${fixed(Math.min(...scaled), digits)}–${fixed(Math.max(...scaled), digits)})`;
}

/**
 * `a[i] / b[i]` for runs made side by side (the same round of `alternate`, the same machine load), as
 * `median (min–max)`: steadier than a ratio of medians when the load drifts between rounds.
 */
export function pairedRatios(a: readonly number[], b: readonly number[], digits = 2): string {
  return spread(
    a.slice(0, b.length).map((value, i) => value / b[i]),
    digits,
  );
}

/** One comparison's samples: each candidate run paired with the baseline run made beside it. */
export interface Paired<T> {
  baseline: T[];
  candidate: T[];
}

/**
 * Measures one comparison on its own: `warmUp` unmeasured runs of each side (jiti's transpile cache, the JIT, the
 * file cache), then `rounds` pairs, baseline and candidate in turn, which goes first alternating, so drift on a
 * shared machine hits both alike and each candidate run has its baseline run beside it (for `pairedRatios`). Each
 * comparison gets its own loop: with many variants taking turns, the runs compared would sit further apart.
 */
export async function alternate<T>(
  rounds: number,
  baseline: () => Promise<T>,
  candidate: () => Promise<T>,
  warmUp = 1,
): Promise<Paired<T>> {
  for (let i = 0; i < warmUp; i++) {
    await baseline();
    await candidate();
  }
  const paired: Paired<T> = { baseline: [], candidate: [] };
  for (let round = 0; round < rounds; round++) {
    if (round % 2 === 0) paired.baseline.push(await baseline());
    paired.candidate.push(await candidate());
    if (round % 2 === 1) paired.baseline.push(await baseline());
  }
  return paired;
}

/** How long `call` took, ms. */
export async function timed(call: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await call();
  return performance.now() - start;
}

/** One figure of a comparison's samples, e.g. each run's startup time. */
export function pick<T>(paired: Paired<T>, figure: (sample: T) => number): Paired<number> {
  return { baseline: paired.baseline.map(figure), candidate: paired.candidate.map(figure) };
}

/** A row of a comparison table: what is compared, the medians (min–max) of both sides, the paired ratio. */
export interface ComparisonRow {
  candidate: string;
  baseline: string;
  samples: Paired<number>;
}

/** One row per comparison: candidate ÷ its own interleaved baseline, pair by pair, median (min–max). */
export function comparisonTable(rows: readonly ComparisonRow[], unit = "ms", digits = 0): string {
  return table(
    ["candidate", "baseline", `baseline, ${unit}`, `candidate, ${unit}`, "candidate ÷ baseline (paired)"],
    rows.map(({ candidate, baseline, samples }) => [
      candidate,
      baseline,
      spread(samples.baseline, digits),
      spread(samples.candidate, digits),
      pairedRatios(samples.candidate, samples.baseline),
    ]),
    "ll",
  );
}

/** A markdown table; `align` per column: "l" or "r" (default right, first column left). */
export function table(headers: readonly string[], rows: readonly (readonly (string | number)[])[], align?: string): string {
  const aligns = headers.map((_, i) => ((align?.[i] ?? (i === 0 ? "l" : "r")) === "l" ? "---" : "---:"));
  const line = (cells: readonly (string | number)[]) => `| ${cells.join(" | ")} |`;
  return [line(headers), line(aligns), ...rows.map(line)].join("\n");
}

/** o200k tokens of a text (the GPT-4o family's tokenizer: an approximation for other models' tokenizers). */
export function tokens(text: string): number {
  return encode(text).length;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export interface Goal {
  /** What is promised, e.g. "ToolSearch query p50 at 10k tools". */
  goal: string;
  /** The promise as text, e.g. "< 5 ms". */
  target: string;
  /** The figure, as text, e.g. "0.17 ms". */
  measured: string;
  met: boolean;
  /** How far from the target when missed (or the margin when met), in words. */
  margin?: string;
}

/** Prints the verdict in the section's output and records it for the suite's summary. */
export function reportGoal(goal: Goal): void {
  const verdict = goal.met ? "met" : "**missed**";
  console.log(`- Goal: ${goal.goal} (target ${goal.target}): ${goal.measured} — ${verdict}${goal.margin ? `, ${goal.margin}` : ""}.`);
  record({ goal });
}

/** A figure worth a line in the summary without being a goal (e.g. what npx resolution saves). */
export function reportFinding(text: string): void {
  console.log(`- ${text}`);
  record({ finding: text });
}

/** One line of the suite's summary file (`BENCH_SUMMARY_FILE`, set by bench/run.ts). */
export type SummaryLine = { goal: Goal } | { finding: string };

function record(line: SummaryLine): void {
  const file = process.env.BENCH_SUMMARY_FILE;
  if (file) appendFileSync(file, `${JSON.stringify(line)}\n`);
}

/**
 * Search index speed and size at 1k, 10k and 50k tools (the real corpus replicated under new server names):
 * build time, query p50/p95 over the evaluation requests, and retained memory (heap + typed arrays). Each figure
 * is the median over several runs, with min–max. Build time is also given as a ratio to a baseline measured in
 * the same run on the same tools — splitting each tool's JSON into words with the native `String.split` — so
 * that machines of different speed can be compared. Prints a markdown table.
 *
 *   node --expose-gc node_modules/jiti/lib/jiti-cli.mjs bench/search-latency.ts
 */
import { performance } from "node:perf_hooks";
import { buildSearchIndex, type ToolSearchIndex } from "../search-index.ts";
import type { ToolMetadata } from "../types.ts";
import { loadEvalSet, replicateCorpus } from "../test/fixtures/search-eval/corpus-tools.ts";

const SIZES = [1_000, 10_000, 50_000];
const RUNS = 5;
/** Warm-up builds index this many tools in all before a size is measured, so small sizes reach the JIT's steady state too. */
const WARM_UP_TOOLS = 50_000;

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) console.warn("run with --expose-gc for memory figures");

const queries = [...loadEvalSet("dev"), ...loadEvalSet("heldout")].map((request) => request.query);

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

function summary(values: readonly number[], digits: number): string {
  const sorted = [...values].sort((a, b) => a - b);
  const fmt = (value: number) => value.toFixed(digits);
  return `${fmt(percentile(sorted, 0.5))} (${fmt(sorted[0])}–${fmt(sorted[sorted.length - 1])})`;
}

function usedMemory(): number {
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
}

function retainedMb(build: () => ToolSearchIndex): { index: ToolSearchIndex; mb: number } {
  gc!();
  const before = usedMemory();
  const index = build();
  gc!();
  return { index, mb: (usedMemory() - before) / 2 ** 20 };
}

function baselineMs(tools: readonly ToolMetadata[]): number {
  const start = performance.now();
  let words = 0;
  for (const tool of tools) words += JSON.stringify(tool).split(/[^A-Za-z0-9]+/).length;
  return words > 0 ? performance.now() - start : 0;
}

// The first build in a process runs before the JIT has compiled anything: what the first ToolSearch call pays.
const coldTools = replicateCorpus(SIZES[0]);
const coldStart = performance.now();
buildSearchIndex(coldTools);
const coldMs = performance.now() - coldStart;

console.log(`${queries.length} queries per run, ${RUNS} runs per size after warm-up builds; median (min–max).`);
console.log(`First build in the process (cold JIT), ${SIZES[0].toLocaleString("en-US")} tools: ${coldMs.toFixed(1)} ms.\n`);
console.log("| tools | build ms | build ÷ baseline | query p50 ms | query p95 ms | index MB |");
console.log("|---:|---:|---:|---:|---:|---:|");
for (const size of SIZES) {
  const tools = replicateCorpus(size);
  for (let built = 0; built < WARM_UP_TOOLS; built += size) buildSearchIndex(tools);
  const builds: number[] = [];
  const ratios: number[] = [];
  const p50s: number[] = [];
  const p95s: number[] = [];
  const memory: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const baseline = baselineMs(tools);
    const start = performance.now();
    const index = buildSearchIndex(tools);
    builds.push(performance.now() - start);
    ratios.push(builds[run] / baseline);
    const times = queries.map((query) => {
      const queryStart = performance.now();
      index.search(query);
      return performance.now() - queryStart;
    });
    times.sort((a, b) => a - b);
    p50s.push(percentile(times, 0.5));
    p95s.push(percentile(times, 0.95));
    // Measured on a build of its own: forcing full collections around a timed build would slow it down.
    if (gc) memory.push(retainedMb(() => buildSearchIndex(tools)).mb);
  }
  console.log(
    `| ${size.toLocaleString("en-US")} | ${summary(builds, 1)} | ${summary(ratios, 2)} | ${summary(p50s, 2)} | ` +
      `${summary(p95s, 2)} | ${gc ? summary(memory, 1) : "n/a"} |`,
  );
}

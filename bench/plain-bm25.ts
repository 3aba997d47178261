/**
 * The plain BM25 reference every ranking is measured against by the search-quality benches.
 */
import type { ToolMetadata } from "../types.ts";
import type { Ranker } from "../test/fixtures/search-eval/corpus-tools.ts";

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
    return scored
      .filter((hit) => hit.score > 0)
      .sort((a, b) => b.score - a.score)
      .slice(0, limit)
      .map((hit) => hit.tool);
  };
}

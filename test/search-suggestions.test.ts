/**
 * The close matches ToolSearch names when its five tools are no clear answer: when they appear (scores near the
 * best), when not (a clear winner, an exact name), and the fixed budget, measured in o200k tokens over the real
 * catalog's requests.
 */
import { describe, expect, test } from "vitest";
import { tokens } from "../bench/measure.ts";
import { buildSearchIndex, type SearchHit } from "../search/tool-index.ts";
import { CANDIDATE_SHARE, candidateLines, MAX_CANDIDATES } from "../search/suggestions.ts";
import type { ToolMetadata } from "../types.ts";
import { loadCorpusTools, loadEvalSet } from "./fixtures/search-eval/corpus-tools.ts";

const HINT = 'ToolSearch "select:<name>"';
const tool = (name: string, description: string): ToolMetadata => ({
  name,
  serverName: "s",
  originalName: name,
  description,
  inputSchema: { type: "object" },
});
const hit = (name: string, score: number, description = "Does a thing with another thing"): SearchHit => ({
  tool: tool(name, description),
  score,
});

describe("candidateLines", () => {
  test("names the tools below the loaded ones that score near the best, each with a few words", () => {
    const lines = candidateLines(
      10,
      [
        hit("near_a", 7, "Reads one file from the disk and returns its whole content as text"),
        hit("near_b", CANDIDATE_SHARE * 10),
        hit("far", 4),
      ],
      HINT,
    );
    expect(lines).toEqual([
      `Close matches not loaded (load one with ${HINT}):`,
      "- near_a: Reads one file from the disk and returns…",
      "- near_b: Does a thing with another thing",
    ]);
  });

  test("nothing when the loaded tools are a clear answer, or when there is nothing further", () => {
    expect(candidateLines(10, [hit("far", 4.9), hit("farther", 1)], HINT)).toEqual([]);
    expect(candidateLines(10, [], HINT)).toEqual([]);
    expect(candidateLines(0, [hit("zero", 0)], HINT)).toEqual([]);
  });

  test("long names and descriptions stay within the budget: fewer lines, never a longer block", () => {
    const long = "x".repeat(120);
    const further = Array.from({ length: MAX_CANDIDATES }, (_, index) => hit(`${long}_${index}`, 9, long));
    const lines = candidateLines(10, further, HINT);
    expect(lines.length).toBeGreaterThan(1);
    expect(lines.length).toBeLessThan(MAX_CANDIDATES + 1);
    expect(lines.join("\n").length).toBeLessThanOrEqual(360);
  });

  test("over the real catalog: an exact name gets no line, some requests get names, and no block exceeds 120 tokens", () => {
    const index = buildSearchIndex(loadCorpusTools());
    const linesFor = (query: string) => {
      const hits = index.search(query, 5 + MAX_CANDIDATES);
      return candidateLines(hits[0]?.score ?? 0, hits.slice(5), HINT);
    };
    expect(linesFor("take_screenshot")).toEqual([]);
    const requests = [...loadEvalSet("dev"), ...loadEvalSet("dev2")];
    const costs = requests.map((request) => tokens(linesFor(request.query).join("\n")));
    expect(costs.filter((cost) => cost > 0).length).toBeGreaterThan(0);
    expect(Math.max(...costs)).toBeLessThanOrEqual(120);
  });
});

/**
 * When ToolSearch's answer is unsure, it names a few more candidates the model can load with `select:` instead of
 * searching again with other words (or giving up).
 *
 * "Unsure" is read from the scores' shape, not from an absolute floor: a ranking score has no fixed scale (BM25 grows
 * with the length and rarity of the request's words; re-ranked scores are shares of the best), but in every scale a
 * top tool that clearly answers the request scores well above the rest. So the tools ranked after the loaded ones
 * are named only while they score at least CANDIDATE_SHARE of the best: a near-tie the five slots could not hold. A
 * request that names a tool exactly, or that one tool answers clearly, gets no extra line.
 *
 * The lines fit a fixed budget (SUGGESTION_CHARS, about 120 tokens at worst: measured by bench/search-suggestions.ts).
 */
import type { SearchHit } from "./tool-index.ts";
import { collapseWhitespace } from "../util/text.ts";

/** A tool below the loaded ones is a candidate when it scores at least this share of the best (tuned on dev sets). */
export const CANDIDATE_SHARE = 0.5;
/** At most this many candidates, whatever the budget left. */
export const MAX_CANDIDATES = 5;
/** The whole block (heading and lines); ~3 characters per token for names like `chrome_devtools__take_screenshot`. */
const SUGGESTION_CHARS = 360;
const DESCRIPTION_WORDS = 8;
const DESCRIPTION_CHARS = 60;

/**
 * Lines naming the candidates among `further` (the hits ranked after the loaded ones, best first), or none when the
 * loaded tools are a clear answer. `best` is the top hit's score.
 */
export function candidateLines(best: number, further: readonly SearchHit[], selectHint: string): string[] {
  const candidates = further.filter((hit) => best > 0 && hit.score >= CANDIDATE_SHARE * best).slice(0, MAX_CANDIDATES);
  if (candidates.length === 0) return [];
  const lines = [`Close matches not loaded (load one with ${selectHint}):`];
  let used = lines[0].length;
  for (const { tool } of candidates) {
    const line = `- ${tool.name}: ${fewWords(tool.description)}`;
    if (used + 1 + line.length > SUGGESTION_CHARS) break;
    lines.push(line);
    used += 1 + line.length;
  }
  return lines.length > 1 ? lines : [];
}

function fewWords(description: string): string {
  const words = collapseWhitespace(String(description ?? "")).split(" ");
  const text = words.slice(0, DESCRIPTION_WORDS).join(" ");
  const cut = text.length > DESCRIPTION_CHARS ? `${text.slice(0, DESCRIPTION_CHARS - 1).trimEnd()}…` : text;
  return words.length > DESCRIPTION_WORDS && !cut.endsWith("…") ? `${cut}…` : cut;
}

/**
 * What naming close matches (search/suggestions.ts) costs and buys, over the real 1,052-tool catalog and the request
 * sets of `test/fixtures/search-eval/`: how often a ToolSearch answer gets the extra lines, their o200k tokens (mean
 * over all answers, mean and max where they appear) against the answer's loaded-tools lines, and how many requests
 * whose tool missed the five loaded ones find it among the names.
 *
 *   npx jiti bench/search-suggestions.ts
 *
 * The loaded-tools lines are counted as the host that calls tools directly writes them (`- name: description`, cut
 * at 200 characters); on Pi 0.73.1 each also carries its JSON schema, so there the extra lines weigh less still.
 */
import { buildSearchIndex } from "../search/tool-index.ts";
import { candidateLines, MAX_CANDIDATES } from "../search/suggestions.ts";
import { evalKey, loadCorpusTools, loadEvalSet } from "../test/fixtures/search-eval/corpus-tools.ts";
import { fixed, table, tokens } from "./measure.ts";

const LOADED = 5;
const tools = loadCorpusTools();
const index = buildSearchIndex(tools);

const loadedLines = (names: readonly { name: string; description: string }[]) =>
  [
    "Loaded these tools; call them directly:",
    ...names.map((tool) => `- ${tool.name}: ${tool.description.replace(/\s+/g, " ").trim().slice(0, 200)}`),
  ].join("\n");

const rows = (["dev", "dev2", "heldout"] as const).map((part) => {
  const requests = loadEvalSet(part);
  let fired = 0;
  let added = 0;
  let maxAdded = 0;
  let answerTokens = 0;
  let missed = 0;
  let recovered = 0;
  for (const request of requests) {
    const hits = index.search(request.query, LOADED + MAX_CANDIDATES);
    const lines = candidateLines(hits[0]?.score ?? 0, hits.slice(LOADED), 'ToolSearch "select:<name>"');
    const cost = lines.length > 0 ? tokens(`\n${lines.join("\n")}`) : 0;
    answerTokens += tokens(loadedLines(hits.slice(0, LOADED).map((hit) => hit.tool)));
    if (cost > 0) fired++;
    added += cost;
    maxAdded = Math.max(maxAdded, cost);
    const expected = new Set(request.expect);
    if (hits.slice(0, LOADED).some((hit) => expected.has(evalKey(hit.tool)))) continue;
    missed++;
    const named = new Set(lines.slice(1).map((line) => line.slice(2, line.indexOf(": "))));
    if (hits.slice(LOADED).some((hit) => named.has(hit.tool.name) && expected.has(evalKey(hit.tool)))) recovered++;
  }
  const n = requests.length;
  return [
    part,
    n,
    `${fixed((100 * fired) / n, 1)}%`,
    fixed(answerTokens / n, 0),
    fixed(added / n, 1),
    fired > 0 ? fixed(added / fired, 1) : "–",
    maxAdded,
    `${recovered} of ${missed}`,
  ];
});

console.log(
  table(
    [
      "set",
      "requests",
      "answers with names",
      "answer tokens (5 loaded)",
      "added per answer",
      "added where named",
      "max added",
      "misses named",
    ],
    rows,
    "lrrrrrrr",
  ),
);

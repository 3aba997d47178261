/**
 * 6b. Search quality over the real Pi: MetaTool's requests (test/fixtures/search-eval/metatool.ts) asked through
 * ToolSearch of the extension loaded into the real Pi (SDK, scripted faux model, the host `PI_TEST_HOST` names), its
 * 199 tools served by one `corpus-server.mjs metatool` server (cached, so it never needs to start). Each request is
 * one prompt: the model calls ToolSearch with the request, and the tools the answer names, in order, are the ranking.
 * Beside it, in the same run: the same index in-process (the figures must agree), the ranking before issue 10 and a
 * plain BM25. ToolSearch answers five tools, so MRR here is over the top 5.
 *
 *   npx jiti bench/search-quality-pi.ts            # held-out parts (what the issue's goals are about)
 *   npx jiti bench/search-quality-pi.ts --dev      # the dev parts instead
 */
import { buildSearchIndex } from "../search/tool-index.ts";
import { TOOLS_PER_SEARCH } from "../search/slots.ts";
import type { ToolMetadata } from "../types.ts";
import {
  evalKey,
  evaluate,
  indexRanker,
  type EvalPart,
  type EvalRequest,
  type Ranker,
  type Scores,
} from "../test/fixtures/search-eval/corpus-tools.ts";
import { loadMetaToolCatalog, loadMetaToolSet, METATOOL_SERVER, metaToolTools } from "../test/fixtures/search-eval/metatool.ts";
import { REPO_ROOT } from "../test/helpers/hosts.ts";
import { startSession } from "../test/helpers/pi-session.ts";
import { prepareCorpusAgent } from "./corpus.ts";
import { fixed, reportGoal } from "./measure.ts";
import { PREVIOUS_RANKING_COMMIT, previousBuildSearchIndex } from "./previous-ranking.ts";
import { plainBm25 } from "./plain-bm25.ts";

const PROMPTS_PER_SESSION = 40;
const host = process.env.PI_TEST_HOST ?? "0.73.1";
const part: EvalPart = process.argv.includes("--dev") ? "dev" : "heldout";
const catalog = loadMetaToolCatalog();
const byPiName = new Map(catalog.map((tool) => [tool.name, tool]));
const sets: [string, EvalRequest[]][] = [
  [`MetaTool single ${part}`, loadMetaToolSet("single", part)],
  [`MetaTool multi ${part}`, loadMetaToolSet("multi", part)],
];

/** The tools a ToolSearch answer lists (`- <pi name>: <description>`), in its order: the loaded ones, then close matches. */
function listedTools(answer: string): ToolMetadata[] {
  return answer.split("\n").flatMap((line) => {
    const tool = line.startsWith("- ") ? byPiName.get(line.slice(2, line.indexOf(":"))) : undefined;
    return tool ? [tool] : [];
  });
}

/** Every request of every set through ToolSearch in one Pi session: the rankings, by query. */
async function rankThroughPi(): Promise<Map<string, ToolMetadata[]>> {
  const agent = await prepareCorpusAgent([{ server: METATOOL_SERVER, tools: metaToolTools() }]);
  const rankings = new Map<string, ToolMetadata[]>();
  try {
    const pi = await startSession({ extensions: [`${REPO_ROOT}/pi-mcp-adapter.ts`], agentDir: agent.agentDir, cwd: agent.cwd });
    try {
      // Each request as a new user's first: what one ToolSearch loads stays out of the next one's answer order.
      const initiallyActive = pi.activeToolNames();
      let asked = 0;
      for (const query of new Set(sets.flatMap(([, requests]) => requests.map((request) => request.query)))) {
        // A long conversation would make Pi compact it, which asks the scripted model too.
        if (++asked % PROMPTS_PER_SESSION === 0) await pi.restart();
        pi.script([{ toolCalls: [{ name: "ToolSearch", arguments: { query } }] }, "done"]);
        await pi.prompt(query);
        const result = pi.toolResults.at(-1);
        if (result?.toolName !== "ToolSearch" || result.isError)
          throw new Error(`ToolSearch failed for ${JSON.stringify(query)}: ${result?.text}`);
        rankings.set(query, listedTools(result.text));
        pi.session.setActiveToolsByName(initiallyActive);
      }
      if (pi.errors.length > 0) throw new Error(`extension errors: ${pi.errors.map((error) => error.error).join("; ")}`);
    } finally {
      await pi.dispose();
    }
  } finally {
    await agent.cleanup();
  }
  return rankings;
}

const started = performance.now();
const piRankings = await rankThroughPi();
const piSeconds = (performance.now() - started) / 1000;
const rankers: [string, Ranker][] = [
  [`ours, over the real Pi ${host} (ToolSearch)`, (query) => piRankings.get(query) ?? []],
  ["ours, in-process (search/tool-index.ts)", indexRanker(buildSearchIndex(catalog))],
  [`previous ranking (${PREVIOUS_RANKING_COMMIT}), in-process`, indexRanker((await previousBuildSearchIndex())(catalog))],
  ["plain BM25 (name + description), in-process", plainBm25(catalog)],
];

const percent = (value: number) => `${(value * 100).toFixed(1)}%`;
console.log(
  `MetaTool, ${catalog.length} tools; ${sets.map(([name, requests]) => `${requests.length} ${name}`).join(", ")}; over Pi in ${fixed(piSeconds, 0)} s.\n`,
);
console.log("| ranker | set | R@1 | R@5 | MRR@5 |");
console.log("|---|---|---:|---:|---:|");
const results: Scores[][] = rankers.map(([name, rank]) =>
  sets.map(([set, requests]) => {
    const scores = evaluate((query) => rank(query, TOOLS_PER_SEARCH).slice(0, TOOLS_PER_SEARCH), requests);
    console.log(`| ${name} | ${set} | ${percent(scores.recallAt1)} | ${percent(scores.recallAt5)} | ${scores.mrr.toFixed(3)} |`);
    return scores;
  }),
);
const differing = sets.flatMap(([, requests]) =>
  requests.filter(
    (request) =>
      rankers[0][1](request.query, TOOLS_PER_SEARCH).slice(0, TOOLS_PER_SEARCH).map(evalKey).join() !==
      rankers[1][1](request.query, TOOLS_PER_SEARCH).map(evalKey).join(),
  ),
);
console.log(`\nRequests whose Pi answer differs from the in-process top 5: ${differing.length}.`);
if (part === "heldout") {
  for (const [index, target] of [
    [0, 0.85],
    [1, 0.8],
  ] as const) {
    const [name] = sets[index];
    const scores = results[0][index];
    reportGoal({
      goal: `Pi ${host}: ${name} through ToolSearch, R@5 with every expected tool counted`,
      target: `≥ ${target.toFixed(2)}`,
      measured: `${scores.recallAt5.toFixed(3)} (previous ranking ${results[2][index].recallAt5.toFixed(3)}, plain BM25 ${results[3][index].recallAt5.toFixed(3)})`,
      met: scores.recallAt5 >= target,
      margin: `${scores.recallAt5 >= target ? "+" : ""}${fixed((scores.recallAt5 - target) * 100, 1)} points`,
    });
  }
}

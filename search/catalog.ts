/**
 * The ToolSearch description: what the tool does, and a catalog of what it can find, small at any scale.
 *
 * Every server gets one line at the richest level the token budget allows, cheapest upgrades first:
 *   0. `- jira-cloud: 91 tools` (then the same with the server's configured description, when it has one:
 *      `- jira-cloud (Issues and sprints of the ACME team): 91 tools`, and so on for each level below)
 *   1. `- jira-cloud: 91 tools, e.g. issues, sprint, filter, worklog` (the words that set its tool names apart)
 *   2–4. the same with 8, 16 and 32 words
 *   5. `- jira-cloud (jira_cloud__…): jira_add_comment, jira_add_labels, …` (every tool name)
 *   6. the tool names, each with a one-line description
 * A handful of servers is shown whole; 45 servers get their words, the small ones their names; hundreds end in
 * "… and N more servers". The output depends only on the catalog's content, never on the order it arrives in:
 * prompt caches rely on it.
 */
import { splitWords, stem, termOf } from "./words.ts";
import { compareStrings, oneLine } from "../util/text.ts";
import { PREFIX_SEPARATOR, TOOL_SEARCH_NAME, type ToolMetadata } from "../types.ts";

/** How many tools one ToolSearch call loads at most (the description promises it; tool-search.ts applies it). */
export const TOOLS_PER_SEARCH = 5;

/**
 * Whole description, in o200k tokens. With ToolSearch's own name and schema (~60 tokens) this keeps the tool
 * under the product goal of 1,500 tokens over Pi's baseline, whatever the number of tools.
 */
export const CATALOG_TOKEN_BUDGET = 1_200;

export interface CatalogServerInfo {
  name: string;
  /** One line about the server (e.g. its `serverInfo.title`); shown when there is room. */
  description?: string;
  /** False for a server never listed yet (no cache): it is named, with its tools "not known yet". */
  toolsKnown?: boolean;
}

export interface CatalogInput {
  /** The deferred tools: what ToolSearch can load. */
  tools: readonly ToolMetadata[];
  /** Descriptions, and servers whose tools are not known yet; servers that only appear in `tools` are listed too. */
  servers?: readonly CatalogServerInfo[];
}

/**
 * The budget is checked with an estimate, since the tokenizer is a dev dependency: one token per run of up to 4
 * letters, up to 2 digits, or one other visible character. Over the corpus's catalogs at every scale this counts
 * 1.02–1.7 times what o200k does: never fewer (the tests check with the real tokenizer), and most generous with
 * prose, which only small catalogs show.
 */
const TOKEN_PIECES = /[A-Za-z]{1,4}|[0-9]{1,2}|[^\sA-Za-z0-9]/g;
const TOOL_DESCRIPTION_CHARS = 80;
const SERVER_DESCRIPTION_CHARS = 60;
const CAPABILITY_WORDS = [4, 8, 16, 32];
/** Words every kind of server uses for its tools: they say nothing about what a server can do. */
const GENERIC_NAME_WORDS: ReadonlySet<string> = new Set(
  (
    "get list create update delete set add remove search find read write fetch retrieve by id all new edit do run " +
    "api mcp tool tools"
  )
    .split(" ")
    .map(stem),
);

// How loaded tools become callable differs between Pi versions: the search result says it, not this header.
const HEADER =
  `Find and load tools from MCP servers. The tools of the servers below are not active yet: call ` +
  `${TOOL_SEARCH_NAME} to load the ones you need, then use them.\n` +
  `query: what you need, as keywords or in plain words (e.g. "take a screenshot of the page"), or ` +
  `"select:name1,name2" to load tools by exact name. Loads up to ${TOOLS_PER_SEARCH} tools per call.`;

interface ServerEntry {
  name: string;
  description: string;
  tools: ToolMetadata[];
  toolsKnown: boolean;
}

export function buildToolSearchDescription(catalog: CatalogInput): string {
  const servers = groupByServer(catalog);
  if (servers.length === 0) return `${HEADER}\n\nNo MCP tools are available.`;
  const toolCount = servers.reduce((sum, server) => sum + server.tools.length, 0);
  const totals = `${toolCount} ${plural(toolCount, "tool")} on ${servers.length} ${plural(servers.length, "server")}`;
  const heading = `${HEADER}\n\nMCP servers (${totals}):`;
  const lines = chooseLevels(servers.map(renderLevels(servers)), CATALOG_TOKEN_BUDGET - estimateTokens(heading));
  return [heading, ...lines].join("\n");
}

/** Servers sorted by name, each with its tools sorted by name: the order the input came in never matters. */
function groupByServer(catalog: CatalogInput): ServerEntry[] {
  const byName = new Map<string, ServerEntry>();
  const entry = (name: string) => {
    let server = byName.get(name);
    if (!server) byName.set(name, (server = { name, description: "", tools: [], toolsKnown: true }));
    return server;
  };
  for (const info of catalog.servers ?? []) {
    const server = entry(info.name);
    // A server named twice keeps the same description whatever the order.
    if (info.description && (!server.description || info.description < server.description)) {
      server.description = info.description;
    }
    if (info.toolsKnown === false) server.toolsKnown = false;
  }
  for (const tool of catalog.tools) entry(tool.serverName).tools.push(tool);
  const servers = [...byName.values()].filter((server) => server.tools.length > 0 || !server.toolsKnown);
  for (const server of servers) server.tools.sort((a, b) => compareStrings(a.name, b.name));
  return servers.sort((a, b) => compareStrings(a.name, b.name));
}

/**
 * Each server's possible lines, from the count alone to every tool described. A summary that costs as much as the
 * list of names is left out: the names say more.
 */
function renderLevels(servers: readonly ServerEntry[]): (server: ServerEntry) => string[] {
  const rarity = nameWordRarity(servers);
  return (server) => {
    const about = server.description && oneLine(server.description, SERVER_DESCRIPTION_CHARS, "summary");
    const title = about ? `${server.name} (${about})` : server.name;
    if (server.tools.length === 0) return [`- ${title}: tools not known yet (search to list them)`];
    const count = `- ${title}: ${server.tools.length} ${plural(server.tools.length, "tool")}`;
    const words = capabilityWords(server, rarity);
    const prefix = commonPrefix(server.tools);
    const shortName = (tool: ToolMetadata) => tool.name.slice(prefix.length);
    const named = prefix ? `${title} (${prefix}…)` : title;
    const names = `- ${named}: ${server.tools.map(shortName).join(", ")}`;
    const described = server.tools.map(
      (tool) => `  ${shortName(tool)}: ${oneLine(tool.description, TOOL_DESCRIPTION_CHARS, "summary")}`,
    );
    const summaries = CAPABILITY_WORDS.map((n) => words.slice(0, n))
      .filter((chosen) => chosen.length > 0)
      .map((chosen) => `${count}, e.g. ${chosen.join(", ")}`);
    const cheaperThanNames = new Set(summaries.filter((summary) => summary.length < names.length));
    const levels = [count, ...cheaperThanNames, names, [`- ${named}:`, ...described].join("\n")];
    // The server's description (its config's) is an upgrade like the others: at scale, every server counted beats
    // a few described and the rest cut off.
    return about ? [`- ${server.name}: ${server.tools.length} ${plural(server.tools.length, "tool")}`, ...levels] : levels;
  };
}

/**
 * Starts every server at level 0 and raises the cheapest first, one level at a time, while the text fits: many
 * servers described a little beat a few described fully. Servers that do not fit even at level 0 are counted.
 */
function chooseLevels(levels: readonly string[][], budget: number): string[] {
  const cost = levels.map((server) => server.map((text) => estimateTokens(text) + 1));
  const moreLine = (left: number) => `- … and ${left} more ${plural(left, "server")} (search finds their tools too)`;
  let used = 0;
  for (let fitting = 0; fitting < levels.length; fitting++) {
    const reserve = fitting < levels.length - 1 ? estimateTokens(moreLine(levels.length - fitting)) : 0;
    if (used + cost[fitting][0] + reserve > budget) {
      return [...levels.slice(0, fitting).map((server) => server[0]), moreLine(levels.length - fitting)];
    }
    used += cost[fitting][0];
  }
  const chosen = levels.map(() => 0);
  for (let level = 1; level < Math.max(...cost.map((server) => server.length)); level++) {
    const upgrades = cost
      .flatMap((server, i) => (level < server.length ? [{ i, extra: server[level] - server[level - 1] }] : []))
      .sort((a, b) => a.extra - b.extra || a.i - b.i);
    for (const { i, extra } of upgrades) {
      if (used + extra > budget) break;
      chosen[i] = level;
      used += extra;
    }
  }
  return levels.map((server, i) => server[chosen[i]]);
}

/** How rare each name word (stem) is across servers: ln(1 + servers / servers using it). */
function nameWordRarity(servers: readonly ServerEntry[]): Map<string, number> {
  const serversUsing = new Map<string, number>();
  for (const server of servers) {
    for (const word of new Set(server.tools.flatMap((tool) => splitWords(tool.originalName).map(stem)))) {
      serversUsing.set(word, (serversUsing.get(word) ?? 0) + 1);
    }
  }
  return new Map([...serversUsing].map(([word, count]) => [word, Math.log(1 + servers.length / count)]));
}

/**
 * The words that say what a server's tools are about: frequent in its tool names, rare elsewhere, not generic
 * verbs and not the server's own name. Shown in the spelling its tools use most.
 */
function capabilityWords(server: ServerEntry, rarity: ReadonlyMap<string, number>): string[] {
  const own = new Set(splitWords(server.name).map(stem));
  const tools = new Map<string, number>();
  const spellings = new Map<string, Map<string, number>>();
  for (const tool of server.tools) {
    const seen = new Set<string>();
    for (const word of splitWords(tool.originalName)) {
      const key = termOf(word);
      if (!key || word.length < 2 || /^\d+$/.test(word) || own.has(key) || GENERIC_NAME_WORDS.has(key)) continue;
      const counts = spellings.get(key) ?? new Map<string, number>();
      counts.set(word, (counts.get(word) ?? 0) + 1);
      spellings.set(key, counts);
      if (!seen.has(key)) tools.set(key, (tools.get(key) ?? 0) + 1);
      seen.add(key);
    }
  }
  return [...tools]
    .map(([key, count]) => ({ key, score: count * (rarity.get(key) ?? 0) }))
    .sort((a, b) => b.score - a.score || compareStrings(a.key, b.key))
    .slice(0, Math.max(...CAPABILITY_WORDS))
    .map(({ key }) => mostUsed(spellings.get(key)!));
}

function mostUsed(counts: ReadonlyMap<string, number>): string {
  return [...counts].sort((a, b) => b[1] - a[1] || compareStrings(a[0], b[0]))[0][0];
}

/** The `<server>__` prefix every tool of the server carries, or "" when they do not all share one. */
function commonPrefix(tools: readonly ToolMetadata[]): string {
  const at = tools[0].name.indexOf(PREFIX_SEPARATOR);
  if (at <= 0) return "";
  const prefix = tools[0].name.slice(0, at + PREFIX_SEPARATOR.length);
  return tools.every((tool) => tool.name.startsWith(prefix) && tool.name.length > prefix.length) ? prefix : "";
}

function estimateTokens(text: string): number {
  return (text.match(TOKEN_PIECES) ?? []).length;
}

function plural(count: number, word: string): string {
  return count === 1 ? word : `${word}s`;
}

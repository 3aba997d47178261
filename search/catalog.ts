/**
 * The ToolSearch description: what the tool does, and a catalog of what it can find, small at any scale.
 *
 * Every server gets one line at the richest level the token budget allows, cheapest upgrades first:
 *   0. `jira-cloud`
 *   1. `jira-cloud: issues sprint` (the words that set its tool names apart; a server's description comes first,
 *      in three steps of up to 24, 40 and 60 characters)
 *   2–9. the same with 3, 4, 6, 8, 12, 16, 24 and 32 words
 *   10. `redis: delete get list set` (every tool name)
 *   11. the tool names, each with a one-line description
 * A handful of servers is shown whole; 45 servers get a few words each, the small ones their names; hundreds end in
 * "… and N more servers". Lines carry no bullets or counts and words no commas: at 45 servers each of those costs
 * the model more than a word about the server would. The output depends only on the catalog's content, never on
 * the order it arrives in: prompt caches rely on it.
 */
import { TOOLS_PER_SEARCH } from "./slots.ts";
import { splitWords, stem, termOf } from "./words.ts";
import { compareStrings, oneLine } from "../util/text.ts";
import { PREFIX_SEPARATOR } from "../tool-names.ts";
import type { ToolMetadata } from "../types.ts";

/**
 * Whole description, as estimated below (o200k counts 1.15–2 times fewer as a provider receives it, JSON-escaped).
 * With ToolSearch's own name and schema (~55 tokens) and McpCall where the host needs it (~65), this keeps the
 * adapter at or under what Pi's built-in MCP costs in its `deferred` mode (+641 tokens at 45 servers), whatever
 * the number of tools: test/tool-catalog.test.ts checks it with the real tokenizer.
 */
export const CATALOG_TOKEN_BUDGET = 560;

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
 * letters, up to 2 digits, or one other visible character, and one per line. Over the corpus's catalogs at every
 * scale this counts 1.15–2 times what o200k does with the text JSON-escaped: never fewer (the tests check with the
 * real tokenizer), and most generous with prose, which only small catalogs show.
 */
const TOKEN_PIECES = /[A-Za-z]{1,4}|[0-9]{1,2}|[^\sA-Za-z0-9]/g;
const TOOL_DESCRIPTION_CHARS = 80;
/** A server's description grows by these steps: at 45 servers each gets a few words of it before any gets all. */
const SERVER_DESCRIPTION_CHARS = [24, 40, 60];
const CAPABILITY_WORDS = [2, 3, 4, 6, 8, 12, 16, 24, 32];
/** Words every kind of server uses for its tools: they say nothing about what a server can do. */
const GENERIC_NAME_WORDS: ReadonlySet<string> = new Set(
  (
    "get list create update delete set add remove search find read write fetch retrieve by id all new edit do run " +
    "api mcp tool tools take go many multiple info details current"
  )
    .split(" ")
    .map(stem),
);

// How loaded tools become callable differs between Pi versions, and how to write a query is the parameter's to
// say: the search result and the schema say it, not this header, which every request carries.
const HEADER = `Find and load MCP tools (up to ${TOOLS_PER_SEARCH} per call); they are not in your tool list until loaded.`;

interface ServerEntry {
  name: string;
  description: string;
  tools: ToolMetadata[];
  toolsKnown: boolean;
}

export function buildToolSearchDescription(catalog: CatalogInput): string {
  const servers = groupByServer(catalog);
  if (servers.length === 0) return `${HEADER}\nNo MCP tools are available.`;
  const toolCount = servers.reduce((sum, server) => sum + server.tools.length, 0);
  const totals = `${toolCount} ${plural(toolCount, "tool")} on ${servers.length} ${plural(servers.length, "server")}`;
  const heading = `${HEADER}\nMCP servers (${totals}) and what their tools are about:`;
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
 * Each server's possible lines, from its name alone to every tool described. A summary that costs as much as the
 * list of names is left out: the names say more.
 */
function renderLevels(servers: readonly ServerEntry[]): (server: ServerEntry) => string[] {
  const rarity = nameWordRarity(servers);
  return (server) => {
    const titles = SERVER_DESCRIPTION_CHARS.map((chars) => `${server.name} (${oneLine(server.description, chars, "summary")})`);
    const title = server.description ? titles.at(-1)! : server.name;
    if (server.tools.length === 0) return [`${title}: tools not known yet`];
    const prefix = commonPrefix(server.tools);
    const shortName = (tool: ToolMetadata) => tool.name.slice(prefix.length);
    const names = `${title}: ${server.tools.map(shortName).join(" ")}`;
    const described = [
      `${prefix ? `${title} (${prefix}…)` : title}:`,
      ...server.tools.map((tool) => `  ${shortName(tool)}: ${oneLine(tool.description, TOOL_DESCRIPTION_CHARS, "summary")}`),
    ].join("\n");
    const words = capabilityWords(server, rarity);
    // Each count of words once (a server may have fewer), and fewer words than tools: else the names say more.
    const summaries = CAPABILITY_WORDS.filter((n, i) => n < server.tools.length && words.length > (CAPABILITY_WORDS[i - 1] ?? 0))
      .map((n) => `${title}: ${words.slice(0, n).join(" ")}`)
      .filter((summary) => summary.length < names.length);
    return [...new Set([server.name, ...(server.description ? titles : []), ...summaries, names, described])];
  };
}

/**
 * Starts every server at level 0 and raises the cheapest first, one level at a time, while the text fits: many
 * servers described a little beat a few described fully. Servers that do not fit even at level 0 are counted.
 */
function chooseLevels(levels: readonly string[][], budget: number): string[] {
  const cost = levels.map((server) => server.map((text) => estimateTokens(text) + 1));
  const moreLine = (left: number) => `… and ${left} more ${plural(left, "server")} (search finds their tools too)`;
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
      // Only servers that reached the level below: the extra cost is counted from where each server is.
      .flatMap((server, i) => (level < server.length && chosen[i] === level - 1 ? [{ i, extra: server[level] - server[level - 1] }] : []))
      .sort((a, b) => a.extra - b.extra || a.i - b.i);
    for (const { i, extra } of upgrades) {
      // Every server that can reaches a level before any goes past it: no server shown richly while another is bare.
      if (used + extra > budget) return levels.map((server, j) => server[chosen[j]]);
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

/**
 * ToolSearch: the one MCP tool the model always has. Its description is a catalog of what can be found; a call
 * (keywords, a plain request, or `select:name1,name2`) activates up to five tools and says how to call them.
 *
 * Pi ≥ 0.80.3 offers a tool activated during a run from the run's next turn. Older hosts (0.73.1) offer it only
 * from the user's next prompt, so there the adapter also registers McpCall, which calls a loaded tool by name
 * within the same prompt; ToolSearch's answer then carries the tool's schema and says to use McpCall.
 */
import { validateToolArguments } from "@mariozechner/pi-ai";
import { type AgentToolResult, defineTool, type ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { Type } from "typebox";
import { waitAtMost } from "./util/abort.ts";
import type { ExposedToolInfo, HostCapabilities, ToolExposureFields } from "./host.ts";
import { buildSearchIndex, type ToolSearchIndex } from "./search/tool-index.ts";
import { RERANK_DEPTH, type SemanticRanker } from "./search/semantic.ts";
import { candidateLines, MAX_CANDIDATES } from "./search/suggestions.ts";
import { instructionsToShow } from "./search/server-instructions.ts";
import type { McpServerManager } from "./server-manager.ts";
import { buildToolSearchDescription, type CatalogServerInfo } from "./search/catalog.ts";
import { TOOLS_PER_SEARCH } from "./search/slots.ts";
import { jsonSchemaParameters, type McpToolRunner, reachedBy } from "./tool-registrar.ts";
import { oneLine, truncate } from "./util/text.ts";
import type { ToolView } from "./tool-view.ts";
import { MCP_CALL_NAME, TOOL_SEARCH_NAME, type ServerDefinition, type ToolMetadata } from "./types.ts";
import { ADAPTER_TOOL_NAMES } from "./tool-names.ts";

/** The ranking index, for the parts of the session that rebuild it when the config changes. */
export type { ToolSearchIndex } from "./search/tool-index.ts";
export type { SemanticRanker } from "./search/semantic.ts";

const SELECT_PREFIX = "select:";
/** How long a search waits for servers whose tools are still being learned at startup. */
const STARTUP_WAIT_MS = 30_000;

/**
 * The parameters as plain JSON Schema with their static type (`Type.Unsafe`), not `Type.Object`: typebox would write
 * `required` before `properties`, and providers that send a schema as it is (OpenAI, Google) would show the model
 * other bytes than before (a prompt-cache miss); Pi would also coerce a `null` query to "null" instead of "".
 */
const TOOL_SEARCH_PARAMETERS = Type.Unsafe<{ query: string }>({
  type: "object",
  properties: {
    query: {
      type: "string",
      description: `Keywords or a plain request for the tools you need, or ${SELECT_PREFIX}name1,name2 for exact names`,
    },
  },
  required: ["query"],
});

/** Plain JSON Schema for the same reasons as `TOOL_SEARCH_PARAMETERS`. */
const MCP_CALL_PARAMETERS = Type.Unsafe<{ tool: string; arguments?: Record<string, unknown> }>({
  type: "object",
  properties: {
    tool: { type: "string", description: "Exact name of the loaded tool" },
    arguments: { type: "object", additionalProperties: true },
  },
  required: ["tool"],
});

export interface ToolSearchDetails {
  query: string;
  /** Tools this call activated (read back after a reload to restore them). */
  loaded: string[];
  /** Servers whose instructions this answer showed (read back after a reload: not shown twice). */
  instructed?: string[];
}

/** What ToolSearch and McpCall use of the session (its state has it all). */
export interface ToolSearchContext extends Pick<ToolView, "servers" | "inventories" | "tools" | "directToolNames"> {
  /** Learning the tools of servers missing from the cache; a search waits for it (boundedly) when it must. */
  readonly startup: Promise<void>;
  /** Built by the first search after `tools` changed. */
  searchIndex: ToolSearchIndex | undefined;
  readonly semantic: Pick<SemanticRanker, "rerank"> | undefined;
  readonly manager: Pick<McpServerManager, "preloadConnectionCode">;
  readonly host: Pick<HostCapabilities, "refreshesToolsEachTurn">;
  /** Servers whose instructions an answer has shown; this answer adds the ones it shows. */
  readonly instructionsShown: Set<string>;
  readonly offeredThisRun: ReadonlySet<string>;
  /** Registers these MCP tools with Pi if they are not yet. */
  readonly registerTools: (names: readonly string[]) => void;
}

/** The part of Pi's API that ToolSearch and McpCall use: the model's active tools. */
export type PiActiveTools = Pick<ExtensionAPI, "getActiveTools" | "setActiveTools">;

/** Reads the adapter's current state; throws when the adapter is not running. */
export type StateAccess = () => ToolSearchContext;

/** Scripts have nothing to load: ToolSearch is the model's. A search may load any tool; `select:` names its tools. */
const TOOL_SEARCH_EXPOSURE: ToolExposureFields = {
  exposure: "model-only",
  reachesTools: (input) => {
    const query = typeof input.query === "string" ? input.query.trim() : "";
    return query.toLowerCase().startsWith(SELECT_PREFIX) ? selectedNames(query.slice(SELECT_PREFIX.length)) : "all";
  },
};

/** Scripts call MCP tools themselves; McpCall reaches the one tool it names. */
const MCP_CALL_EXPOSURE: ToolExposureFields = {
  exposure: "model-only",
  reachesTools: (input) => (typeof input.tool === "string" ? [input.tool] : []),
};

export function toolSearchDefinition(pi: PiActiveTools, access: StateAccess, description: string) {
  return defineTool({
    ...TOOL_SEARCH_EXPOSURE,
    name: TOOL_SEARCH_NAME,
    label: "Tool search",
    description,
    parameters: TOOL_SEARCH_PARAMETERS,
    execute: async (_toolCallId, params, signal) => {
      const state = access();
      await waitForStartup(state, signal);
      return searchAndLoad(pi, state, params.query, signal);
    },
  });
}

/** The catalog as the model reads it: the deferred tools, plus servers whose tools are not known yet. */
export function currentToolSearchDescription(view: ToolView): string {
  const deferred = [...view.tools.byName.values()].filter((tool) => !view.directToolNames.has(tool.name));
  const servers: CatalogServerInfo[] = [...view.servers.values()]
    .filter((server) => server.enabled !== false)
    .map((server) => ({ name: server.name, description: server.description, toolsKnown: view.inventories.has(server.name) }));
  return buildToolSearchDescription({ tools: deferred, servers });
}

export function mcpCallDefinition(pi: PiActiveTools, access: StateAccess, run: McpToolRunner) {
  return defineTool({
    ...MCP_CALL_EXPOSURE,
    name: MCP_CALL_NAME,
    label: "Call MCP tool",
    // ToolSearch's answer says when to use it, with an example: this text is in every request, that answer only once.
    description: `Call a tool ${TOOL_SEARCH_NAME} loaded that is not in your tool list yet.`,
    parameters: MCP_CALL_PARAMETERS,
    execute: async (toolCallId, params, signal, onUpdate, ctx) => {
      const { tool: name, arguments: args } = params;
      // A tool of a server still being listed at startup is waited for, as a search would.
      if (!access().tools.byName.has(name)) await waitForStartup(access(), signal);
      const tool = access().tools.byName.get(name);
      if (!tool) throw new Error(`"${name}" is not an MCP tool. Use ${TOOL_SEARCH_NAME} to find and load one first.`);
      // The same coercion and validation Pi applies to a direct call of the tool.
      const validated: unknown = validateToolArguments(
        { name: tool.name, description: tool.description, parameters: jsonSchemaParameters(tool.inputSchema) },
        { type: "toolCall", id: toolCallId, name: tool.name, arguments: args ?? {} },
      );
      const loaded = activate(pi, access(), [tool.name]);
      const result = await run(tool.name, validated, signal, onUpdate, ctx);
      // Recorded like ToolSearch's loads: the tool stays loaded on this branch after a reload, resume or fork.
      return loaded.length > 0 ? { ...result, details: { ...(result.details as object), loaded } } : result;
    },
  });
}

/**
 * tool_call of a tool that reaches other tools (Pi 1.x's `codemode`; `reachesTools` exists only there): the MCP
 * tools the call may reach are registered with Pi before it runs (once the session is bound, only tools to be active
 * are registered otherwise), after the listing of a server it may reach whose tools are not known yet.
 */
export async function registerReachedTools(
  pi: Pick<ExtensionAPI, "getAllTools">,
  state: ToolSearchContext & Pick<ToolView, "config">,
  isRegistered: (name: string) => boolean,
  call: { toolName: string; input: Record<string, unknown> },
): Promise<void> {
  if (state.tools.byName.has(call.toolName) || ADAPTER_TOOL_NAMES.has(call.toolName)) return;
  const allKnown = [...state.servers.values()].every((server) => server.enabled === false || state.inventories.has(server.name));
  if (allKnown && [...state.tools.byName.keys()].every(isRegistered)) return; // the common case: nothing to do
  const reach = (pi.getAllTools() as ExposedToolInfo[]).find((tool) => tool.name === call.toolName)?.reachesTools?.(call.input);
  if (reach === undefined) return;
  if (reachedBy(reach, state).unknownServer) await waitForStartup(state, undefined);
  state.registerTools(reachedBy(reach, state).tools);
}

/** The servers' configured `description`s, a search field of their tools. */
function serverDescriptions(servers: Iterable<ServerDefinition>): Map<string, string> {
  return new Map([...servers].flatMap((server) => (server.description ? [[server.name, server.description] as const] : [])));
}

/** Waits (boundedly) for startup to learn the tools of servers missing from the cache; not when all are known. */
export async function waitForStartup(state: ToolSearchContext, signal: AbortSignal | undefined): Promise<void> {
  const unknown = [...state.servers.values()].some((server) => server.enabled !== false && !state.inventories.has(server.name));
  if (unknown) await waitAtMost(state.startup, STARTUP_WAIT_MS, signal);
}

async function searchAndLoad(
  pi: PiActiveTools,
  state: ToolSearchContext,
  query: string,
  signal: AbortSignal | undefined,
): Promise<AgentToolResult<ToolSearchDetails>> {
  const trimmed = query.trim();
  if (trimmed === "") return answer(query, [], usage(state, "The query was empty."));
  const { tools, notes, candidates } = trimmed.toLowerCase().startsWith(SELECT_PREFIX)
    ? { ...selectByName(state, trimmed.slice(SELECT_PREFIX.length)), candidates: [] }
    : await searchWithCandidates(state, trimmed, signal);
  if (tools.length === 0) {
    const reason = notes.length > 0 ? "Nothing was loaded." : `No MCP tool matches "${truncate(trimmed, QUOTED_REQUEST_CHARS)}".`;
    return answer(query, [], [...notes, ...usage(state, reason)]);
  }
  const before = new Set(pi.getActiveTools());
  const loaded = tools.filter((tool) => !before.has(tool.name)).map((tool) => tool.name);
  activate(pi, state, loaded);
  // A call is likely next: load the connection code once this answer is out, while the model reads it.
  setImmediate(() => state.manager.preloadConnectionCode());
  const instructions = instructionsToShow(tools, state.inventories, state.instructionsShown);
  const result = answer(query, loaded, [...notes, ...describeLoaded(state, tools), ...instructions.lines, ...candidates]);
  if (instructions.servers.length > 0) result.details.instructed = instructions.servers;
  return result;
}

/** The tools to load, and the lines naming close matches that did not fit (search/suggestions.ts). */
async function searchWithCandidates(
  state: ToolSearchContext,
  query: string,
  signal: AbortSignal | undefined,
): Promise<{ tools: ToolMetadata[]; notes: string[]; candidates: string[] }> {
  const index = searchIndex(state);
  const lexical = index.search(query, state.semantic ? RERANK_DEPTH : TOOLS_PER_SEARCH + MAX_CANDIDATES);
  const hits = state.semantic ? await state.semantic.rerank(query, lexical, index.unknownWordShare(query), signal) : lexical;
  const further = hits.slice(TOOLS_PER_SEARCH, TOOLS_PER_SEARCH + MAX_CANDIDATES);
  return {
    tools: hits.slice(0, TOOLS_PER_SEARCH).map((hit) => hit.tool),
    notes: [],
    candidates: candidateLines(hits[0]?.score ?? 0, further, `${TOOL_SEARCH_NAME} "${SELECT_PREFIX}<name>"`),
  };
}

/** ToolSearch's ranking (lexical) for the script API's `searchTools` and its close matches: the best `limit` tools. */
export function rankTools(state: ToolSearchContext, query: string, limit: number): ToolMetadata[] {
  return searchIndex(state)
    .search(query, limit)
    .map((hit) => hit.tool);
}

/** Built on first use after the tools change (init.ts drops it). */
function searchIndex(state: ToolSearchContext): ToolSearchIndex {
  state.searchIndex ??= buildSearchIndex([...state.tools.byName.values()], serverDescriptions(state.servers.values()));
  return state.searchIndex;
}

/**
 * Exact names first; then, forgivingly, a name in another case, an MCP name (when only one server has it), or
 * `server/tool`. Unknown names are reported with the closest match the search finds.
 */
function selectByName(state: ToolSearchContext, list: string): { tools: ToolMetadata[]; notes: string[] } {
  const tools: ToolMetadata[] = [];
  const notes: string[] = [];
  for (const name of selectedNames(list)) {
    const matches = resolveName(state, name);
    if (matches.length === 1) {
      if (!tools.includes(matches[0])) tools.push(matches[0]);
    } else if (matches.length > 1) {
      notes.push(`"${name}" is ambiguous: ${matches.map((tool) => tool.name).join(", ")}.`);
    } else {
      const closest = searchIndex(state).search(name, 1)[0]?.tool;
      notes.push(`No MCP tool is named "${truncate(name, QUOTED_REQUEST_CHARS)}"${closest ? ` (closest: ${closest.name})` : ""}.`);
    }
  }
  if (tools.length > TOOLS_PER_SEARCH) {
    notes.push(
      `Loaded the first ${TOOLS_PER_SEARCH}; not loaded: ${tools
        .slice(TOOLS_PER_SEARCH)
        .map((tool) => tool.name)
        .join(", ")}.`,
    );
  }
  return { tools: tools.slice(0, TOOLS_PER_SEARCH), notes };
}

function selectedNames(list: string): string[] {
  return list
    .split(",")
    .map((part) => part.trim())
    .filter(Boolean);
}

function resolveName(state: ToolSearchContext, name: string): ToolMetadata[] {
  const all = [...state.tools.byName.values()];
  const exact = state.tools.byName.get(name);
  if (exact) return [exact];
  const lower = name.toLowerCase();
  const byPiName = all.filter((tool) => tool.name.toLowerCase() === lower);
  if (byPiName.length > 0) return byPiName;
  const slash = name.indexOf("/");
  if (slash > 0) {
    const server = name.slice(0, slash);
    const original = name.slice(slash + 1);
    const qualified = all.filter((tool) => tool.serverName === server && tool.originalName === original);
    // MCP names may contain "/" themselves.
    if (qualified.length > 0) return qualified;
  }
  return all.filter((tool) => tool.originalName === name);
}

/** Each tool, and how to call it on this host in this run. */
function describeLoaded(state: ToolSearchContext, tools: readonly ToolMetadata[]): string[] {
  const callableNow = (tool: ToolMetadata) =>
    state.host.refreshesToolsEachTurn || state.offeredThisRun.has(tool.name) || state.directToolNames.has(tool.name);
  const direct = tools.filter(callableNow);
  const viaProxy = tools.filter((tool) => !callableNow(tool));
  const lines: string[] = [];
  if (direct.length > 0) {
    lines.push(`Loaded ${direct.length === 1 ? "this tool" : "these tools"}; call ${direct.length === 1 ? "it" : "them"} directly:`);
    for (const tool of direct) lines.push(`- ${tool.name}: ${oneLine(tool.description, ONE_LINE_CHARS, "excerpt")}`);
  }
  if (viaProxy.length > 0) {
    lines.push(
      `Loaded ${viaProxy.length === 1 ? "this tool" : "these tools"}. ${viaProxy.length === 1 ? "It joins" : "They join"} your tool list ` +
        `with the user's next message; until then call ${viaProxy.length === 1 ? "it" : "them"} through ${MCP_CALL_NAME}, ` +
        `e.g. ${MCP_CALL_NAME}({"tool": "${viaProxy[0].name}", "arguments": {...}}):`,
    );
    for (const tool of viaProxy) {
      lines.push(
        `- ${tool.name}: ${oneLine(tool.description, ONE_LINE_CHARS, "excerpt")}`,
        `  Parameters (JSON Schema): ${JSON.stringify(tool.inputSchema)}`,
      );
    }
  }
  return lines;
}

function usage(state: ToolSearchContext, reason: string): string[] {
  const servers = [...state.tools.byServer.keys()];
  return [
    reason,
    `Describe the tool you need in a few words, or use "${SELECT_PREFIX}name1,name2" with exact tool names.`,
    servers.length > 0 ? `MCP servers: ${servers.join(", ")}.` : "No MCP tools are known yet.",
  ];
}

function answer(query: string, loaded: string[], lines: string[]): AgentToolResult<ToolSearchDetails> {
  return { content: [{ type: "text", text: lines.join("\n") }], details: { query, loaded } };
}

/**
 * Adds to the active set (registering with Pi what was not yet); never drops what the model already has. Returns
 * the names it activated.
 */
export function activate(pi: PiActiveTools, state: ToolSearchContext, names: readonly string[]): string[] {
  // Read first: older hosts activate a tool when it is registered for the first time.
  const before = new Set(pi.getActiveTools());
  const missing = names.filter((name) => !before.has(name));
  state.registerTools(names);
  const active = pi.getActiveTools();
  const inactive = missing.filter((name) => !active.includes(name));
  if (inactive.length > 0) pi.setActiveTools([...active, ...inactive]);
  return missing;
}

const ONE_LINE_CHARS = 200;
/** How much of the model's request a "no match" note quotes. */
const QUOTED_REQUEST_CHARS = 80;

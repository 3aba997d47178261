/**
 * The tools the adapter knows, from the configuration and each server's metadata (the cache at first, the live
 * server once it connects), with their Pi names and which of them are direct. Built once at module scope and
 * handed to the session when nothing changed in between: building it for a thousand tools is not free.
 */
import { DIRECT_TOOLS_ENV, type DirectToolRules, parseDirectToolsEnv, selectDirectTools } from "./direct-tools.ts";
import { type CachedServerEntry, getValidEntry, type MetadataCacheSnapshot } from "./metadata-cache.ts";
import { withDirectInstructions } from "./search/server-instructions.ts";
import { buildToolMetadata, type ServerInventory, type ToolMetadataIndex } from "./tool-metadata.ts";
import type { KnownServer } from "./connection/establish.ts";
import type { FreshLists, ListsFreshUntil } from "./connection/live-connection.ts";
import type { ProtocolVerdict } from "./connection/session.ts";
import type { LoadedConfig, ServerDefinition } from "./types.ts";

/** A server's tools and resources, and whether they come from the cache or from the server itself. */
export interface ServerInventoryEntry extends ServerInventory {
  origin: "cache" | "live";
  listedAt: number;
  /** The protocol the server spoke when it was listed: its next connect starts from it. */
  protocol?: ProtocolVerdict;
  /** Until when each of its lists is valid, as the server said. */
  freshUntil?: ListsFreshUntil;
}

/** The tools known from the configuration and the servers' metadata (cached or live): what gets registered. */
export interface ToolView {
  readonly config: LoadedConfig;
  /** Every configured server by name, disabled ones included. */
  readonly servers: ReadonlyMap<string, ServerDefinition>;
  /** Servers whose tools are known (live or cached), by name. */
  readonly inventories: Map<string, ServerInventoryEntry>;
  /** The tools built from `inventories`, with their Pi names. */
  tools: ToolMetadataIndex;
  /** Tools active from the first request (MCP_DIRECT_TOOLS / directTools). */
  directToolNames: ReadonlySet<string>;
}

/** `live`: inventories listed in this session that still apply (after a config change); they win over the cache. */
export function buildToolView(
  config: LoadedConfig,
  cache: MetadataCacheSnapshot,
  live: ReadonlyMap<string, ServerInventoryEntry> = new Map(),
): ToolView {
  const inventories = cachedInventories(config, cache);
  for (const [name, inventory] of live) inventories.set(name, inventory);
  return { config, servers: new Map(config.servers.map((server) => [server.name, server])), inventories, ...toolsOf(inventories, config) };
}

/**
 * A server's live (or refreshed) metadata, in the form the cache keeps, or another process's listing of it found in
 * the cache (`origin` "cache"). Returns false when it is what the view had already: then nothing is rebuilt.
 */
export function updateServerInventory(
  view: ToolView,
  name: string,
  entry: CachedServerEntry,
  origin: ServerInventoryEntry["origin"] = "live",
): boolean {
  const definition = view.servers.get(name);
  if (!definition) return false;
  const previous = view.inventories.get(name);
  view.inventories.set(name, inventoryEntry(definition, entry, origin));
  if (previous && sameLists(previous, entry)) return false;
  Object.assign(view, toolsOf(view.inventories, view.config));
  return true;
}

/**
 * What a server's inventory says of it for its next connect: the protocol it spoke, and the lists it said are still
 * valid (2026-07-28 `ttlMs`), which the connect takes as they are instead of asking again.
 */
export function knownServer(inventory: ServerInventoryEntry | undefined, now = Date.now()): KnownServer {
  const until = inventory?.freshUntil ?? {};
  const fresh: FreshLists = {};
  if (!inventory) return { fresh };
  const valid = (time: number | undefined): time is number => time !== undefined && time > now;
  if (valid(until.tools)) fresh.tools = { items: [...inventory.tools], freshUntil: until.tools };
  if (valid(until.resources))
    fresh.resources = { items: [...inventory.resources], templates: [...(inventory.resourceTemplates ?? [])], freshUntil: until.resources };
  if (valid(until.prompts) && inventory.prompts) fresh.prompts = { items: [...inventory.prompts], freshUntil: until.prompts };
  return { protocol: inventory.protocol, fresh };
}

/** What a server says of itself to scripts (a codemode namespace): its configured `description`, its instructions. */
export function serverAbout(
  view: Pick<ToolView, "servers" | "inventories">,
  name: string,
): { description?: string; instructions?: string } {
  return { description: view.servers.get(name)?.description, instructions: view.inventories.get(name)?.instructions };
}

export function directRules(config: LoadedConfig): DirectToolRules {
  return {
    servers: new Map(config.servers.map((server) => [server.name, server])),
    settings: config.settings,
    override: parseDirectToolsEnv(process.env[DIRECT_TOOLS_ENV]),
  };
}

function toolsOf(
  inventories: ReadonlyMap<string, ServerInventoryEntry>,
  config: LoadedConfig,
): Pick<ToolView, "tools" | "directToolNames"> {
  const tools = buildToolMetadata([...inventories.values()], config.settings);
  const direct = selectDirectTools(tools.byName.values(), directRules(config));
  for (const tool of withDirectInstructions(direct, inventories)) {
    tools.byName.set(tool.name, tool);
    const list = tools.byServer.get(tool.serverName) ?? [];
    list[list.findIndex((other) => other.name === tool.name)] = tool;
  }
  return { tools, directToolNames: new Set(direct.map((tool) => tool.name)) };
}

function cachedInventories(config: LoadedConfig, cache: MetadataCacheSnapshot): Map<string, ServerInventoryEntry> {
  const inventories = new Map<string, ServerInventoryEntry>();
  for (const definition of config.servers) {
    if (definition.enabled === false) continue;
    const entry = getValidEntry(cache, definition);
    if (entry) inventories.set(definition.name, inventoryEntry(definition, entry, "cache"));
  }
  return inventories;
}

/** Cache entries (read back, or made from a live listing) hold provider-safe schemas already. */
function inventoryEntry(
  definition: ServerDefinition,
  entry: CachedServerEntry,
  origin: ServerInventoryEntry["origin"],
): ServerInventoryEntry {
  const { tools, resources, resourceTemplates, prompts, instructions, protocol, freshUntil, skills } = entry;
  return {
    definition,
    tools,
    resources,
    resourceTemplates,
    prompts,
    instructions,
    protocol,
    freshUntil,
    skills,
    schemasProviderSafe: true,
    origin,
    listedAt: entry.cachedAt,
  };
}

type Lists = Pick<ServerInventoryEntry, "tools" | "resources" | "resourceTemplates" | "prompts" | "instructions">;

function sameLists(a: Lists, b: Lists): boolean {
  const lists = (c: Lists) => JSON.stringify([c.tools, c.resources, c.resourceTemplates ?? [], c.prompts, c.instructions]);
  return lists(a) === lists(b);
}

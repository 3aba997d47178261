/**
 * The adapter's life in a Pi session.
 *
 * - Module scope (`registerEarly`): config + metadata cache → the direct tools are registered before any server
 *   starts, so they are active at the first request.
 * - `session_start` (`start`): the previous state is shut down; every cached MCP tool is registered (inactive),
 *   with ToolSearch (and McpCall on hosts that need it); the active set is narrowed. Nothing here waits for a
 *   server: eager/keep-alive servers connect, and servers missing from the cache are listed, in the background.
 * - Each (re)connect or `list_changed` refreshes that server's tools, the cache, the registrations and the catalog.
 * - `session_shutdown` (`shutdown`): timers stopped, every server and its processes ended, cache writes flushed.
 *
 * Pi's `ctx` and `pi` throw once the session is shut down, and 0.73.1 may deliver events after that: everything
 * that runs later checks `state.shutDown` first.
 */
import { type ExtensionAPI, type ExtensionContext, getAgentDir, VERSION } from "@mariozechner/pi-coding-agent";
import semver from "semver";
import { loadConfig } from "./config.ts";
import { type DirectToolRules, DIRECT_TOOLS_ENV, parseDirectToolsEnv, selectDirectTools, wantsDirectTools } from "./direct-tools.ts";
import { piElicitation } from "./elicitation.ts";
import { McpLifecycleManager } from "./lifecycle.ts";
import { createCacheEntry, getValidEntry, loadMetadataCache, type MetadataCacheSnapshot, writeServerEntries } from "./metadata-cache.ts";
import { McpServerManager } from "./server-manager.ts";
import { createCallStats } from "./stats.ts";
import type { HostCapabilities, McpExtensionState, McpUi, ServerCatalogEntry } from "./state.ts";
import { executeMcpTool } from "./tool-executor.ts";
import { createUi } from "./ui.ts";
import { buildToolMetadata } from "./tool-metadata.ts";
import { mcpToolDefinition, type McpToolRunner, ToolRegistrar } from "./tool-registrar.ts";
import { currentToolSearchDescription, mcpCallDefinition, type ToolSearchDetails, toolSearchDefinition } from "./tool-search.ts";
import { type LoadedConfig, MCP_CALL_NAME, type ServerDefinition, TOOL_SEARCH_NAME } from "./types.ts";

export const CONFIG_FLAG = "mcp-config";
/** Pi 0.80.3 was the first to offer tools activated during a run from the run's next turn (its CHANGELOG). */
const FIRST_HOST_REFRESHING_TOOLS = "0.80.3";
const BOOTSTRAP_CONCURRENCY = 10;

export function detectHost(version: string): HostCapabilities {
  // An unreadable version gets the older behaviour: its workaround (McpCall) works on every host.
  return { version, refreshesToolsEachTurn: semver.valid(version) !== null && semver.gte(version, FIRST_HOST_REFRESHING_TOOLS) };
}

export class McpAdapter {
  private readonly pi: ExtensionAPI;
  private readonly registrar: ToolRegistrar;
  private readonly agentDir = getAgentDir();
  private readonly host = detectHost(VERSION);
  private readonly run: McpToolRunner = (name, params, signal, onUpdate) =>
    executeMcpTool(this.requireState(), name, params, signal, onUpdate);
  private state: McpExtensionState | undefined;
  private generation = 0;

  constructor(pi: ExtensionAPI) {
    this.pi = pi;
    this.registrar = new ToolRegistrar(pi);
  }

  current(): McpExtensionState | undefined {
    return this.state;
  }

  requireState(): McpExtensionState {
    if (!this.state || this.state.shutDown) throw new Error("The MCP adapter is not running (the session is starting or ending).");
    return this.state;
  }

  /** Module scope: direct tools from config + cache, with no server started. Never throws. */
  registerEarly(): void {
    try {
      const config = loadConfig({ agentDir: this.agentDir, cwd: process.cwd() });
      const catalogs = cachedCatalogs(config, loadMetadataCache(this.agentDir));
      const tools = buildToolMetadata([...catalogs.values()], config.settings);
      const direct = selectDirectTools(tools.byName.values(), directRules(config));
      this.registrar.register(direct.map((tool) => mcpToolDefinition(tool, this.run)));
    } catch (error) {
      console.error(`[mcp] could not register direct tools at startup: ${messageOf(error)}`);
    }
  }

  async start(ctx: ExtensionContext): Promise<void> {
    const generation = ++this.generation;
    await this.stopState();
    if (generation !== this.generation) return; // a newer session_start took over while the old state shut down
    const ui = createUi(ctx, () => generation !== this.generation);
    let state: McpExtensionState;
    try {
      state = this.createState(ctx, ui);
    } catch (error) {
      ui.notify(`MCP adapter could not start: ${messageOf(error)}`, "error");
      return;
    }
    this.state = state;
    reportConfigProblems(state);
    this.registerAll(state, { restore: loadedInSession(ctx) });
    state.startup = this.runStartup(state);
    state.lifecycle.startHealthChecks();
    updateStatus(state);
  }

  async shutdown(): Promise<void> {
    this.generation++;
    await this.stopState();
  }

  /** agent_start: the tools the model is offered during this run (a host that snapshots them keeps this set). */
  onAgentStart(): void {
    const state = this.state;
    if (state && !state.shutDown) state.offeredThisRun = new Set(this.pi.getActiveTools());
  }

  /** turn_end: bring back eager/keep-alive servers that dropped. Never waits. */
  onTurnEnd(): void {
    const state = this.state;
    if (state && !state.shutDown) void state.lifecycle.reviveDropped().catch(() => {});
  }

  private createState(ctx: ExtensionContext, ui: McpUi): McpExtensionState {
    const cwd = ctx.cwd;
    const configPath = this.pi.getFlag(CONFIG_FLAG);
    const config = loadConfig({ agentDir: this.agentDir, cwd, configPath: typeof configPath === "string" ? configPath : undefined });
    const cache = loadMetadataCache(this.agentDir);
    for (const problem of cache.problems) ui.notify(`MCP cache: ${problem}`, "warning");
    const catalogs = cachedCatalogs(config, cache);
    const servers = new Map(config.servers.map((server) => [server.name, server]));
    let state: McpExtensionState | undefined;
    // Callbacks can fire after this state was replaced or shut down: then they must not touch Pi.
    const whileLive =
      <A extends unknown[]>(handle: (live: McpExtensionState, ...args: A) => void) =>
      (...args: A) => {
        if (state && !state.shutDown) handle(state, ...args);
      };
    const applyLive = whileLive((live, name: string) => this.applyLiveMetadata(live, name));
    const manager = new McpServerManager({
      agentDir: this.agentDir,
      onMetadataChanged: applyLive,
      // Only where someone can answer: servers must not ask a client that cannot.
      elicitation: ctx.hasUI ? piElicitation(() => (state && !state.shutDown ? ctx : undefined)) : undefined,
    });
    const lifecycle = new McpLifecycleManager(manager, {
      onReconnect: applyLive,
      onIdleShutdown: whileLive(updateStatus),
      onConnectFailed: whileLive(reportConnectFailure),
    });
    lifecycle.registerServers(config.servers, config.settings);
    state = {
      agentDir: this.agentDir,
      cwd,
      config,
      servers,
      manager,
      lifecycle,
      host: this.host,
      ui,
      stats: createCallStats(config.settings, this.agentDir),
      catalogs,
      tools: buildToolMetadata([...catalogs.values()], config.settings),
      searchIndex: undefined,
      directToolNames: new Set(),
      offeredThisRun: new Set(),
      startup: Promise.resolve(),
      pendingWrites: new Set(),
      shutDown: false,
    };
    return state;
  }

  /**
   * Registers every known MCP tool and the adapter's own tools, then sets the active set: what was active minus
   * the deferred MCP tools, plus ToolSearch, McpCall (where needed), the direct tools and `restore` (tools the
   * model had loaded before a reload or resume).
   */
  private registerAll(state: McpExtensionState, options: { restore: ReadonlySet<string> }): void {
    this.syncRegistrations(state);
    const ours = new Set([...state.tools.byName.keys(), ...this.registrar.registeredNames()]);
    const wanted = new Set([...this.adapterToolNames(state), ...state.directToolNames]);
    for (const name of options.restore) if (state.tools.byName.has(name)) wanted.add(name);
    const kept = this.pi.getActiveTools().filter((name) => !ours.has(name) || wanted.has(name));
    this.pi.setActiveTools([...new Set([...kept, ...wanted])]);
  }

  /** After a server's tools changed: register what is new, and switch on only what should be on. */
  private refreshRegistrations(state: McpExtensionState): void {
    const added = this.syncRegistrations(state);
    if (added.length === 0) return;
    const wanted = new Set([...this.adapterToolNames(state), ...state.directToolNames]);
    const unwanted = new Set(added.filter((name) => !wanted.has(name)));
    // Read now, not before: ToolSearch may have loaded tools in the meantime, and they must stay.
    const active = this.pi.getActiveTools();
    this.pi.setActiveTools([...new Set([...active.filter((name) => !unwanted.has(name)), ...wanted])]);
  }

  /** Registers tools whose definition is new or changed; returns the names Pi saw for the first time. */
  private syncRegistrations(state: McpExtensionState): string[] {
    state.directToolNames = new Set(selectDirectTools(state.tools.byName.values(), directRules(state.config)).map((tool) => tool.name));
    const definitions = [...state.tools.byName.values()].map((tool) => mcpToolDefinition(tool, this.run));
    const access = () => this.requireState();
    if (this.needsToolSearch(state)) definitions.push(toolSearchDefinition(this.pi, access, currentToolSearchDescription(state)));
    if (this.needsMcpCall(state)) definitions.push(mcpCallDefinition(this.pi, access, this.run));
    return this.registrar.register(definitions);
  }

  private adapterToolNames(state: McpExtensionState): string[] {
    return [...(this.needsToolSearch(state) ? [TOOL_SEARCH_NAME] : []), ...(this.needsMcpCall(state) ? [MCP_CALL_NAME] : [])];
  }

  /** Only when some server is enabled: with no MCP server, the adapter costs the model nothing. */
  private needsToolSearch(state: McpExtensionState): boolean {
    return [...state.servers.values()].some((server) => server.enabled !== false) || this.registrar.isRegistered(TOOL_SEARCH_NAME);
  }

  private needsMcpCall(state: McpExtensionState): boolean {
    return !state.host.refreshesToolsEachTurn && this.needsToolSearch(state);
  }

  /** A server (re)connected or changed its lists: its live tools replace what was known. */
  private applyLiveMetadata(state: McpExtensionState, name: string): void {
    const connection = state.manager.getConnection(name);
    const definition = state.servers.get(name);
    if (!connection || !definition) return;
    state.catalogs.set(name, { definition, tools: connection.tools, resources: connection.resources, origin: "live", listedAt: Date.now() });
    state.tools = buildToolMetadata([...state.catalogs.values()], state.config.settings);
    state.searchIndex = undefined;
    this.refreshRegistrations(state);
    persist(state, definition, connection.tools, connection.resources);
    updateStatus(state);
  }

  /** Background work of session_start: startup connections, and learning the tools of servers not in the cache. */
  private async runStartup(state: McpExtensionState): Promise<void> {
    const rules = directRules(state.config);
    const uncached = [...state.servers.values()].filter(
      (server) => server.enabled !== false && (server.lifecycle ?? "lazy") === "lazy" && !state.catalogs.has(server.name),
    );
    await Promise.all([state.lifecycle.connectStartupServers(), bootstrap(state, uncached)]);
    if (state.shutDown) return;
    updateStatus(state); // bootstrapped lazy servers were ended again
    const directLearned = uncached.filter((server) => wantsDirectTools(server, rules) && state.catalogs.has(server.name));
    if (directLearned.length > 0) {
      state.ui.notify(`MCP: direct tools of ${directLearned.map((server) => server.name).join(", ")} are available from your next message.`, "info");
    }
  }

  private async stopState(): Promise<void> {
    const state = this.state;
    if (!state) return;
    this.state = undefined;
    state.shutDown = true;
    await state.lifecycle.stop();
    await Promise.allSettled([...state.pendingWrites, state.stats?.flush()]);
  }
}

function directRules(config: LoadedConfig): DirectToolRules {
  return {
    servers: new Map(config.servers.map((server) => [server.name, server])),
    settings: config.settings,
    override: parseDirectToolsEnv(process.env[DIRECT_TOOLS_ENV]),
  };
}

function cachedCatalogs(config: LoadedConfig, cache: MetadataCacheSnapshot): Map<string, ServerCatalogEntry> {
  const catalogs = new Map<string, ServerCatalogEntry>();
  for (const definition of config.servers) {
    if (definition.enabled === false) continue;
    const entry = getValidEntry(cache, definition);
    if (entry) catalogs.set(definition.name, { definition, tools: entry.tools, resources: entry.resources, origin: "cache", listedAt: entry.cachedAt });
  }
  return catalogs;
}

/**
 * Lazy servers missing from the cache are started once to learn their tools, then ended again (unless a call is
 * already using them): lazy means no process until a tool is called.
 */
async function bootstrap(state: McpExtensionState, servers: readonly ServerDefinition[]): Promise<void> {
  const queue = [...servers];
  const worker = async () => {
    for (let server = queue.shift(); server && !state.shutDown; server = queue.shift()) {
      const connected = await state.lifecycle.ensureConnected(server.name).then(
        () => true,
        () => false, // reported through onConnectFailed
      );
      if (connected && !state.shutDown && state.manager.isIdle(server.name, 0)) await state.manager.close(server.name);
    }
  };
  await Promise.all(Array.from({ length: Math.min(BOOTSTRAP_CONCURRENCY, queue.length) }, worker));
}

function persist(state: McpExtensionState, definition: ServerDefinition, tools: ServerCatalogEntry["tools"], resources: ServerCatalogEntry["resources"]): void {
  const write = writeServerEntries(state.agentDir, { [definition.name]: createCacheEntry(definition, tools, resources) }).then((result) => {
    if (!result.written) state.ui.notify(`MCP cache not updated: ${result.reason}`, "warning");
  });
  state.pendingWrites.add(write);
  void write.finally(() => state.pendingWrites.delete(write));
}

/** Tools loaded by ToolSearch earlier in this session (before a reload, resume or fork): they stay loaded. */
function loadedInSession(ctx: ExtensionContext): Set<string> {
  const loaded = new Set<string>();
  for (const entry of ctx.sessionManager.getBranch()) {
    if (entry.type !== "message" || entry.message.role !== "toolResult" || entry.message.toolName !== TOOL_SEARCH_NAME) continue;
    const details = entry.message.details as Partial<ToolSearchDetails> | undefined;
    for (const name of Array.isArray(details?.loaded) ? details.loaded : []) if (typeof name === "string") loaded.add(name);
  }
  return loaded;
}

function reportConfigProblems(state: McpExtensionState): void {
  for (const problem of state.config.problems) state.ui.notify(`MCP config: ${problem.message}`, problem.level);
  for (const conflict of state.tools.conflicts) {
    state.ui.notify(
      `MCP: tool "${conflict.originalName}" of server "${conflict.serverName}" is named ${conflict.assigned} (${conflict.wanted} is ${
        conflict.reason === "duplicate" ? `taken by server "${conflict.keptBy?.serverName}"` : "reserved"
      }).`,
      "warning",
    );
  }
}

function reportConnectFailure(state: McpExtensionState, name: string, error: Error): void {
  const status = state.manager.getState(name).status;
  const hint = status === "needs-auth" ? ` Run /mcp-auth ${name} for what to configure.` : "";
  // The manager's connect errors already start with `MCP server "<name>"`.
  state.ui.notify(`${error.message}${hint}`, status === "needs-auth" ? "warning" : "error");
  updateStatus(state);
}

export function updateStatus(state: McpExtensionState): void {
  const enabled = [...state.servers.values()].filter((server) => server.enabled !== false);
  if (enabled.length === 0) return state.ui.setStatus(undefined);
  const connected = enabled.filter((server) => state.manager.getConnection(server.name)).length;
  const failing = enabled.filter((server) => ["failed", "needs-auth"].includes(state.manager.getState(server.name).status)).length;
  const tools = state.tools.byName.size;
  state.ui.setStatus(`MCP ${connected}/${enabled.length} up · ${tools} tools${failing > 0 ? ` · ${failing} failing` : ""}`);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

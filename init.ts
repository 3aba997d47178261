/**
 * The adapter's life in a Pi session.
 *
 * - Module scope (`registerEarly`): config + metadata cache → every cached MCP tool is registered, with ToolSearch
 *   (and McpCall on hosts that need it), before any server starts. Pi takes registrations made while extensions
 *   load in one go; once the session is bound, each one rebuilds its whole tool registry (a thousand tools there
 *   cost seconds, quadratically): after that, only tools to be active are registered (tool-registrar.ts).
 * - `session_start` (`start`): the previous state is shut down; the tools known at module scope are reused when
 *   the config and the cache did not change meanwhile (else registered again where they differ); the active set
 *   is narrowed to builtins + ToolSearch/McpCall + direct tools + tools the model had loaded before a reload.
 *   Nothing here waits for a server: eager/keep-alive servers connect, and servers missing from the cache are
 *   listed, in the background.
 * - Each (re)connect or `list_changed` refreshes that server's tools, the cache, the registrations and the catalog.
 * - `session_shutdown` (`shutdown`): timers stopped, every server and its processes ended, cache writes flushed.
 *
 * Pi's `ctx` and `pi` throw once the session is shut down, and 0.73.1 may deliver events after that: everything
 * that runs later checks `state.shutDown` first.
 */
import type { ImageContent, TextContent } from "@mariozechner/pi-ai";
import * as piHost from "@mariozechner/pi-coding-agent";
import { type ExtensionAPI, type ExtensionContext, getAgentDir, VERSION } from "@mariozechner/pi-coding-agent";
import { appsSettings, createAppViews, type ViewHost, viewsOffered } from "./apps.ts";
import { APPROVAL_ENTRY_TYPE, grantsInSession, SessionApprovals } from "./calls/approvals.ts";
import { applyConfig, type ConfigChange, settingsReadAtStart } from "./config/apply.ts";
import { directToolsLearnedNotice } from "./direct-tools.ts";
import { interpolationContext, RuntimeRegistrations, sameConfig } from "./config.ts";
import { piElicitation } from "./connection/elicitation.ts";
import { piUrlElicitation, UnansweredPages } from "./connection/elicitation-url.ts";
import { ProtocolTrace } from "./connection/protocol-trace.ts";
import { ignored, openDebugLog } from "./util/debug-log.ts";
import { errorMessage } from "./util/guards.ts";
import { detectHost, duplicateToolSearch, type TrustQuestion } from "./host.ts";
import { connectsOnFirstUse, McpLifecycleManager } from "./lifecycle.ts";
import { type CachedServerEntry, createCacheEntry, getCachePath, loadMetadataCache } from "./metadata-cache.ts";
import { MetadataCacheWriter } from "./tools/cache-writer.ts";
import { listUncachedServers } from "./tools/shared-listing.ts";
import { semanticRankerFor } from "./search/semantic.ts";
import { fileStamp } from "./util/file-stamp.ts";
import { PromptCommandRegistry } from "./calls/prompt-commands.ts";
import { McpServerManager } from "./server-manager.ts";
import { createCallStats } from "./calls/stats.ts";
import type { McpExtensionState } from "./state.ts";
import { SCRIPT_TOOL_NAME, scriptSettings, scriptToolDefinition } from "./script-tool.ts";
import { callToolForView, executeMcpTool, piSampling, presentTaskResult, readResourceForView, samplingSettings } from "./tool-executor.ts";
import { SessionTasks, TASK_ENTRY_TYPE, TASK_OUTCOME_MESSAGE_TYPE, taskLimits } from "./tasks.ts";
import { mcpToolDefinition, type McpToolRunner, ToolRegistrar } from "./tool-registrar.ts";
import { currentToolSearchDescription, mcpCallDefinition, registerReachedTools, toolSearchDefinition } from "./tool-search.ts";
import { activeOnBranch, instructedIn, loadedIn } from "./search/session-loads.ts";
import { sessionSkills } from "./skills/session.ts";
import { buildToolView, directRules, knownServer, type ToolView, updateServerInventory } from "./tool-view.ts";
import { SessionConfig } from "./config/session-config.ts";
import { type LoadedConfig, MCP_CALL_NAME, type ServerDefinition, TOOL_SEARCH_NAME } from "./types.ts";
import { createUi, DIALOG_TIMEOUT_MS, type McpUi } from "./ui.ts";
import { noBrowserHere, openInBrowserOutcome } from "./util/browser.ts";
import {
  describeFollowedConfig,
  reportConfigProblems,
  reportConnectFailure,
  reportServerLog,
  reportSignInNeeded,
  updateStatus,
} from "./commands/status-report.ts";

/** The messages a view adds to the conversation (ui/message), and the context it gives the model (ui/update-model-context). */
const VIEW_MESSAGE_TYPE = "mcp-view-message";
const VIEW_CONTEXT_TYPE = "mcp-view-context";

/** Pi's theme as a view's `light` or `dark` (a theme named for light is light; Pi's default is dark). */
function piTheme(ctx: ExtensionContext | undefined): "light" | "dark" {
  try {
    return /light/i.test(ctx?.ui.theme.name ?? "") ? "light" : "dark";
  } catch {
    return "dark";
  }
}

/** How long shutdown waits for the last cache and statistics writes (a lock held by another process must not hold Pi open). */
const SHUTDOWN_FLUSH_MS = 5_000;

/** The view built at module scope, and what it was built from (to tell whether the session may reuse it). */
interface EarlyView {
  view: ToolView;
  cacheStamp: string;
  cacheProblems: string[];
}

export class McpAdapter {
  private readonly pi: ExtensionAPI;
  private readonly registrar: ToolRegistrar;
  private readonly prompts: PromptCommandRegistry;
  private readonly agentDir = getAgentDir();
  private readonly host = detectHost(VERSION, piHost);
  private readonly run: McpToolRunner = (name, params, signal, onUpdate, ctx) =>
    executeMcpTool(this.requireState(), name, params, signal, onUpdate, ctx, { scriptResults: this.host.hasCodemode });
  private readonly sessionConfig: SessionConfig;
  /** Servers other extensions register for the session through upstream's event (config/runtime-servers.ts). */
  private readonly runtime: RuntimeRegistrations;
  private state: McpExtensionState | undefined;
  private early: EarlyView | undefined;
  private generation = 0;
  /** Where a question about the project's config is asked in this session (its UI). */
  private trustQuestion: TrustQuestion | undefined;
  private askingAboutProject = false;

  constructor(pi: ExtensionAPI) {
    this.pi = pi;
    this.registrar = new ToolRegistrar(pi, this.host.hasCodemode);
    this.runtime = new RuntimeRegistrations({
      configured: () => {
        const config = this.state?.config ?? this.early?.view.config;
        return new Set(config?.servers.filter((server) => server.source.kind !== "runtime").map((server) => server.name));
      },
      context: () => interpolationContext({ agentDir: this.agentDir, cwd: this.state?.cwd ?? process.cwd() }),
      // Before the session has started, its first load takes them; after, it follows them as it follows a file.
      changed: async () => void (this.state && !this.state.shutDown && (await this.reloadConfig(this.state))),
    });
    this.sessionConfig = new SessionConfig(pi, this.agentDir, () => this.runtime.servers());
    this.prompts = new PromptCommandRegistry(pi, () => this.state);
    openDebugLog(this.agentDir);
  }

  current(): McpExtensionState | undefined {
    return this.state;
  }

  requireState(): McpExtensionState {
    if (!this.state || this.state.shutDown) throw new Error("The MCP adapter is not running (the session is starting or ending).");
    return this.state;
  }

  /** Module scope: every cached tool, with no server started. Never throws. */
  registerEarly(): void {
    try {
      const config = this.sessionConfig.loadEarly();
      const cache = loadMetadataCache(this.agentDir);
      const view = buildToolView(config, cache);
      this.registrar.register(this.definitions(view));
      this.prompts.update(view);
      this.early = { view, cacheStamp: fileStamp(cache.path), cacheProblems: cache.problems };
    } catch (error) {
      console.error(`[mcp] could not register MCP tools at startup: ${errorMessage(error)}`);
    }
  }

  async start(ctx: ExtensionContext): Promise<void> {
    const generation = ++this.generation;
    await this.stopState();
    if (generation !== this.generation) return; // a newer session_start took over while the old state shut down
    const ui = createUi(ctx, () => generation !== this.generation);
    this.sessionConfig.beginSession(ctx);
    let state: McpExtensionState;
    try {
      state = this.createState(ctx, ui);
    } catch (error) {
      ui.notify(`MCP adapter could not start: ${errorMessage(error)}`, "error");
      return;
    }
    this.state = state;
    reportConfigProblems(state);
    this.narrowActiveTools(state, loadedIn(ctx.sessionManager.getBranch()));
    state.tasks.resumeOwed(ctx.sessionManager.getBranch());
    state.startup = this.runStartup(state);
    state.lifecycle.startHealthChecks();
    updateStatus(state);
    this.trustQuestion = ctx.ui;
    this.askAboutProject(state);
  }

  /** A project Pi cannot decide about waits for the user's answer (asked once at a time); the session then follows it. */
  private askAboutProject(state: McpExtensionState): void {
    const ui = this.trustQuestion;
    if (!ui || this.askingAboutProject) return;
    this.askingAboutProject = true;
    void this.sessionConfig
      .askIfWaiting(ui, state.cwd, state.config)
      .then(
        async (answered) => void (answered && !state.shutDown && (await this.reloadConfig(state))),
        () => {},
      )
      .finally(() => (this.askingAboutProject = false));
  }

  /** `pi-mcp-adapter:runtime-register:v1`: another extension registers a server; `request.result` is set before this returns. */
  onRuntimeRegister(request: unknown): void {
    this.runtime.handle(request);
  }

  /** mcp_servers_change (Pi 1.x): another extension registered or removed a server; the session follows. */
  onMcpServersChange(): void {
    if (this.state && !this.state.shutDown) void this.reloadConfig(this.state).catch(() => {});
  }

  /** `reason`: Pi's (`quit`, `reload`, `new`, `resume`, `fork`); calls cut short by the shutdown are told it. */
  async shutdown(reason?: string): Promise<void> {
    this.generation++;
    if (this.state) this.state.shutdownReason = reason;
    // Registrations are the session's: an extension registers again when the next one starts.
    this.runtime.clear();
    await this.stopState();
  }

  /** agent_start: the tools the model is offered during this run (a host that snapshots them keeps this set). */
  onAgentStart(): void {
    const state = this.state;
    if (!state || state.shutDown) return;
    state.offeredThisRun = new Set(this.pi.getActiveTools());
    state.views.followTheme();
    // The model may call an MCP tool it already has (a direct tool, one loaded before) without a ToolSearch first:
    // load the connection code while it thinks, not when the call arrives.
    const offersMcpTool = [...state.offeredThisRun].some((name) => state.tools.byName.has(name));
    if (offersMcpTool) setImmediate(() => state.manager.preloadConnectionCode());
  }

  /**
   * session_tree: the user moved to another point of the session. The MCP tools loaded on the new branch are
   * active, those loaded only on other branches are not, and server instructions count as shown only if shown there.
   */
  onTreeNavigated(ctx: ExtensionContext): void {
    const state = this.state;
    if (!state || state.shutDown) return;
    const branch = ctx.sessionManager.getBranch();
    const onBranch = new Set([...loadedIn(branch)].filter((name) => state.tools.byName.has(name)));
    state.instructionsShown.clear();
    for (const server of instructedIn(branch)) state.instructionsShown.add(server);
    const next = activeOnBranch(this.pi.getActiveTools(), onBranch, loadedIn(ctx.sessionManager.getEntries()), state.directToolNames);
    if (!next) return;
    this.registerByName(state, [...onBranch]);
    this.pi.setActiveTools(next);
  }

  /**
   * agent_end: print mode waits here for the tasks handed back to the model, whose outcomes start the next run
   * (tasks.ts); elsewhere nothing waits.
   */
  async onAgentEnd(): Promise<void> {
    const state = this.state;
    if (state && !state.shutDown) await state.tasks.atRunEnd();
  }

  /**
   * before_agent_start: a config file changed since it was read is followed before the run; what views asked the
   * model to know (ui/update-model-context) comes with it.
   */
  beforeAgentStart(): { message: { customType: string; content: string; display: boolean } } | undefined {
    if (this.state) this.followConfigFiles(this.state);
    const context = this.state?.shutDown === false ? this.state.views.takeModelContext() : undefined;
    return context ? { message: { customType: VIEW_CONTEXT_TYPE, content: context, display: true } } : undefined;
  }

  /** turn_end: bring back eager/keep-alive servers that dropped. Never waits. */
  onTurnEnd(): void {
    const state = this.state;
    if (state && !state.shutDown) void state.lifecycle.reviveDropped().catch(ignored("reviving dropped servers at turn end"));
  }

  /**
   * The session's tools: the module-scope view when the config and the cache file are what it was built from (it
   * is registered already), else a new view, registered where it differs.
   */
  private sessionView(cwd: string, ui: McpUi): ToolView {
    const config = this.loadSessionConfig(cwd);
    const early = this.early;
    this.early = undefined; // the session takes it over (and changes it as servers connect)
    const reportCache = (problems: readonly string[]) => problems.forEach((problem) => ui.notify(`MCP cache: ${problem}`, "warning"));
    if (early && sameConfig(early.view.config, config) && fileStamp(getCachePath(this.agentDir)) === early.cacheStamp) {
      reportCache(early.cacheProblems);
      return early.view;
    }
    const cache = loadMetadataCache(this.agentDir);
    reportCache(cache.problems);
    const view = buildToolView(config, cache);
    // The session is bound: only what will be active (narrowActiveTools registers what it restores).
    this.registrar.registerWanted(this.definitions(view), new Set([...this.adapterToolNames(view), ...view.directToolNames]));
    return view;
  }

  private loadSessionConfig(cwd: string): LoadedConfig {
    return this.sessionConfig.loadForSession(cwd, this.pi);
  }

  /**
   * After `/mcp enable | disable | add | remove` rewrote a config file: the session follows it without /reload.
   * Servers that start being used connect when they have no cached tools (lazy ones are ended again after the
   * listing) or when their lifecycle starts them with the session.
   */
  private async reloadConfig(state: McpExtensionState): Promise<ConfigChange> {
    const change = this.useConfig(state, this.loadSessionConfig(state.cwd));
    await this.settleConfigChange(state, change);
    return change;
  }

  /**
   * A config file changed since the session read it (edited by hand, or by another Pi session): the session follows
   * it as it follows its own /mcp commands. A stat per file when nothing changed; the new config is in use when this
   * returns, and the servers it starts connect in the background (print mode's /mcp waits for them, as for the
   * startup's). A file that no longer reads keeps the config the session has, and says so once.
   */
  private followConfigFiles(state: McpExtensionState): void {
    if (state.shutDown) return;
    const changed = this.sessionConfig.changedFiles();
    if (changed.length === 0) return;
    const config = this.loadSessionConfig(state.cwd);
    const known = new Set(state.config.problems.map((problem) => problem.message));
    const fresh = config.problems.filter((problem) => !known.has(problem.message));
    // A file half-written, or broken by an edit: its servers would all stop. It is followed again once it reads.
    const unreadable = fresh.filter((problem) => problem.level === "error" && problem.server === undefined && problem.field === undefined);
    if (unreadable.length > 0) {
      for (const problem of unreadable)
        state.ui.notify(`MCP config: ${problem.message}; the session keeps the config it had until the file is fixed`, "error");
      return;
    }
    if (sameConfig(config, state.config)) return;
    const atStart = settingsReadAtStart(state.config.settings, config.settings);
    const change = this.useConfig(state, config);
    for (const problem of fresh) state.ui.notify(`MCP config: ${problem.message}`, problem.level);
    state.ui.notify(describeFollowedConfig(changed, change, atStart), "info");
    const settled = this.settleConfigChange(state, change).catch(ignored("servers after a config file changed"));
    state.startup = Promise.all([state.startup, settled]).then(() => undefined);
    this.askAboutProject(state);
  }

  /** The config is the session's: its view, its servers, what Pi has registered. */
  private useConfig(state: McpExtensionState, config: LoadedConfig): ConfigChange {
    const change = applyConfig(state, config, loadMetadataCache(this.agentDir));
    this.syncRegistrations(state);
    this.prompts.update(state);
    return change;
  }

  /** After `useConfig`: the servers it stopped are closed, those it started connect or are listed. */
  private async settleConfigChange(state: McpExtensionState, change: ConfigChange): Promise<void> {
    await change.closed;
    if (state.shutDown) return;
    const started = change.started.flatMap((name) => state.servers.get(name) ?? []);
    await Promise.all([
      this.listUncached(
        state,
        started.filter((server) => connectsOnFirstUse(server) && !state.inventories.has(server.name)),
      ),
      ...started
        .filter((server) => !connectsOnFirstUse(server))
        .map((server) =>
          state.lifecycle.ensureConnected(server.name).catch(ignored(`connecting ${server.name} after a config change (reported)`)),
        ),
    ]);
    if (!state.shutDown) updateStatus(state);
  }

  /**
   * The view changed as a whole: registered as after a listing (only what is to be active is new to Pi: see
   * `refreshRegistrations`), and tools the view no longer has are switched off.
   */
  private syncRegistrations(state: McpExtensionState): void {
    const wanted = this.refreshRegistrations(state);
    const ours = new Set(this.registrar.registeredNames());
    const kept = this.pi.getActiveTools().filter((name) => !ours.has(name) || state.tools.byName.has(name));
    this.pi.setActiveTools([...new Set([...kept, ...wanted])]);
  }

  private createState(ctx: ExtensionContext, ui: McpUi): McpExtensionState {
    const cwd = ctx.cwd;
    const view = this.sessionView(cwd, ui);
    this.prompts.update(view);
    const { config } = view;
    let state: McpExtensionState | undefined;
    // Callbacks can fire after this state was replaced or shut down: then they must not touch Pi.
    const whileLive =
      <A extends unknown[]>(handle: (live: McpExtensionState, ...args: A) => void) =>
      (...args: A) => {
        if (state && !state.shutDown) handle(state, ...args);
      };
    const applyLive = whileLive((live, name: string) => this.applyLiveMetadata(live, name));
    const liveContext = () => (state && !state.shutDown ? ctx : undefined);
    const unansweredPages = new UnansweredPages();
    const trace = new ProtocolTrace(this.agentDir);
    const manager = new McpServerManager({
      agentDir: this.agentDir,
      onMetadataChanged: applyLive,
      elicitation: ctx.hasUI ? piElicitation(liveContext) : undefined,
      urlElicitation: piUrlElicitation(liveContext, unansweredPages),
      sampling: samplingSettings(config.settings).enabled ? piSampling(liveContext, () => state) : undefined,
      roots: [cwd],
      viewsOffered: (name) => state !== undefined && viewsOffered(state.config.settings, state.servers.get(name)),
      known: (def) => knownServer(state?.inventories.get(def.name)),
      onSignInNeeded: whileLive(reportSignInNeeded),
      onServerLog: whileLive(reportServerLog),
      trace,
    });
    const lifecycle = new McpLifecycleManager(manager, {
      onReconnect: applyLive,
      onIdleShutdown: whileLive(updateStatus),
      onConnectFailed: whileLive(reportConnectFailure),
    });
    lifecycle.registerServers(config.servers, config.settings);
    state = {
      ...view,
      agentDir: this.agentDir,
      cwd,
      manager,
      lifecycle,
      host: this.host,
      ui,
      // Grants made before a reload or resume are in the session; new ones go there (names only).
      approvals: new SessionApprovals(grantsInSession(ctx.sessionManager.getBranch()), (grant) => {
        if (state && !state.shutDown) this.pi.appendEntry(APPROVAL_ENTRY_TYPE, grant);
      }),
      stats: createCallStats(config.settings, this.agentDir),
      searchIndex: undefined,
      semantic: semanticRankerFor(config.settings, this.agentDir, (message) => ui.notify(message, "warning"), view.tools.byName.values()),
      instructionsShown: instructedIn(ctx.sessionManager.getBranch()),
      offeredThisRun: new Set(),
      startup: Promise.resolve(),
      cacheWriter: new MetadataCacheWriter(this.agentDir, (result) => {
        if (!result.written) ui.notify(`MCP cache not updated: ${result.reason}`, "warning");
      }),
      registerTools: (names) => {
        if (state && !state.shutDown) this.registerByName(state, names);
      },
      // Only the user's own /mcp commands reload through the state: what they wrote keeps the project's trust.
      reloadConfig: async () => {
        await this.sessionConfig.keepTrustAfterOwnWrite();
        return this.reloadConfig(state!);
      },
      followConfigFiles: () => this.followConfigFiles(state!),
      unansweredPages,
      views: createAppViews(this.viewHost(ctx, ui, liveContext, () => state)),
      skills: sessionSkills(this.agentDir, { manager, lifecycle }, () => state, ui.notify),
      tasks: this.sessionTasks(ctx, () => state),
      trace,
      shutDown: false,
    };
    return state;
  }

  /** The session's tasks, delivering into this session while it is live (tasks.ts). */
  private sessionTasks(ctx: ExtensionContext, current: () => McpExtensionState | undefined): SessionTasks {
    const live = () => {
      const state = current();
      return state && !state.shutDown ? state : undefined;
    };
    return new SessionTasks({
      limits: (server) => taskLimits(server, current()?.servers.get(server), current()?.config.settings ?? {}),
      canHandBack: ctx.hasUI || this.host.awaitsAgentEnd,
      printMode: !ctx.hasUI,
      present: (call, result) => presentTaskResult(current()!, call, result),
      deliver: (message, triggerTurn) => {
        if (live()) this.followUp(TASK_OUTCOME_MESSAGE_TYPE, message.content, message.details, triggerTurn);
      },
      // Also while the session shuts down (what is left running is recorded then), not after.
      record: (record) => current() && this.pi.appendEntry(TASK_ENTRY_TYPE, record),
      resume: async (server, reference) => {
        const state = live();
        if (!state) throw new Error("the session ended");
        await state.lifecycle.ensureConnected(server);
        return state.manager.resumeTask(server, reference);
      },
      changed: () => {
        const state = live();
        if (state) updateStatus(state);
      },
    });
  }

  /**
   * A message of ours into the conversation (a task's outcome, a view's `ui/message`): after the agent's current turn,
   * shown to the user; `triggerTurn` starts a turn when the agent is idle.
   */
  private followUp(customType: string, content: (TextContent | ImageContent)[], details: unknown, triggerTurn: boolean): void {
    this.pi.sendMessage({ customType, content, display: true, details }, { deliverAs: "followUp", triggerTurn });
  }

  /** What the session's views (MCP Apps) use of it: the servers through the executor, the conversation, the user. */
  private viewHost(
    ctx: ExtensionContext,
    ui: McpUi,
    liveContext: () => ExtensionContext | undefined,
    currentState: () => McpExtensionState | undefined,
  ): ViewHost {
    const state = () => {
      const live = currentState();
      if (!live || live.shutDown) throw new Error("the Pi session has ended");
      return live;
    };
    return {
      readResource: (serverName, uri) => readResourceForView(state(), serverName, uri),
      callTool: (serverName, toolName, args, signal) => callToolForView(state(), serverName, toolName, args, signal, liveContext()),
      sendMessage: (text, images, from) => {
        const context = state().views.takeModelContext();
        const said = `[From the view of ${from.toolName} (MCP server "${from.serverName}")]\n${text}`;
        const words: TextContent = { type: "text", text: context ? `${context}\n\n${said}` : said };
        const content = [words, ...images.map((image): ImageContent => ({ type: "image", ...image }))];
        this.followUp(VIEW_MESSAGE_TYPE, content, from, true);
      },
      confirmLink: async (url, from) => {
        const live = liveContext();
        if (!live?.hasUI) return false;
        const title = `The view of ${from.toolName} (MCP server "${from.serverName}") asks to open a page`;
        return live.ui.confirm(title, url, { timeout: DIALOG_TIMEOUT_MS }).catch(() => false);
      },
      openInBrowser: (url) => openInBrowserOutcome(url),
      // Without Pi's UI (print mode) a line on stderr is all the user sees.
      notify: (message, level) => ui.notify(message, ctx.hasUI ? level : "warning"),
      pageOutlet: () => {
        if (!ctx.hasUI) return { show: "never" };
        if (!appsSettings(currentState()?.config.settings ?? {}).openBrowser) return { show: "address" };
        const noBrowser = noBrowserHere();
        return noBrowser ? { show: "address", noBrowser } : { show: "browser" };
      },
      theme: () => piTheme(liveContext()),
    };
  }

  /**
   * The active set at session start: what was active, minus the deferred MCP tools (Pi activates a tool when it is
   * first registered, and again after a reload), plus ToolSearch, McpCall (where needed), the direct tools and
   * `restore` (tools the model had loaded before a reload or resume).
   */
  private narrowActiveTools(state: McpExtensionState, restore: ReadonlySet<string>): void {
    const ours = new Set([...state.tools.byName.keys(), ...this.registrar.registeredNames()]);
    const wanted = new Set([...this.adapterToolNames(state), ...state.directToolNames]);
    for (const name of restore) if (state.tools.byName.has(name)) wanted.add(name);
    this.registerByName(state, [...wanted]);
    const active = this.pi.getActiveTools();
    const duplicate = wanted.has(TOOL_SEARCH_NAME)
      ? duplicateToolSearch(this.pi.getAllTools(), active, (name) => ours.has(name))
      : undefined;
    if (duplicate) state.ui.notify(`MCP: Pi's ${duplicate} is off in this session: ${TOOL_SEARCH_NAME} finds the same MCP tools.`, "info");
    const kept = active.filter((name) => name !== duplicate && (!ours.has(name) || wanted.has(name)));
    this.pi.setActiveTools([...new Set([...kept, ...wanted])]);
  }

  /** tool_call: what a call of a tool that reaches others (codemode) may call is registered first (tool-search.ts). */
  async beforeToolCall(toolName: string, input: Record<string, unknown>): Promise<void> {
    const state = this.state;
    if (state && !state.shutDown)
      await registerReachedTools(this.pi, state, (name) => this.registrar.isRegistered(name), { toolName, input });
  }

  /** MCP tools (by Pi name) registered with Pi if they are not yet; unknown names are ignored. */
  private registerByName(state: McpExtensionState, names: readonly string[]): void {
    const missing = names.flatMap((name) => {
      const tool = this.registrar.isRegistered(name) ? undefined : state.tools.byName.get(name);
      return tool ? [mcpToolDefinition(tool, this.run, state, this.host.hasCodemode)] : [];
    });
    this.registrar.register(missing);
  }

  /**
   * After a server's tools changed: update what Pi has, and register what should be on (the direct tools, the
   * adapter's own; Pi activates them). Other new tools wait until ToolSearch loads them. Returns the names that are
   * to be active.
   */
  private refreshRegistrations(state: McpExtensionState): ReadonlySet<string> {
    const wanted = new Set([...this.adapterToolNames(state), ...state.directToolNames]);
    this.registrar.registerWanted(this.definitions(state), wanted);
    return wanted;
  }

  /** Every MCP tool of the view, and the adapter's own tools it needs. */
  private definitions(view: ToolView) {
    const definitions = [...view.tools.byName.values()].map((tool) => mcpToolDefinition(tool, this.run, view, this.host.hasCodemode));
    const access = () => this.requireState();
    if (this.needsToolSearch(view)) definitions.push(toolSearchDefinition(this.pi, access, currentToolSearchDescription(view)));
    if (this.needsMcpCall(view)) definitions.push(mcpCallDefinition(this.pi, access, this.run));
    if (this.needsScriptTool(view)) definitions.push(scriptToolDefinition(access));
    return definitions;
  }

  private adapterToolNames(view: ToolView): string[] {
    return [
      ...(this.needsToolSearch(view) ? [TOOL_SEARCH_NAME] : []),
      ...(this.needsMcpCall(view) ? [MCP_CALL_NAME] : []),
      ...(this.needsScriptTool(view) ? [SCRIPT_TOOL_NAME] : []),
    ];
  }

  /** On hosts without their own codemode, when `settings.script` turns it on. */
  private needsScriptTool(view: ToolView): boolean {
    return !this.host.hasCodemode && this.needsToolSearch(view) && scriptSettings(view.config.settings).enabled;
  }

  /** Only when some server is enabled: with no MCP server, the adapter costs the model nothing. */
  private needsToolSearch(view: ToolView): boolean {
    return [...view.servers.values()].some((server) => server.enabled !== false) || this.registrar.isRegistered(TOOL_SEARCH_NAME);
  }

  private needsMcpCall(view: ToolView): boolean {
    return !this.host.refreshesToolsEachTurn && this.needsToolSearch(view);
  }

  /**
   * A server (re)connected or changed its lists: its live tools replace what was known. Usually they are what the
   * cache said, and then nothing is rebuilt (a first call must not wait for a thousand tools to be re-described).
   */
  private applyLiveMetadata(state: McpExtensionState, name: string): void {
    const connection = state.manager.getConnection(name);
    const definition = state.servers.get(name);
    if (!connection || !definition) return;
    const entry = createCacheEntry(definition, connection.tools, connection.resources, Date.now(), connection);
    this.applyInventory(state, name, entry, "live");
    state.cacheWriter.queue(name, entry);
    updateStatus(state);
  }

  private applyInventory(state: McpExtensionState, name: string, entry: CachedServerEntry, origin: "live" | "cache"): void {
    if (!updateServerInventory(state, name, entry, origin)) return;
    state.searchIndex = undefined;
    state.semantic?.update(state.tools.byName.values());
    this.refreshRegistrations(state);
    this.prompts.update(state);
  }

  /**
   * Lazy servers missing from the cache: listed (started once, then ended), or, when another Pi process on the agent
   * dir is listing one already, taken from the cache once its listing is there (tools/shared-listing.ts).
   */
  private listUncached(state: McpExtensionState, servers: readonly ServerDefinition[]): Promise<void> {
    return listUncachedServers(state, servers, (name, entry) => {
      // Connected meanwhile (a call started it): its live lists are newer.
      if (state.shutDown || state.manager.getConnection(name)) return;
      this.applyInventory(state, name, entry, "cache");
      updateStatus(state);
    });
  }

  /** Background work of session_start: startup connections, and learning the tools of servers not in the cache. */
  private async runStartup(state: McpExtensionState): Promise<void> {
    // A inventory without prompts came from an older cache file: listed once more to learn them (and templates, instructions).
    const uncached = [...state.servers.values()].filter(
      (server) => server.enabled !== false && connectsOnFirstUse(server) && state.inventories.get(server.name)?.prompts === undefined,
    );
    const toolsUnknown = uncached.filter((server) => !state.inventories.has(server.name));
    await Promise.all([state.lifecycle.connectStartupServers(), this.listUncached(state, uncached)]);
    if (state.shutDown) return;
    state.semantic?.start(state.tools.byName.values());
    updateStatus(state); // bootstrapped lazy servers were ended again
    const learned = toolsUnknown.filter((server) => state.inventories.has(server.name));
    const notice = directToolsLearnedNotice(learned, directRules(state.config));
    if (notice) state.ui.notify(notice, "info");
  }

  private async stopState(): Promise<void> {
    const state = this.state;
    if (!state) return;
    state.tasks.shutdown(state.shutdownReason ?? "replaced");
    this.state = undefined;
    state.shutDown = true;
    await Promise.all([state.lifecycle.stop(), state.views.close()]);
    await Promise.allSettled([
      state.trace.off(),
      state.cacheWriter.flush(SHUTDOWN_FLUSH_MS),
      state.stats?.close(SHUTDOWN_FLUSH_MS),
      state.semantic?.stop(),
    ]);
  }
}

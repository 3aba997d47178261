/**
 * A server that is up: its session, its lists (tools, resources with their templates, prompts) as read when it
 * connected and kept current when it announces a change, and whether its process still runs. The manager
 * (server-manager.ts) shares one per server and hands it out as a `ServerConnection`.
 *
 * - At connect the lists are read side by side under the startup deadline, and only the tools decide whether the
 *   server starts: a resources, prompts or skills listing that fails or never answers costs only what it lists
 *   (noted in `problems`, shown by /mcp status). Skills (MCP Skills extension) change with the resources list.
 * - `list_changed` refreshes run one after another, so an older answer never overwrites a newer one, and the
 *   notifications that arrive during a refresh are merged into one more (a storm of 300 gave 301 listings and as many
 *   cache writes).
 * - A 2026-07-28 server says how long each list stays valid (`ttlMs`): a list it gave at an earlier connection that
 *   is still within it is taken as it was, not asked for again (`FreshLists`), and `freshUntil` says until when each
 *   list read now is, for the metadata cache to keep.
 */
import type { RequestOptions } from "@modelcontextprotocol/client";
import type { McpList, McpSession, ProtocolVerdict } from "./session.ts";
import type { CacheHints, Listing } from "./listing.ts";
import { errorMessage } from "../util/guards.ts";
import type { NpxResolution } from "../npx-resolver.ts";
import { ProcessProbe } from "../util/process-tree.ts";
import type { McpPrompt, McpResource, McpResourceTemplate, McpTool, ServerDefinition, SkillEntry, TransportKind } from "../types.ts";
import { ignored } from "../util/debug-log.ts";

export const DEFAULT_STARTUP_TIMEOUT_MS = 30_000;
/** How long a stdio server found alive is taken to be alive without another probe (see `LiveConnection.isAlive`). */
const RECHECK_ALIVE_AFTER_MS = 5;
/** A server cannot make a list valid for longer than this (the SDK's cap too). */
export const MAX_LIST_TTL_MS = 24 * 60 * 60 * 1000;

/** Until when (epoch ms) each list may be used without asking the server again; a list not named must be asked for. */
export type ListsFreshUntil = Partial<Record<McpList, number>>;

/** Lists from an earlier connection, each given only while its server's `ttlMs` says it is still valid. */
export interface FreshLists {
  tools?: { items: McpTool[]; freshUntil: number };
  resources?: { items: McpResource[]; templates: McpResourceTemplate[]; freshUntil: number };
  prompts?: { items: McpPrompt[]; freshUntil: number };
}

export interface ServerConnection {
  readonly name: string;
  readonly transport: TransportKind;
  readonly tools: McpTool[];
  readonly resources: McpResource[];
  readonly resourceTemplates: McpResourceTemplate[];
  readonly prompts: McpPrompt[];
  /** Its Agent Skills (none with `skills: false` in its config). */
  readonly skills: SkillEntry[];
  /** The `instructions` of the server's `initialize` (or `server/discover`) answer. */
  readonly instructions: string | undefined;
  /** The protocol the server speaks (kept with its metadata, so that its next connect needs no probe). */
  readonly protocol: ProtocolVerdict;
  /** Until when its lists are valid, as the server said (none for a 2025-era server). */
  readonly freshUntil: ListsFreshUntil;
  /** Entries of its lists that were dropped or cut short (or lists that failed), and why. */
  readonly problems: string[];
  readonly pid?: number;
  /** An npx command: what runs instead of npm, or why npm runs it. */
  readonly npx?: NpxResolution;
  readonly connectedAt: number;
}

/** What `connect()` hands out, plus its session and how its lists are kept current. */
export class LiveConnection implements ServerConnection {
  readonly name: string;
  readonly session: McpSession;
  readonly transport: TransportKind;
  readonly pid?: number;
  readonly connectedAt = Date.now();
  /** False with `exposeResources: false`: its resources are never listed (nothing would use them). */
  private readonly listsResources: boolean;
  /** False with `skills: false`: its skills are never listed. */
  private readonly listsSkills: boolean;
  tools: McpTool[] = [];
  resources: McpResource[] = [];
  resourceTemplates: McpResourceTemplate[] = [];
  prompts: McpPrompt[] = [];
  skills: SkillEntry[] = [];
  private toolProblems: string[] = [];
  private resourceProblems: string[] = [];
  private promptProblems: string[] = [];
  private skillProblems: string[] = [];
  private refreshQueue: Promise<void> = Promise.resolve();
  /** Per list, whether a list_changed refresh runs and whether another notification came meanwhile. */
  private readonly followed: Record<McpList, { running: boolean; pending: boolean }> = {
    tools: { running: false, pending: false },
    resources: { running: false, pending: false },
    prompts: { running: false, pending: false },
  };
  private probe?: ProcessProbe;
  private aliveAt = Number.NEGATIVE_INFINITY;
  readonly freshUntil: ListsFreshUntil = {};

  private constructor(name: string, session: McpSession, def: ServerDefinition) {
    this.name = name;
    this.session = session;
    this.listsResources = def.exposeResources !== false;
    this.listsSkills = def.skills !== false;
    this.transport = session.transport;
    this.pid = session.pid;
  }

  /**
   * The server's lists, read under `options.signal` (the startup deadline), except those still valid in `fresh`;
   * with `exposeResources: false` no resources.
   */
  static async read(def: ServerDefinition, session: McpSession, options: RequestOptions, fresh: FreshLists = {}): Promise<LiveConnection> {
    const connection = new LiveConnection(def.name, session, def);
    connection.adoptFresh(fresh);
    const others = Promise.all([
      connection.listsResources && !fresh.resources
        ? connection.readResourceLists(options).catch(connection.leftOut("resources", options))
        : undefined,
      fresh.prompts ? undefined : connection.readPromptList(options).catch(connection.leftOut("prompts", options)),
      connection.readSkillList(options).catch(connection.leftOut("skills", options)),
    ]);
    if (!fresh.tools) await connection.readToolList(options);
    await others;
    return connection;
  }

  get problems(): string[] {
    return [...this.toolProblems, ...this.resourceProblems, ...this.promptProblems, ...this.skillProblems];
  }

  get instructions(): string | undefined {
    return this.session.instructions;
  }

  get npx(): NpxResolution | undefined {
    return this.session.npx;
  }

  get protocol(): ProtocolVerdict {
    return this.session.protocol;
  }

  /** From when the connection is handed out: a stdio server's process is checked before every call. */
  startProbing(): void {
    if (this.pid !== undefined) this.probe = new ProcessProbe(this.pid);
  }

  /**
   * A process found alive moments ago (`RECHECK_ALIVE_AFTER_MS`) is not probed again: back-to-back calls would each
   * pay for the probe, while a server killed between two calls a user or model makes is always noticed.
   */
  isAlive(): boolean {
    if (!this.probe) return true;
    const now = performance.now();
    if (now - this.aliveAt < RECHECK_ALIVE_AFTER_MS) return true;
    const alive = this.probe.isAlive();
    if (alive) this.aliveAt = now;
    return alive;
  }

  end(): Promise<void> {
    this.probe?.close();
    this.probe = undefined;
    return this.session.shutdown();
  }

  /** A `list_changed` notification: the list is read again, and `changed` told after each reading. */
  async followListChanged(list: McpList, changed: () => void): Promise<void> {
    const followed = this.followed[list];
    followed.pending = true;
    if (followed.running) return;
    followed.running = true;
    try {
      while (followed.pending) {
        followed.pending = false;
        await this.refresh(list);
        try {
          changed();
        } catch {
          // A failing listener must not break the connection.
        }
      }
    } catch {
      // The server went away meanwhile; reconnecting reads everything again.
    } finally {
      followed.running = false;
      followed.pending = false;
    }
  }

  /** Reads the list again, after the refreshes already queued; a resources change may be a skills change too. */
  private refresh(list: McpList): Promise<void> {
    // A refresh gets the budget listing had at startup.
    const options: RequestOptions = { timeout: DEFAULT_STARTUP_TIMEOUT_MS };
    const resources = async () => {
      await Promise.all([this.listsResources ? this.readResourceLists(options) : undefined, this.readSkillList(options)]);
    };
    const read = () => (list === "tools" ? this.readToolList(options) : list === "resources" ? resources() : this.readPromptList(options));
    const result = this.refreshQueue.then(read);
    this.refreshQueue = result.catch(ignored(`${this.name}: refreshing its ${list} list`));
    return result;
  }

  private adoptFresh(fresh: FreshLists): void {
    if (fresh.tools) [this.tools, this.freshUntil.tools] = [fresh.tools.items, fresh.tools.freshUntil];
    if (fresh.resources) {
      [this.resources, this.resourceTemplates] = [fresh.resources.items, fresh.resources.templates];
      this.freshUntil.resources = fresh.resources.freshUntil;
    }
    if (fresh.prompts) [this.prompts, this.freshUntil.prompts] = [fresh.prompts.items, fresh.prompts.freshUntil];
  }

  /** Until when a list just read stays valid: each of its listings' `ttlMs` from now, capped; none without one. */
  private noteFreshness(list: McpList, ...listings: CacheHints[]): void {
    const ttl = Math.min(...listings.map((listing) => listing.ttlMs ?? 0), MAX_LIST_TTL_MS);
    if (ttl > 0) this.freshUntil[list] = Date.now() + ttl;
    else delete this.freshUntil[list];
  }

  private async readToolList(options: RequestOptions): Promise<void> {
    const tools = await this.session.listTools(options);
    this.tools = tools.items;
    this.toolProblems = tools.problems;
    this.noteFreshness("tools", tools);
  }

  /** Resources and their templates: one notification (`resources/list_changed`) covers both. */
  private async readResourceLists(options: RequestOptions): Promise<void> {
    const [resources, templates] = await Promise.all([
      this.session.listResources(options),
      this.session.listResourceTemplates(options).catch((error: unknown): Listing<McpResourceTemplate> => {
        options.signal?.throwIfAborted();
        return { items: [], problems: [`resources/templates/list failed: ${errorMessage(error)}`] };
      }),
    ]);
    this.resources = resources.items;
    this.resourceTemplates = templates.items;
    this.resourceProblems = [...resources.problems, ...templates.problems];
    this.noteFreshness("resources", resources, templates);
  }

  private async readPromptList(options: RequestOptions): Promise<void> {
    const prompts = await this.session.listPrompts(options);
    this.prompts = prompts.items;
    this.promptProblems = prompts.problems;
    this.noteFreshness("prompts", prompts);
  }

  private async readSkillList(options: RequestOptions): Promise<void> {
    if (!this.listsSkills) return;
    const listing = await this.session.listSkills(options);
    this.skills = listing.skills;
    this.skillProblems = listing.problems;
  }

  /** At connect, a list that fails or does not answer before the startup deadline is noted and left empty. */
  private leftOut(list: "resources" | "prompts" | "skills", options: RequestOptions) {
    return (error: unknown): void => {
      const why = options.signal?.aborted ? "did not answer before the startup deadline" : `failed: ${errorMessage(error)}`;
      const problem = `${list}/list ${why}; its ${list} are left out (its tools are not affected)`;
      if (list === "resources") this.resourceProblems = [problem];
      else if (list === "prompts") this.promptProblems = [problem];
      else this.skillProblems = [problem];
    };
  }
}

/**
 * One Pi session's MCP skills. At `resources_discover` the session offers the skills of the servers' last listings
 * (the metadata cache: no server starts) and gives Pi their folders, each with a stub `SKILL.md` Pi lists by name
 * and description. A file is fetched (and verified) when the model reaches it: Pi's `read` of it, a `/skill:<name>`
 * command, or a shell / search tool naming the skill's folder (a script must be on disk to run). What `read` returns
 * from a skill says which server it comes from.
 *
 * The offer is fixed for the session, as Pi's system prompt is: skills a server lists later are offered from the next
 * session (or /reload), which `/mcp status` says.
 */
import { join } from "node:path";
import { type FetchOutcome, SkillFetcher, type SkillServers } from "./fetcher.ts";
import { MANIFEST, pathInside, readToolPath, serverFolder, skillsRoot, stubText, writePrivateFile } from "./files.ts";
import { type OfferedSkill, offerSkills, type ServerSkills, type SkillOffer, skillFiles } from "./offer.ts";
import { errorMessage } from "../util/guards.ts";
import type { McpLifecycleManager } from "../lifecycle.ts";
import type { McpServerManager } from "../server-manager.ts";
import type { ToolView } from "../tool-view.ts";

export interface SkillSessionOptions {
  agentDir: string;
  servers: SkillServers;
  /** The servers the session uses, in the config's order, with their last listing's skills (none for those not known). */
  listings(): readonly ServerSkills[];
  /** `SKILL.md` files on this machine the config names (Claude Code plugins'): Pi reads them as it reads its own. */
  localSkills?(): readonly string[];
  notify(message: string, level: "info" | "warning"): void;
}

/** A Pi skill as Pi reports what it loaded (`before_agent_start`'s `systemPromptOptions.skills`). */
export interface LoadedSkill {
  name: string;
  filePath: string;
}

/** An offered skill and its folder. */
interface PlacedSkill {
  skill: OfferedSkill;
  folder: string;
}

/** Pi's tools whose input can name a skill's folder without reading a file of it: the skill is fetched whole first. */
const FOLDER_TOOLS: ReadonlySet<string> = new Set(["bash", "grep", "find", "ls"]);

/** What `sessionSkills` needs of the session: its servers' connections, and what is known of them. */
export interface SessionServers {
  manager: Pick<McpServerManager, "getConnection" | "readSkillFile">;
  lifecycle: Pick<McpLifecycleManager, "ensureConnected">;
}

/**
 * The skills of a Pi session: a server is started (lazily, through the lifecycle) only to read a file, the live
 * listing wins over the cached one, and the servers are the session's, in the config's order (an untrusted project's
 * are not among them). `view`: the session's tools, undefined until the session exists.
 */
export function sessionSkills(
  agentDir: string,
  { manager, lifecycle }: SessionServers,
  view: () => Pick<ToolView, "servers" | "inventories" | "config"> | undefined,
  notify: SkillSessionOptions["notify"],
): SkillSession {
  return new SkillSession({
    agentDir,
    servers: {
      connect: async (name, signal) => void (await lifecycle.ensureConnected(name, signal)),
      entries: (name) => manager.getConnection(name)?.skills ?? view()?.inventories.get(name)?.skills,
      read: (name, entry, uri, signal) =>
        manager.readSkillFile(name, entry, uri, { signal, connect: () => lifecycle.ensureConnected(name, signal) }),
    },
    listings: () =>
      [...(view()?.servers.values() ?? [])].map((server) => ({ server, entries: view()?.inventories.get(server.name)?.skills ?? [] })),
    localSkills: () => view()?.config.pluginSkills ?? [],
    notify,
  });
}

export class SkillSession {
  private readonly options: SkillSessionOptions;
  private readonly root: string;
  private readonly fetcher: SkillFetcher;
  private offer: SkillOffer = { offered: [], leftOut: [] };
  private placed: PlacedSkill[] = [];
  /** Offered skills Pi did not take because the user has a skill of that name: its file. */
  private readonly shadowed = new Map<OfferedSkill, string>();
  private loadedSeen = false;

  constructor(options: SkillSessionOptions) {
    this.options = options;
    this.root = skillsRoot(options.agentDir);
    this.fetcher = new SkillFetcher(this.root, options.servers, (message) => options.notify(message, "warning"));
  }

  /** `resources_discover`: the folders of the skills offered, each with its stub written, and the config's local skills. */
  async discover(): Promise<string[]> {
    this.offer = offerSkills(this.options.listings());
    const placed = this.offer.offered.map((skill) => ({
      skill,
      folder: join(serverFolder(this.options.agentDir, skill.server), skill.name),
    }));
    const written = await Promise.allSettled(
      placed.map(({ skill, folder }) => writePrivateFile(this.root, join(folder, MANIFEST), stubText(skill))),
    );
    this.placed = placed.filter((_, index) => written[index]!.status === "fulfilled");
    const failed = written.find((result) => result.status === "rejected");
    if (failed)
      this.options.notify(
        `MCP: some skills are not offered: their folder could not be written (${errorMessage(failed.reason)}).`,
        "warning",
      );
    for (const { server, name, reason } of this.offer.leftOut)
      if (reason.startsWith("server "))
        this.options.notify(`MCP: skill "${name}" of server "${server}" is not offered: ${reason}.`, "warning");
    return [...this.placed.map(({ folder }) => folder), ...(this.options.localSkills?.() ?? [])];
  }

  /** `tool_call`: a read of a skill's file, or a tool naming a skill's folder, gets the files first; refused if they fail. */
  async beforeToolCall(toolName: string, input: Record<string, unknown>, cwd: string, signal?: AbortSignal): Promise<FetchOutcome> {
    if (toolName === "read") {
      const target = typeof input.path === "string" ? this.locate(readToolPath(input.path, cwd)) : undefined;
      return target ? this.fetchFile(target.placed, target.path, signal) : { ok: true };
    }
    if (!FOLDER_TOOLS.has(toolName)) return { ok: true };
    const text = JSON.stringify(input);
    for (const placed of this.placed) {
      // As the folder stands in the input's JSON (a Windows path's backslashes are escaped there).
      if (!text.includes(JSON.stringify(placed.folder).slice(1, -1))) continue;
      const outcome = await this.fetchWhole(placed, signal);
      if (!outcome.ok) return outcome;
    }
    return { ok: true };
  }

  /**
   * `input`: `/skill:<name>` of an offered skill gets its `SKILL.md` first (Pi reads the file itself right after).
   * Returns false when it could not be had: the user is told why, and the command goes no further.
   */
  async beforeSkillCommand(text: string): Promise<boolean> {
    const name = /^\/skill:(\S+)/.exec(text)?.[1];
    const placed = this.placed.find(({ skill }) => skill.name === name);
    const outcome = placed ? await this.fetchFile(placed, MANIFEST) : { ok: true as const };
    if (!outcome.ok && !outcome.told) this.options.notify(outcome.reason, "warning");
    return outcome.ok;
  }

  /** `tool_result` of a read: the line that says whose text it is, for a file of an offered skill. */
  provenance(toolName: string, input: Record<string, unknown>, cwd: string): string | undefined {
    if (toolName !== "read" || typeof input.path !== "string") return undefined;
    const skill = this.locate(readToolPath(input.path, cwd))?.placed.skill;
    if (!skill) return undefined;
    return `[Skill "${skill.name}" from the MCP server "${skill.server}": the text below is that server's, checked against what it listed.]`;
  }

  /** `before_agent_start`: what Pi loaded. A skill of ours Pi left for the user's own of that name is said once. */
  noticeLoaded(loaded: readonly LoadedSkill[]): void {
    if (this.loadedSeen) return;
    this.loadedSeen = true;
    for (const { skill, folder } of this.placed) {
      const taken = loaded.find((candidate) => candidate.name === skill.name);
      if (!taken || pathInside(folder, taken.filePath) !== undefined) continue;
      this.shadowed.set(skill, taken.filePath);
      this.options.notify(
        `MCP: skill "${skill.name}" of server "${skill.server}" is not used: your own skill of that name (${taken.filePath}) is kept.`,
        "info",
      );
    }
  }

  /** `/mcp status`: what the session offers of a server's skills, and why not the others. */
  statusLines(server: string): string[] {
    const listing = this.options.listings().find((item) => item.server.name === server);
    if (listing?.server.skills === false)
      return listing.entries.length > 0 ? [`skills: off (skills: false), ${listing.entries.length} listed`] : [];
    const offered = this.placed.filter(({ skill }) => skill.server === server).map(({ skill }) => skill);
    const names = offered.map((skill) => (this.shadowed.has(skill) ? `${skill.name} (yours is used)` : skill.name));
    const lines = names.length > 0 ? [`skills: ${names.join(", ")}`] : [];
    for (const left of this.offer.leftOut.filter((item) => item.server === server))
      lines.push(`skill ${left.name} not offered: ${left.reason}`);
    for (const file of this.fetcher.refusals(server)) lines.push(`skill file ${file} refused: it failed verification`);
    const later = this.listedSinceDiscovery(listing);
    if (later.length > 0) lines.push(`skills listed since the session started (offered after /reload): ${later.join(", ")}`);
    return lines;
  }

  /** The panel's word on a server's skills: how many are offered. */
  summary(server: string): string | undefined {
    const count = this.placed.filter(({ skill }) => skill.server === server).length;
    return count === 0 ? undefined : `${count} ${count === 1 ? "skill" : "skills"}`;
  }

  private listedSinceDiscovery(listing: ServerSkills | undefined): string[] {
    if (!listing) return [];
    const known = new Set(
      [...this.offer.offered, ...this.offer.leftOut].filter((item) => item.server === listing.server.name).map((item) => item.name),
    );
    return listing.entries.map((entry) => entry.frontmatter.name).filter((name) => !known.has(name));
  }

  /** The offered skill a file path is in, and its path in the skill's folder. */
  private locate(file: string): { placed: PlacedSkill; path: string } | undefined {
    for (const placed of this.placed) {
      const path = pathInside(placed.folder, file);
      if (path !== undefined) return { placed, path };
    }
    return undefined;
  }

  private fetchFile(placed: PlacedSkill, path: string, signal?: AbortSignal): Promise<FetchOutcome> {
    return this.fetcher.fetch({ server: placed.skill.server, skill: placed.skill.name, folder: placed.folder, path }, signal);
  }

  /** `SKILL.md` first (it connects the server, and a skill whose `SKILL.md` fails gives nothing), then every other file. */
  private async fetchWhole(placed: PlacedSkill, signal?: AbortSignal): Promise<FetchOutcome> {
    const manifest = await this.fetchFile(placed, MANIFEST, signal);
    if (!manifest.ok) return manifest;
    const entry = this.options.servers.entries(placed.skill.server)?.find((candidate) => candidate.frontmatter.name === placed.skill.name);
    const files = entry ? skillFiles(entry) : undefined;
    for (const path of typeof files === "object" ? files.keys() : []) {
      if (path === MANIFEST) continue;
      const outcome = await this.fetchFile(placed, path, signal);
      if (!outcome.ok) return outcome;
    }
    return { ok: true };
  }
}

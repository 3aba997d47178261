/**
 * A skill file fetched the first time something needs it, never before (no prefetch): the server is started if it is
 * not running (a lazy start, like a tool call's), the file is read and verified against the server's freshest entry
 * (its listing at that start), and only then written where Pi reads it. A file that fails verification is never
 * written: the read is refused with one sentence, and the user told once. A `SKILL.md` that fails refuses its whole
 * skill for the session; a request that fails (the server did not start, the connection dropped) refuses only that
 * attempt. Each file is fetched once per session; if its copy on disk changed meanwhile (another session rewrote it),
 * the verified bytes are put back.
 */
import { join } from "node:path";
import type { SkillEntry, SkillRead, SkillReadFailure } from "../types.ts";
import { errorMessage } from "../util/guards.ts";
import { MANIFEST, writePrivateFile } from "./files.ts";
import { skillFiles } from "./offer.ts";

/** How the session reaches the servers' skills (init.ts: the lifecycle's lazy start and the manager's read). */
export interface SkillServers {
  /** Connects the server unless it is connected (a lazy start). Once it resolves, `entries` holds its live listing. */
  connect(server: string, signal?: AbortSignal): Promise<void>;
  /** The server's skill entries: its live listing when connected, else the cached one. */
  entries(server: string): readonly SkillEntry[] | undefined;
  read(server: string, entry: SkillEntry, fileUri: string, signal?: AbortSignal): Promise<SkillRead>;
}

/** A skill file the session fetches: its skill, the skill's folder and its path in it (`references/FORMS.md`). */
export interface SkillFileRequest {
  server: string;
  skill: string;
  folder: string;
  path: string;
}

/** Fetched and on disk, or why not: `reason` is told to the model (the call is refused with it); `told`: the user was told too. */
export type FetchOutcome = { ok: true } | { ok: false; reason: string; told?: boolean };

const FAILURES: Record<SkillReadFailure, string> = {
  size: "its size is not the one the server listed",
  digest: "its content does not match the digest the server listed",
  frontmatter: "its frontmatter is not the one the server listed",
  unlisted: "the server's listing does not include it",
};

export class SkillFetcher {
  private readonly root: string;
  private readonly servers: SkillServers;
  private readonly notify: (message: string) => void;
  /** Verified bytes written this session, by file path. */
  private readonly fetched = new Map<string, Uint8Array>();
  /** Why a skill (by folder) or a file (by path) failed verification this session. */
  private readonly refused = new Map<string, string>();
  private readonly running = new Map<string, Promise<FetchOutcome>>();

  constructor(root: string, servers: SkillServers, notify: (message: string) => void) {
    this.root = root;
    this.servers = servers;
    this.notify = notify;
  }

  /** Files that failed verification this session, as `<skill>/<path>` of a server: for `/mcp status`. */
  refusals(server: string): string[] {
    return [...this.refused.keys()].filter((key) => key.startsWith(`${server}\0`)).map((key) => key.split("\0")[1]!);
  }

  async fetch(request: SkillFileRequest, signal?: AbortSignal): Promise<FetchOutcome> {
    const refusal = this.refused.get(refusalKey(request, MANIFEST)) ?? this.refused.get(refusalKey(request, request.path));
    if (refusal) return { ok: false, reason: refusal, told: true };
    const file = join(request.folder, request.path);
    const bytes = this.fetched.get(file);
    if (bytes) {
      await writePrivateFile(this.root, file, bytes);
      return { ok: true };
    }
    let running = this.running.get(file);
    if (!running) {
      running = this.fetchOnce(request, file, signal).finally(() => this.running.delete(file));
      this.running.set(file, running);
    }
    return running;
  }

  private async fetchOnce(request: SkillFileRequest, file: string, signal: AbortSignal | undefined): Promise<FetchOutcome> {
    const label = `Skill "${request.skill}" of MCP server "${request.server}"`;
    try {
      await this.servers.connect(request.server, signal);
      const entry = this.servers.entries(request.server)?.find((candidate) => candidate.frontmatter.name === request.skill);
      if (!entry) return { ok: false, reason: `${label} is no longer offered by the server.` };
      const files = skillFiles(entry);
      const listed = typeof files === "string" ? undefined : files.get(request.path);
      if (!listed) return { ok: false, reason: `${label} has no file ${request.path}.` };
      const read = await this.servers.read(request.server, entry, listed.uri, signal);
      if (!read.ok) return this.refuse(request, label, read.reason);
      await writePrivateFile(this.root, file, read.bytes);
      this.fetched.set(file, read.bytes);
      return { ok: true };
    } catch (error) {
      return { ok: false, reason: `${label}: ${request.path} could not be fetched from the server: ${errorMessage(error)}` };
    }
  }

  private refuse(request: SkillFileRequest, label: string, failure: SkillReadFailure): FetchOutcome {
    const why = `${request.path} failed verification: ${FAILURES[failure]}`;
    const reason =
      request.path === MANIFEST
        ? `${label} was not loaded: ${why}. Do not use this skill.`
        : `${label}: ${why}, so it was not loaded. Do not use this file.`;
    this.refused.set(refusalKey(request, request.path), reason);
    this.notify(`MCP: skill "${request.skill}" of server "${request.server}" refused: ${why}.`);
    return { ok: false, reason, told: true };
  }
}

function refusalKey(request: SkillFileRequest, path: string): string {
  return `${request.server}\0${request.skill}/${path}`;
}

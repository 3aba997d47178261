/**
 * Whether this session may use the project's MCP config. A repository can write `.pi/mcp.json`, `.mcp.json` and the
 * project files of imported hosts, and each server in them is a command run with the user's rights or a URL sent
 * credentials: they start nothing, and their cached tools are not offered, until the project is trusted.
 *
 * - Pi ≥ 0.87 decides project trust itself (its "Trust project folder?" prompt, `--approve`, `/trust`,
 *   `defaultProjectTrust`) before `session_start`: its decision (`ctx.isProjectTrusted()`) is followed, as Pi 1.x's
 *   built-in MCP does, where it made one (see `hostProjectTrust`).
 * - Otherwise (Pi 0.73 has no trust model; a project Pi found nothing to decide about): the adapter decides. `--mcp-trust-project` (this run) or `settings.trustProjectServers` in a user file
 *   (every project) trust without asking; otherwise the user is asked once in the UI, and the answer is remembered
 *   in `<agentDir>/mcp-trust.json` for the project's path and its files' content (a changed or new file is asked
 *   about again). With nobody to ask, the project's servers stay off and `/mcp status` says how to allow them.
 */
import * as piHost from "@mariozechner/pi-coding-agent";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { updateFileLocked } from "../util/file-lock.ts";
import { isJsonObject } from "../util/guards.ts";
import type { ConfigProblem, LoadedConfig, ProjectConfig } from "../types.ts";

export const TRUST_FLAG = "mcp-trust-project";
const STORE_FILE = "mcp-trust.json";
const STORE_VERSION = 1;

/** How the verdict was reached: it decides what `/mcp status` tells the user to do about it. */
export type TrustSource = "host" | "flag" | "setting" | "remembered" | "asking" | "answered" | "unanswered" | "no-ui";

export interface TrustVerdict {
  trusted: boolean;
  by: TrustSource;
}

/**
 * What Pi decided about the project: `undefined` when it decided nothing. A host without a trust model (0.73) never
 * does; a host with one (0.87, 1.x) also says "trusted" for a project where it found nothing to decide about, and its
 * list of files that need trust may not name ours (0.87 knows no `mcp.json`, no Pi knows `.mcp.json`): its "yes"
 * counts only when Pi did have a decision to make (`hasTrustRequiringProjectResources`). Its "no" always counts.
 */
export function hostProjectTrust(ctx: { cwd: string }): boolean | undefined {
  const isProjectTrusted = (ctx as { isProjectTrusted?: unknown }).isProjectTrusted;
  if (typeof isProjectTrusted !== "function") return undefined;
  if (isProjectTrusted.call(ctx) !== true) return false;
  const decided = (piHost as Record<string, unknown>).hasTrustRequiringProjectResources;
  return typeof decided === "function" && decided(ctx.cwd) === true ? true : undefined;
}

/** One remembered answer: the content of the project's files it was given for. */
interface StoredAnswer {
  trusted: boolean;
  /** File path → sha256 of its content. */
  files: Record<string, string>;
}

export interface TrustQuestion {
  select(title: string, options: string[], opts?: { timeout?: number }): Promise<string | undefined>;
}

const YES = "Yes, use them";
const NO = "No";

export class ProjectTrust {
  private readonly storePath: string;

  constructor(agentDir: string) {
    this.storePath = join(agentDir, STORE_FILE);
  }

  /**
   * The verdict reachable without asking, or `undefined` when only the user can tell (then `ask`). `config` was
   * loaded without the project (its settings are the user's own); `hostTrusted` is Pi's answer where Pi has one.
   */
  decide(cwd: string, config: LoadedConfig, hostTrusted: boolean | undefined, flagged: boolean): TrustVerdict | undefined {
    if (hostTrusted !== undefined) return { trusted: hostTrusted, by: "host" };
    if (flagged) return { trusted: true, by: "flag" };
    if (config.settings.trustProjectServers === true) return { trusted: true, by: "setting" };
    const project = config.project;
    if (!project) return undefined;
    const answer = this.remembered(cwd, project);
    return answer === undefined ? undefined : { trusted: answer, by: "remembered" };
  }

  /** Asks whether to use the project's servers; a Yes or No is remembered for this content, a dismissed dialog is not. */
  async ask(ui: TrustQuestion, cwd: string, project: ProjectConfig, timeoutMs: number): Promise<TrustVerdict> {
    const files = project.files.map((file) => relative(cwd, file) || file).join(", ");
    const title =
      `This project's MCP config (${files}) ${project.servers.length > 0 ? `defines servers: ${project.servers.join(", ")}` : "configures MCP"}. ` +
      "Each runs a command on this machine or connects to a URL, with your credentials. Use them?";
    const choice = await ui.select(title, [YES, NO], { timeout: timeoutMs });
    if (choice !== YES && choice !== NO) return { trusted: false, by: "unanswered" };
    await this.remember(cwd, project, choice === YES);
    return { trusted: choice === YES, by: "answered" };
  }

  /** Keeps an answer for the project's files as they are now (a changed file is asked about again). */
  async remember(cwd: string, project: ProjectConfig, trusted: boolean): Promise<void> {
    await this.store(cwd, { trusted, files: digests(project.files) });
  }

  /**
   * Why the project's servers are not used, and how to allow them: for `/mcp status` and the startup warning. None
   * while the question is on screen (it says it all).
   */
  explain(verdict: TrustVerdict, config: LoadedConfig): ConfigProblem | undefined {
    const project = config.project;
    if (verdict.trusted || verdict.by === "asking" || !project) return undefined;
    const what = `Project MCP config not used (${project.files.join(", ")}; servers: ${project.servers.join(", ") || "none"})`;
    const flag = `start Pi with --${TRUST_FLAG}`;
    const why: Record<Exclude<TrustSource, "flag" | "setting" | "asking">, string> = {
      host: "Pi does not trust this project. To use it: trust the project (/trust, then restart Pi), or start Pi with --approve",
      remembered: `you answered No for these files as they are now. To use them: ${flag}, or remove the project from ${this.storePath} to be asked again`,
      answered: `you answered No. To use them: ${flag}, or remove the project from ${this.storePath} to be asked again`,
      unanswered: `the question was not answered; it is asked again at the next start (or ${flag})`,
      "no-ui": `the project is not trusted and there is no UI to ask. To use them: ${flag}, or set "settings": { "trustProjectServers": true } in ${config.userFile} (every project)`,
    };
    return { level: "warning", file: project.files[0]!, message: `${what}: ${why[verdict.by as keyof typeof why]}.` };
  }

  /** The answer remembered for exactly these files with this content. */
  private remembered(cwd: string, project: ProjectConfig): boolean | undefined {
    const answer = readStore(this.storePath)[projectKey(cwd)];
    if (!answer) return undefined;
    const now = digests(project.files);
    const same =
      Object.keys(now).length === Object.keys(answer.files).length &&
      Object.entries(now).every(([file, hash]) => answer.files[file] === hash);
    return same ? answer.trusted : undefined;
  }

  /** Never throws: an answer that cannot be stored holds for this process only (config/session-config.ts keeps it). */
  private async store(cwd: string, answer: StoredAnswer): Promise<void> {
    await updateFileLocked(this.storePath, (current) => {
      const projects = current === undefined ? {} : parseStore(current);
      return `${JSON.stringify({ version: STORE_VERSION, projects: { ...projects, [projectKey(cwd)]: answer } }, null, 2)}\n`;
    });
  }
}

function projectKey(cwd: string): string {
  return resolve(cwd);
}

/** sha256 of each file's bytes; a file that cannot be read has none (and so matches no remembered answer). */
function digests(files: readonly string[]): Record<string, string> {
  const result: Record<string, string> = {};
  for (const file of files) {
    try {
      result[file] = createHash("sha256").update(readFileSync(file)).digest("hex");
    } catch {
      result[file] = "unreadable";
    }
  }
  return result;
}

function readStore(path: string): Record<string, StoredAnswer> {
  try {
    return parseStore(readFileSync(path, "utf8"));
  } catch {
    return {};
  }
}

/** Tolerant: an entry of the wrong shape is dropped (the user is then asked again), never trusted. */
function parseStore(text: string): Record<string, StoredAnswer> {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return {};
  }
  const projects = isJsonObject(data) && isJsonObject(data.projects) ? data.projects : {};
  const answers: Record<string, StoredAnswer> = {};
  for (const [key, value] of Object.entries(projects)) {
    if (!isJsonObject(value) || typeof value.trusted !== "boolean" || !isJsonObject(value.files)) continue;
    if (!Object.values(value.files).every((hash) => typeof hash === "string")) continue;
    answers[key] = { trusted: value.trusted, files: value.files as Record<string, string> };
  }
  return answers;
}

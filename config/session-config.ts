/**
 * The config a session runs with: the user's files always, the project's once the project is trusted
 * (host/project-trust.ts), and the servers other extensions registered (with Pi, or through upstream's event for
 * this session). What the project may do is decided
 * here, once per load, so that nothing downstream (startup, listing, npx resolution, `!command` values) has to ask:
 * an untrusted project's servers are simply not in the config.
 */
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { editedConfigFiles, type ExtensionServer, hideConfigSecretsInDebugLog, loadConfig, type RuntimeServer } from "../config.ts";
import { hostMcpServers, hostProjectTrust, ProjectTrust, TRUST_FLAG, type TrustQuestion, type TrustVerdict } from "../host.ts";
import type { LoadedConfig } from "../types.ts";
import { DIALOG_TIMEOUT_MS } from "../ui.ts";
import { flagFromArgv } from "../util/argv.ts";
import { fileStamp } from "../util/file-stamp.ts";

export const CONFIG_FLAG = "mcp-config";

interface LoadInputs {
  cwd: string;
  /** `--mcp-config <path>`. */
  configPath: string | undefined;
  /** `--mcp-trust-project`. */
  trustFlag: boolean;
  /** `pi.getMcpServers()` where Pi has it. */
  registered: readonly ExtensionServer[];
  /** Registered through upstream's event for this session. */
  runtime: readonly RuntimeServer[];
}

export class SessionConfig {
  private readonly pi: Pick<ExtensionAPI, "getFlag">;
  private readonly agentDir: string;
  private readonly trust: ProjectTrust;
  /** Pi's own answer about the project (`ctx.isProjectTrusted()`, Pi 1.x); `undefined` on a host without a trust model. */
  private hostTrusted: boolean | undefined;
  /** Someone can answer a dialog (the TUI, an RPC client): an undecided project is asked about (`askIfWaiting`). */
  private canAsk = false;
  /**
   * Verdicts the user gave in this process: an answer the store could not keep, and a dismissed question (not asked
   * again until Pi restarts).
   */
  private readonly given = new Map<string, TrustVerdict>();
  /** The last load's verdict on the project; `undefined` when no project file configures anything. */
  private verdict: TrustVerdict | undefined;
  /** What the last load read: a reload after the user's own edit reads the same sources. */
  private lastInputs: LoadInputs | undefined;
  /** The files people edit that the last load read, each with its stamp then (`changedFiles`). */
  private stamps = new Map<string, string>();

  /** The servers registered through upstream's event, as they are now. */
  private readonly runtime: () => readonly RuntimeServer[];

  constructor(pi: Pick<ExtensionAPI, "getFlag">, agentDir: string, runtime: () => readonly RuntimeServer[] = () => []) {
    this.pi = pi;
    this.agentDir = agentDir;
    this.trust = new ProjectTrust(agentDir);
    this.runtime = runtime;
  }

  /**
   * Module scope: Pi has not parsed the flags yet (they are read from the command line), nor decided about the
   * project: only a trust given before (the flag, the setting, a remembered answer) lets the project in here.
   */
  loadEarly(): LoadedConfig {
    const configPath = flagFromArgv(process.argv, CONFIG_FLAG);
    return this.load({
      cwd: process.cwd(),
      configPath: typeof configPath === "string" ? configPath : undefined,
      trustFlag: flagFromArgv(process.argv, TRUST_FLAG) !== undefined,
      registered: [],
      runtime: [],
    });
  }

  /** session_start: what this session's Pi says about the project, and whether a dialog can be shown. */
  beginSession(ctx: ExtensionContext): void {
    this.hostTrusted = hostProjectTrust(ctx);
    this.canAsk = ctx.hasUI;
  }

  loadForSession(cwd: string, pi: object): LoadedConfig {
    const configPath = this.pi.getFlag(CONFIG_FLAG);
    return this.load({
      cwd,
      configPath: typeof configPath === "string" ? configPath : undefined,
      trustFlag: this.pi.getFlag(TRUST_FLAG) === true,
      registered: hostMcpServers(pi),
      runtime: this.runtime(),
    });
  }

  /**
   * When the last load left the project waiting for the user: asks, remembers the answer, and returns true (the
   * caller loads the config again to follow it). Otherwise returns false at once.
   */
  async askIfWaiting(ui: TrustQuestion, cwd: string, config: LoadedConfig): Promise<boolean> {
    if (this.verdict?.by !== "asking" || !config.project) return false;
    const verdict = await this.trust.ask(ui, cwd, config.project, DIALOG_TIMEOUT_MS);
    this.given.set(cwd, verdict);
    return true;
  }

  /**
   * After the user's own `/mcp enable|disable|add|remove` rewrote a config file: a project they trusted by their
   * answer stays trusted with the content they just wrote (the answer is kept for it), instead of being asked about
   * again or, with no one to ask, dropped.
   */
  async keepTrustAfterOwnWrite(): Promise<void> {
    const { verdict, lastInputs } = this;
    if (!verdict?.trusted || (verdict.by !== "remembered" && verdict.by !== "answered") || !lastInputs) return;
    const project = loadConfig({ ...this.loadOptions(lastInputs), projectTrusted: false }).project;
    if (project) await this.trust.remember(lastInputs.cwd, project, true);
  }

  /**
   * The config files changed since the last load read them (a stat per file): edited by hand, or by another Pi
   * session's /mcp command. The session loads the config again to follow them.
   */
  changedFiles(): string[] {
    return [...this.stamps].filter(([file, stamp]) => fileStamp(file) !== stamp).map(([file]) => file);
  }

  private load(inputs: LoadInputs): LoadedConfig {
    this.lastInputs = inputs;
    // Stamped before they are read: a change made while they are read is a change still to follow.
    const options = this.loadOptions(inputs);
    const own = this.stampsOf(editedConfigFiles(options));
    const config = this.decideAndLoad(inputs);
    // Each file stamped once: an imported host's file that is also one of our own keeps its stamp from before.
    const imported = editedConfigFiles(options, config.imports).filter((file) => !own.has(file));
    this.stamps = new Map([...own, ...this.stampsOf(imported)]);
    hideConfigSecretsInDebugLog(config);
    return config;
  }

  private stampsOf(files: readonly string[]): Map<string, string> {
    return new Map(files.map((file) => [file, fileStamp(file)]));
  }

  private loadOptions(inputs: LoadInputs) {
    const { cwd, configPath, registered, runtime } = inputs;
    return { agentDir: this.agentDir, cwd, configPath, registered, runtime };
  }

  private decideAndLoad(inputs: LoadInputs): LoadedConfig {
    const options = this.loadOptions(inputs);
    // Loaded without the project first: its settings are then the user's own, which a project must not change.
    const userOnly = loadConfig({ ...options, projectTrusted: false });
    if (!userOnly.project) {
      this.verdict = undefined;
      return userOnly;
    }
    const verdict = this.trust.decide(inputs.cwd, userOnly, this.hostTrusted, inputs.trustFlag) ??
      this.given.get(inputs.cwd) ?? { trusted: false, by: this.canAsk ? "asking" : "no-ui" };
    this.verdict = verdict;
    if (verdict.trusted) return loadConfig({ ...options, projectTrusted: true });
    const problem = this.trust.explain(verdict, userOnly);
    return problem ? { ...userOnly, problems: [...userOnly.problems, problem] } : userOnly;
  }
}

/**
 * `/mcp enable | disable <server>`, `/mcp add <name> <command …> | <url>` and `/mcp remove <name>`: changing which
 * servers Pi uses from inside the session. Each writes one of our config files (config/writer.ts keeps everything
 * else in it as it was) and then the session follows the new config at once (no /reload): a server's tools come or
 * go, its process is started or stopped.
 *
 * enable/disable write `{ "enabled": … }` to the file the user picks, among those where it takes effect: the user
 * file (offered first) or the project's `.pi/mcp.json` for a server the user file can override, the project's file
 * alone for a server the project defines (an override in a lower file than the definition would be ignored). With no
 * UI, `--project` or `--user` picks, else the user file when it can. add writes the user file; remove edits the file that defines the server.
 */
import type { ExtensionCommandContext } from "@mariozechner/pi-coding-agent";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describeSource } from "../config.ts";
import { parseServerEntry } from "../config.ts";
import { interpolationContext } from "../config.ts";
import { removeServerEntry, writeServerEnabled, writeServerEntry } from "../config.ts";
import { errorMessage } from "../util/guards.ts";
import type { McpExtensionState } from "../state.ts";
import type { ConfigProblem, ConfigSourceKind, ServerDefinition } from "../types.ts";
import { DIALOG_TIMEOUT_MS, showText } from "../ui.ts";

export const MANAGE_SUBCOMMANDS = ["enable", "disable", "add", "remove"] as const;
export type ManageSubcommand = (typeof MANAGE_SUBCOMMANDS)[number];

/** How a user with no server adds one: said by `/mcp status` and the empty `/mcp` panel. */
export function addServerHint(userFile: string): string {
  return `Add one with /mcp add <name> <command or url>, or add them to ${userFile} (see the README).`;
}

export const MANAGE_USAGE =
  "/mcp enable|disable <server> [--project|--user] | add <name> <command> [args…] | add <name> <url> | remove <name>";

/** Names that make good tool prefixes and config keys: letters, digits, `_` and `-`. */
const SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
/** Files whose servers /mcp remove may delete (our own formats; imported host files are left to their host). */
const OWN_KINDS: ReadonlySet<ConfigSourceKind> = new Set(["project", "project-shared", "user", "user-shared"]);

interface FileChoice {
  label: string;
  path: string;
  /** Said beside the path when offered, e.g. that the file does not exist yet. */
  note?: string;
}

/** The words of a command line; "double" or 'single' quotes keep spaces inside one word (a path, an argument). */
export function splitArguments(line: string): string[] {
  const words: string[] = [];
  for (const match of line.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)) words.push(match[1] ?? match[2] ?? match[3]!);
  return words;
}

export function isManageSubcommand(word: string): word is ManageSubcommand {
  return (MANAGE_SUBCOMMANDS as readonly string[]).includes(word);
}

/** Runs one of the subcommands; every outcome (done, refused, failed) is shown to the user. */
export async function runManageCommand(
  ctx: ExtensionCommandContext,
  state: McpExtensionState,
  subcommand: ManageSubcommand,
  words: string[],
): Promise<void> {
  try {
    const report = await manage(ctx, state, subcommand, words);
    if (report) showText(ctx, report);
  } catch (error) {
    const text = `/mcp ${subcommand}: ${errorMessage(error)}`;
    if (ctx.hasUI) ctx.ui.notify(text, "error");
    else process.stderr.write(`[mcp] ${text}\n`);
  }
}

async function manage(
  ctx: ExtensionCommandContext,
  state: McpExtensionState,
  subcommand: ManageSubcommand,
  words: string[],
): Promise<string | undefined> {
  if (subcommand === "add") return addServer(state, words);
  // A name with spaces may come unquoted: every word that is not a --flag is part of it.
  const name = words.filter((word) => !word.startsWith("--")).join(" ");
  const flags = words.filter((word) => word.startsWith("--"));
  if (subcommand === "remove") return removeServer(state, name);
  return setEnabled(ctx, state, name, subcommand === "enable", flags);
}

/** Enables or disables a configured server, in the file the user picks; undefined when the user dismissed the choice. */
async function setEnabled(
  ctx: ExtensionCommandContext,
  state: McpExtensionState,
  name: string,
  enabled: boolean,
  flags: readonly string[] = [],
): Promise<string | undefined> {
  const server = requireServer(state, name);
  const choices = overrideFiles(state, server);
  const file = await pickFile(ctx, choices, flags, `${enabled ? "Enable" : "Disable"} MCP server "${name}" in`);
  if (!file) return undefined;
  await writeServerEnabled(file.path, name, enabled);
  const change = await state.reloadConfig();
  const now = state.servers.get(name);
  if ((now?.enabled !== false) !== enabled) {
    return `Wrote "enabled": ${enabled} for "${name}" to ${file.path}, but the server is still ${enabled ? "disabled" : "enabled"}: a higher-precedence file sets it (/mcp status shows its source).`;
  }
  if (!enabled)
    return `Disabled MCP server "${name}" (${file.path})${change.stopped.includes(name) ? ": its tools are gone, and it does not run" : ""}.`;
  return `Enabled MCP server "${name}" (${file.path}): ${toolSummary(state, name)}.`;
}

async function addServer(state: McpExtensionState, words: readonly string[]): Promise<string> {
  const [name = "", target, ...args] = words;
  if (!target) throw new Error(`usage: /mcp add <name> <command> [args…] | /mcp add <name> <url>`);
  checkNewName(state, name);
  const entry: Record<string, unknown> =
    isUrl(target) && args.length === 0 ? { url: target } : { command: target, ...(args.length > 0 ? { args } : {}) };
  const file = state.config.userFile;
  validateEntry(state, file, name, entry);
  await writeServerEntry(file, name, entry);
  await state.reloadConfig();
  const live = state.manager.getState(name);
  if (!state.inventories.has(name)) {
    return `Added MCP server "${name}" to ${file}, but it did not connect: ${live.lastError?.split("\n")[0] ?? live.status}. Fix it, then /mcp reconnect ${name}.`;
  }
  return `Added MCP server "${name}" to ${file}: ${toolSummary(state, name)}.`;
}

async function removeServer(state: McpExtensionState, name: string): Promise<string> {
  const server = requireServer(state, name);
  if (!OWN_KINDS.has(server.source.kind)) {
    throw new Error(
      `"${name}" comes from ${describeSource(server.source)}, which Pi does not edit; remove it there, or /mcp disable ${name}`,
    );
  }
  await removeServerEntry(server.source.path, name);
  await state.reloadConfig();
  const still = state.servers.get(name);
  if (still) return `Removed "${name}" from ${server.source.path}; ${still.source.path} defines it too, and that definition is used now.`;
  return `Removed MCP server "${name}" from ${server.source.path}; it is stopped and its tools are gone.`;
}

function requireServer(state: McpExtensionState, name: string): ServerDefinition {
  const server = state.servers.get(name);
  if (server) return server;
  const known = [...state.servers.keys()].join(", ") || "none";
  throw new Error(name ? `no MCP server named "${name}" (servers: ${known})` : `name a server (servers: ${known})`);
}

function checkNewName(state: McpExtensionState, name: string): void {
  if (!SERVER_NAME.test(name)) {
    throw new Error(`"${name}" is not a usable server name: use letters, digits, "_" and "-" (up to 64, starting with a letter or digit)`);
  }
  const existing = state.servers.get(name);
  if (existing)
    throw new Error(`a server named "${name}" exists already (${existing.source.path}); /mcp remove ${name} first, or pick another name`);
  const skipped = state.config.problems.find((problem) => problem.server === name);
  if (skipped) throw new Error(`a server named "${name}" is configured already (${skipped.file}), though not loaded: ${skipped.message}`);
}

/** The same validation as loading the file: a refused entry is never written. */
function validateEntry(state: McpExtensionState, file: string, name: string, entry: Record<string, unknown>): void {
  const problems: ConfigProblem[] = [];
  const context = interpolationContext({ agentDir: state.agentDir, cwd: state.cwd });
  // `add` writes the user's own file, whose "!command" values run when the server starts.
  const options = {
    file,
    context,
    interpolate: true,
    allowOverride: false,
    reportUnknownFields: true,
    defaultsSyntax: true,
    commands: "run" as const,
  };
  const parsed = parseServerEntry(name, entry, options, problems);
  const errors = parsed.kind === "server" ? [...problems, ...parsed.unresolved] : problems;
  const refused = errors.filter((problem) => problem.level === "error");
  if (parsed.kind !== "server" || refused.length > 0) throw new Error(`not added: ${refused.map((problem) => problem.message).join("; ")}`);
}

/**
 * Files where an `enabled` override takes effect for this server, the one offered first first. A server the project
 * defines or disabled can only be switched in the project's file. Otherwise the user file comes first: the project
 * file is offered second, and said to be new when it does not exist yet (creating it makes Pi 1.x ask the user to
 * trust the project from then on, so it is never the default).
 */
function overrideFiles(state: McpExtensionState, server: ServerDefinition): FileChoice[] {
  const projectPath = join(state.cwd, ".pi", "mcp.json");
  const project: FileChoice = { label: "project", path: projectPath };
  const user: FileChoice = { label: "user", path: state.config.userFile };
  const definedInProject = server.source.kind === "project" || server.source.kind === "project-shared";
  if (definedInProject) return [project];
  if (server.disabledIn?.path === projectPath) return [project, user];
  return [user, existsSync(projectPath) ? project : { ...project, note: "a new file" }];
}

async function pickFile(
  ctx: ExtensionCommandContext,
  choices: FileChoice[],
  flags: readonly string[],
  title: string,
): Promise<FileChoice | undefined> {
  const flagged = flags.find((flag) => flag.startsWith("--"));
  if (flagged) {
    const choice = choices.find((candidate) => `--${candidate.label}` === flagged);
    if (!choice)
      throw new Error(`${flagged}: the choices are ${choices.map((candidate) => `--${candidate.label} (${candidate.path})`).join(", ")}`);
    return choice;
  }
  if (choices.length === 1 || !ctx.hasUI) return choices.find((choice) => choice.label === "user") ?? choices[0];
  const labels = choices.map((choice) => `${choice.label}: ${choice.path}${choice.note ? ` (${choice.note})` : ""}`);
  const picked = await ctx.ui.select(title, labels, { timeout: DIALOG_TIMEOUT_MS });
  return picked === undefined ? undefined : choices[labels.indexOf(picked)];
}

function toolSummary(state: McpExtensionState, name: string): string {
  const tools = state.tools.byServer.get(name) ?? [];
  if (tools.length === 0) return state.inventories.has(name) ? "no tools" : "its tools are listed on first use";
  const names = tools.map((tool) => tool.name);
  const shown = names.slice(0, 8).join(", ");
  return `${tools.length} ${tools.length === 1 ? "tool" : "tools"} (${shown}${names.length > 8 ? ", …" : ""}), found through ToolSearch`;
}

/** Any scheme: an `ftp://` address is then refused as a URL, not tried as a command. */
function isUrl(text: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(text);
}

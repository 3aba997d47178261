/**
 * `/mcp enable | disable <server>`, `/mcp add <name> <command …> | <url>` (or `<registry name>`: commands/registry-add.ts),
 * `/mcp remove <name>` and `/mcp import <host>`: changing which servers Pi uses from inside the session. Each writes
 * one of our config files (config/writer.ts keeps everything else in it as it was) and then the session follows the
 * new config at once (no /reload): a server's tools come or go, its process is started or stopped.
 *
 * enable/disable write `{ "enabled": … }` to the file the user picks, among those where it takes effect: the user
 * file (offered first) or the project's `.pi/mcp.json` for a server the user file can override, the project's file
 * alone for a server the project defines (an override in a lower file than the definition would be ignored). With no
 * UI, `--project` or `--user` picks, else the user file when it can. add and import write the user file; remove edits
 * the file that defines the server.
 */
import type { ExtensionCommandContext } from "@mariozechner/pi-coding-agent";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describeSource, removeServerEntry, writeImports, writeServerEnabled } from "../config.ts";
import { errorMessage } from "../util/guards.ts";
import type { McpExtensionState } from "../state.ts";
import { type ConfigSource, type ConfigSourceKind, IMPORT_KINDS, type ImportKind, type ServerDefinition } from "../types.ts";
import { DIALOG_TIMEOUT_MS, showText } from "../ui.ts";
import { addServerEntry, toolSummary } from "./new-server.ts";
import { skipReason } from "./status-report.ts";
import { addFromRegistry, isRegistryAdd } from "./registry-add.ts";

export const MANAGE_SUBCOMMANDS = ["enable", "disable", "add", "remove", "import"] as const;
export type ManageSubcommand = (typeof MANAGE_SUBCOMMANDS)[number];

export const MANAGE_USAGE =
  "/mcp enable|disable <server> [--project|--user] | add <name> <command> [args…] | add <name> <url> | add <registry name> [name] | remove <name> | import <host>";

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
  await runReported(ctx, subcommand, () => manage(ctx, state, subcommand, words));
}

/** Runs a `/mcp` subcommand: its report shown, its failure one line (an error notice; stderr without a UI). */
export async function runReported(ctx: ExtensionCommandContext, subcommand: string, work: () => Promise<unknown>): Promise<void> {
  try {
    const report = await work();
    if (typeof report === "string" && report !== "") showText(ctx, report);
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
  if (subcommand === "add") return isRegistryAdd(words) ? addFromRegistry(ctx, state, words) : addServer(state, words);
  if (subcommand === "import") return importHosts(state, words);
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
  // A skipped server is enabled already: what keeps it from starting is what the config problem says.
  const skipped = skipReason(state, name);
  if (enabled && skipped) return `MCP server "${name}" is skipped, which enabling does not change: ${skipped}`;
  const choices = overrideFiles(state, server);
  const file = await pickFile(ctx, choices, flags, `${enabled ? "Enable" : "Disable"} MCP server "${name}" in`);
  if (!file) return undefined;
  await writeServerEnabled(file.path, name, enabled);
  const change = await state.reloadConfig();
  const now = state.servers.get(name);
  const still = skipReason(state, name);
  if (still) return `Wrote "enabled": ${enabled} for "${name}" to ${file.path}; it is skipped: ${still}`;
  if ((now?.enabled !== false) !== enabled) {
    return `Wrote "enabled": ${enabled} for "${name}" to ${file.path}, but the server is still ${enabled ? "disabled" : "enabled"}: a higher-precedence file sets it (/mcp status shows its source).`;
  }
  if (!enabled)
    return `Disabled MCP server "${name}" (${file.path})${change.stopped.includes(name) ? ": its tools are gone, and it does not run" : ""}.`;
  return `Enabled MCP server "${name}" (${file.path}): ${toolSummary(state, name)}.`;
}

async function addServer(state: McpExtensionState, words: readonly string[]): Promise<string> {
  const [name = "", target, ...args] = words;
  if (!target) throw new Error(`usage: /mcp add <name> <command> [args…] | /mcp add <name> <url> | /mcp add <registry name> [name]`);
  const entry: Record<string, unknown> =
    isUrl(target) && args.length === 0 ? { url: target } : { command: target, ...(args.length > 0 ? { args } : {}) };
  return (await addServerEntry(state, name, entry)).text;
}

/** `/mcp import <host…>`: the hosts join `imports` in the user file, and their servers the session. */
async function importHosts(state: McpExtensionState, words: readonly string[]): Promise<string> {
  const known = IMPORT_KINDS.join(", ");
  if (words.length === 0) throw new Error(`name a host to import: ${known}`);
  const unknown = words.filter((word) => !(IMPORT_KINDS as readonly string[]).includes(word));
  if (unknown.length > 0) throw new Error(`${unknown.join(", ")}: not a host this adapter imports (${known})`);
  const kinds = words as ImportKind[];
  const file = state.config.userFile;
  const before = new Set(state.servers.keys());
  await writeImports(file, kinds);
  await state.reloadConfig();
  const added = [...state.servers.values()].filter(
    (server) => !before.has(server.name) && (kinds as string[]).includes(server.source.kind),
  );
  const names = added.map((server) => server.name);
  return names.length > 0
    ? `Imported ${kinds.join(", ")} (written to "imports" in ${file}): ${names.length} ${names.length === 1 ? "server" : "servers"}, ${names.join(", ")}.`
    : `Imported ${kinds.join(", ")} (written to "imports" in ${file}), but no server came with it: /mcp status says why.`;
}

/** A file /mcp remove edits: one of our own (another host's file is its host's to edit). */
export function isEditableSource(source: ConfigSource): boolean {
  return OWN_KINDS.has(source.kind);
}

async function removeServer(state: McpExtensionState, name: string): Promise<string> {
  const server = requireServer(state, name);
  if (!isEditableSource(server.source)) {
    throw new Error(
      `"${name}" comes from ${describeSource(server.source)}, which Pi does not edit; remove it there, or /mcp disable ${name}`,
    );
  }
  // A disabled or skipped server never ran: there is nothing to stop.
  const ran = state.servers.get(name)?.enabled !== false && state.servers.has(name);
  await removeServerEntry(server.source.path, name);
  await state.reloadConfig();
  const still = configuredServer(state, name);
  if (still) return `Removed "${name}" from ${server.source.path}; ${still.source.path} defines it too, and that definition is used now.`;
  return `Removed MCP server "${name}" from ${server.source.path}${ran ? "; it is stopped and its tools are gone" : ""}.`;
}

/** What /mcp enable|disable|remove act on: a server of the config, loaded or skipped. */
type ConfiguredServer = Pick<ServerDefinition, "name" | "source" | "disabledIn">;

function configuredServer(state: McpExtensionState, name: string): ConfiguredServer | undefined {
  return state.servers.get(name) ?? state.config.skipped?.find((server) => server.name === name);
}

function requireServer(state: McpExtensionState, name: string): ConfiguredServer {
  const server = configuredServer(state, name);
  if (server) return server;
  const names = [...state.servers.keys(), ...(state.config.skipped ?? []).map((skipped) => skipped.name)];
  const known = names.join(", ") || "none";
  throw new Error(name ? `no MCP server named "${name}" (servers: ${known})` : `name a server (servers: ${known})`);
}

/**
 * Files where an `enabled` override takes effect for this server, the one offered first first. A server the project
 * defines or disabled can only be switched in the project's file. Otherwise the user file comes first: the project
 * file is offered second, and said to be new when it does not exist yet (creating it makes Pi 1.x ask the user to
 * trust the project from then on, so it is never the default).
 */
function overrideFiles(state: McpExtensionState, server: ConfiguredServer): FileChoice[] {
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

/** Any scheme: an `ftp://` address is then refused as a URL, not tried as a command. */
function isUrl(text: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(text);
}

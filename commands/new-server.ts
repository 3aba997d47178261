/**
 * A new server in the user file, from `/mcp add` (by command or URL, or from the registry) and the `/mcp` panel: its
 * name checked, its entry validated as loading the file would validate it (a refused entry is never written), the
 * entry written (config/writer.ts keeps the rest of the file as it was), and the session following it at once: the
 * server connects and its tools are listed, so ToolSearch finds them in the same session.
 */
import { interpolationContext, ownEntryOptions, parseServerEntry, SERVER_NAME, writeServerEntry } from "../config.ts";
import type { McpExtensionState } from "../state.ts";
import type { ConfigProblem } from "../types.ts";
import { firstItems } from "../util/text.ts";

export interface AddedServer {
  file: string;
  /** Its tools are known (listed now, or from the cache). */
  connected: boolean;
  /** `Added MCP server "x" to <file>: 3 tools (…), found through ToolSearch.`, or why it did not connect. */
  text: string;
}

/**
 * `unsetVariables`: the entry may read variables that are not set yet (a registry entry's secrets): it is written
 * anyway, and the report leaves saying so to the caller.
 */
export async function addServerEntry(
  state: McpExtensionState,
  name: string,
  entry: Record<string, unknown>,
  options: { unsetVariables?: boolean } = {},
): Promise<AddedServer> {
  checkNewName(state, name);
  const file = state.config.userFile;
  validateEntry(state, file, name, entry, options.unsetVariables === true);
  await writeServerEntry(file, name, entry);
  await state.reloadConfig();
  if (state.inventories.has(name))
    return { file, connected: true, text: `Added MCP server "${name}" to ${file}: ${toolSummary(state, name)}.` };
  if (!state.servers.has(name)) return { file, connected: false, text: `Added MCP server "${name}" to ${file}.` };
  const live = state.manager.getState(name);
  const why = live.lastError?.split("\n")[0] ?? live.status;
  return {
    file,
    connected: false,
    text: `Added MCP server "${name}" to ${file}, but it did not connect: ${why}. Fix it, then /mcp reconnect ${name}.`,
  };
}

/** Refuses a name that is not usable or that the config has (loaded or not). */
export function checkNewName(state: McpExtensionState, name: string, otherName = "pick another name"): void {
  if (!SERVER_NAME.test(name)) {
    throw new Error(`"${name}" is not a usable server name: use letters, digits, "_" and "-" (up to 64, starting with a letter or digit)`);
  }
  const existing = state.servers.get(name);
  if (existing)
    throw new Error(`a server named "${name}" exists already (${existing.source.path}); /mcp remove ${name} first, or ${otherName}`);
  const skipped = state.config.problems.find((problem) => problem.server === name);
  if (skipped) throw new Error(`a server named "${name}" is configured already (${skipped.file}), though not loaded: ${skipped.message}`);
}

/** The same validation as loading the file: a refused entry is never written. */
function validateEntry(
  state: McpExtensionState,
  file: string,
  name: string,
  entry: Record<string, unknown>,
  unsetVariables: boolean,
): void {
  const problems: ConfigProblem[] = [];
  const context = interpolationContext({ agentDir: state.agentDir, cwd: state.cwd });
  // `add` writes the user's own file, whose "!command" values run when the server starts.
  const parsed = parseServerEntry(name, entry, ownEntryOptions(file, context, true), problems);
  const errors = parsed.kind === "server" && !unsetVariables ? [...problems, ...parsed.unresolved] : problems;
  const refused = errors.filter((problem) => problem.level === "error");
  if (parsed.kind !== "server" || refused.length > 0) throw new Error(`not added: ${refused.map((problem) => problem.message).join("; ")}`);
}

export function toolSummary(state: McpExtensionState, name: string): string {
  const tools = state.tools.byServer.get(name) ?? [];
  if (tools.length === 0) return state.inventories.has(name) ? "no tools" : "its tools are listed on first use";
  const names = tools.map((tool) => tool.name);
  return `${tools.length} ${tools.length === 1 ? "tool" : "tools"} (${firstItems(names, 8)}), found through ToolSearch`;
}

/**
 * Which MCP tools are "direct": active from the first request, without a ToolSearch. `MCP_DIRECT_TOOLS`
 * (`*`, `server`, `server/tool`, `__none__`, comma-separated) overrides the config (`directTools` per server,
 * `settings.directTools` for all). A tool the config gives an exposure (`exposure`, `toolExposure`: Pi 1.x's fields)
 * is direct when that exposure is `direct`, whatever `directTools` says.
 */
import { configuredExposure, namesDirectExposure } from "./tools/exposure.ts";
import type { McpSettings, ServerDefinition, ToolMetadata } from "./types.ts";

export const DIRECT_TOOLS_ENV = "MCP_DIRECT_TOOLS";
const NONE = "__none__";

/** The parsed override: undefined when the variable is unset or blank (the config decides). */
export interface DirectToolsOverride {
  all: boolean;
  servers: ReadonlySet<string>;
  /** server → tool names (MCP or Pi names) */
  tools: ReadonlyMap<string, ReadonlySet<string>>;
}

export function parseDirectToolsEnv(value: string | undefined): DirectToolsOverride | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  const servers = new Set<string>();
  const tools = new Map<string, Set<string>>();
  let all = false;
  for (const item of value.split(",").map((part) => part.trim())) {
    if (item === "" || item === NONE) continue;
    if (item === "*") all = true;
    else if (item.includes("/")) {
      const slash = item.indexOf("/");
      const server = item.slice(0, slash);
      const set = tools.get(server) ?? new Set<string>();
      set.add(item.slice(slash + 1));
      tools.set(server, set);
    } else servers.add(item);
  }
  return { all, servers, tools };
}

export interface DirectToolRules {
  servers: ReadonlyMap<string, ServerDefinition>;
  settings: McpSettings;
  override: DirectToolsOverride | undefined;
}

function isDirectTool(tool: ToolMetadata, rules: DirectToolRules): boolean {
  const { override } = rules;
  if (override) {
    if (override.all || override.servers.has(tool.serverName)) return true;
    const named = override.tools.get(tool.serverName);
    return !!named && (named.has(tool.originalName) || named.has(tool.name));
  }
  const server = rules.servers.get(tool.serverName);
  const exposure = server && configuredExposure(server, tool.originalName);
  if (exposure !== undefined) return exposure === "direct";
  const configured = server?.directTools ?? rules.settings.directTools ?? false;
  if (Array.isArray(configured)) return configured.includes(tool.originalName) || configured.includes(tool.name);
  return configured === true;
}

/** Servers some of whose tools would be direct: worth connecting at startup when their tools are not cached. */
export function wantsDirectTools(server: ServerDefinition, rules: DirectToolRules): boolean {
  const { override } = rules;
  if (override) return override.all || override.servers.has(server.name) || override.tools.has(server.name);
  if (namesDirectExposure(server)) return true;
  const configured = server.directTools ?? rules.settings.directTools ?? false;
  return Array.isArray(configured) ? configured.length > 0 : configured;
}

/**
 * After a startup learned the tools of servers no cache knew: those with direct tools have them from the user's next
 * message (the current prompt was already sent without them), which the user is told.
 */
export function directToolsLearnedNotice(learned: readonly ServerDefinition[], rules: DirectToolRules): string | undefined {
  const direct = learned.filter((server) => wantsDirectTools(server, rules)).map((server) => server.name);
  return direct.length > 0 ? `MCP: direct tools of ${direct.join(", ")} are available from your next message.` : undefined;
}

export function selectDirectTools(tools: Iterable<ToolMetadata>, rules: DirectToolRules): ToolMetadata[] {
  return [...tools].filter((tool) => isDirectTool(tool, rules));
}

/**
 * Tool exposure, as Pi 1.x defines it (its docs/extensions.md, "Tool Exposure"): how the model and other tools reach
 * a tool. Older hosts ignore these fields (a tool is then what 1.x calls `direct`), so the adapter always sets them
 * and needs no version check; what it does only where they mean something, it does when the host reports them
 * (`pi.getAllTools()` gives each tool's `exposure` and `reachesTools` only on hosts that have them).
 *
 * - An MCP tool is `deferred`: callable from `codemode` scripts whether or not it is active, not declared to the
 *   model until ToolSearch loads it, and left out of the `codemode` description (which would otherwise list
 *   declarations of a thousand tools up to its inline budget, and change as servers connect). Scripts find it with
 *   `searchTools()`, `describeNamespace()`, `ALL_TOOLS`. A direct tool stays `direct`.
 * - Each server is a namespace (its name; the script identifier as an alias) with its `description` and
 *   instructions, which `describeNamespace()` returns.
 * - Where scripts can call tools (the host has codemode), a tool a server no longer offers is registered again as
 *   `hidden`: tools cannot be unregistered, and a deferred tool stays callable from scripts whether active or not.
 * - ToolSearch and McpCall are `model-only` (a script has nothing to load) and say which tools a call may reach.
 */

/** Pi 1.x's `ToolExposure`. */
export type ToolExposure = "direct" | "model-only" | "codemode" | "deferred" | "hidden";

/** Pi 1.x's `ToolNamespace`. */
export interface ToolNamespace {
  name: string;
  aliases?: readonly string[];
  description?: string;
  instructions?: string;
}

/** What a call may reach: every tool, or the words of its input that may name tools or namespaces. */
export type ToolReach = "all" | readonly string[];

/** The fields of Pi 1.x's `ToolDefinition` the adapter sets (declared here: the types it compiles with predate them). */
export interface ToolExposureFields {
  exposure?: ToolExposure;
  namespace?: ToolNamespace;
  reachesTools?: (input: Record<string, unknown>) => ToolReach;
  /** The JSON Schema of `structuredContent`: a codemode script's call resolves to that instead of the text. */
  outputSchema?: Record<string, unknown>;
}

/** A tool as `pi.getAllTools()` reports it on hosts with tool exposure. */
export interface ExposedToolInfo {
  name: string;
  exposure?: ToolExposure;
  reachesTools?: (input: Record<string, unknown>) => ToolReach;
}

/**
 * The name a `codemode` script calls a tool or namespace by, as Pi 1.x makes it: each character invalid in a
 * JavaScript identifier (a digit too, first) becomes `_`.
 */
export function scriptIdentifier(name: string): string {
  const identifier = name.replace(/[^A-Za-z0-9_$]/g, "_").replace(/^[0-9]/, "_");
  return identifier === "" ? "_" : identifier;
}

/** A server's namespace: what `describeNamespace()` answers about it (its configured `description`, its instructions). */
export function serverNamespace(server: string, about: { description?: string; instructions?: string }): ToolNamespace {
  const identifier = scriptIdentifier(server);
  return {
    name: server,
    ...(identifier !== server ? { aliases: [identifier] } : {}),
    ...(about.description ? { description: about.description } : {}),
    ...(about.instructions ? { instructions: about.instructions } : {}),
  };
}

/**
 * Whether a reach names something: every word may name a tool (`tools.github__create_issue`) or, by containing
 * it, its server's prefix (`tools["github__" + name]`), compared as script identifiers.
 */
export function reachNames(reach: ToolReach, toolName: string, serverPrefix: string | undefined): boolean {
  if (reach === "all") return true;
  const tool = scriptIdentifier(toolName);
  const prefix = serverPrefix ? scriptIdentifier(serverPrefix) : undefined;
  return reach.some((word) => {
    const identifier = scriptIdentifier(word);
    return identifier === tool || (prefix !== undefined && identifier.includes(prefix));
  });
}

/**
 * Pi's own `tool_search` when it would list the same tools as ToolSearch: it is active and every tool it can load
 * (`codemode`/`deferred`, not active) is an MCP tool of the adapter. Then it is the one to switch off, since
 * ToolSearch also knows servers not listed yet, their instructions and the words people use. While another
 * extension's tools need it, it stays.
 */
export function duplicateToolSearch(
  tools: readonly ExposedToolInfo[],
  active: readonly string[],
  ours: (name: string) => boolean,
): string | undefined {
  const toolSearch = tools.find((tool) => tool.name === BUILTIN_TOOL_SEARCH && tool.reachesTools);
  if (!toolSearch || !active.includes(BUILTIN_TOOL_SEARCH)) return undefined;
  const loadable = tools.filter((tool) => (tool.exposure === "deferred" || tool.exposure === "codemode") && !active.includes(tool.name));
  return loadable.every((tool) => ours(tool.name)) ? BUILTIN_TOOL_SEARCH : undefined;
}

/** Pi 1.x's built-in search tool. */
export const BUILTIN_TOOL_SEARCH = "tool_search";

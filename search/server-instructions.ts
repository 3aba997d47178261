/**
 * A server's `instructions` (from its `initialize` answer, kept in the metadata cache up to 1,000 characters) reach
 * the model without costing every request: in full in the ToolSearch answer that first loads one of the server's
 * tools (once per session), and, for a server with direct tools (which the model has without a search), cut to a
 * few hundred characters at the end of the description of its first direct tool.
 */
import { truncate } from "../util/text.ts";
import type { ServerInventory } from "../tool-metadata.ts";
import type { ToolMetadata } from "../types.ts";

/** The always-on form: what a direct tool's description carries of its server's instructions. */
export const DIRECT_INSTRUCTIONS_CHARS = 300;

/**
 * Lines for the ToolSearch answer: the instructions of the servers of `tools` not shown yet in this session
 * (`shown`, which the servers shown now are added to).
 */
export function instructionsToShow(
  tools: readonly ToolMetadata[],
  inventories: ReadonlyMap<string, Pick<ServerInventory, "instructions">>,
  shown: Set<string>,
): { lines: string[]; servers: string[] } {
  const lines: string[] = [];
  const servers: string[] = [];
  for (const server of new Set(tools.map((tool) => tool.serverName))) {
    const instructions = inventories.get(server)?.instructions;
    if (!instructions || shown.has(server)) continue;
    shown.add(server);
    servers.push(server);
    lines.push(`Instructions from MCP server "${server}" (shown once):`, instructions);
  }
  return { lines, servers };
}

/**
 * The direct tools with their server's instructions, cut to `DIRECT_INSTRUCTIONS_CHARS`, on the first direct tool
 * of each server. Returns the tools that changed (new objects: the metadata is shared with the cache's view).
 */
export function withDirectInstructions(
  direct: readonly ToolMetadata[],
  inventories: ReadonlyMap<string, Pick<ServerInventory, "instructions">>,
): ToolMetadata[] {
  const done = new Set<string>();
  const changed: ToolMetadata[] = [];
  for (const tool of direct) {
    const instructions = inventories.get(tool.serverName)?.instructions;
    if (!instructions || done.has(tool.serverName)) continue;
    done.add(tool.serverName);
    const cut = truncate(instructions, DIRECT_INSTRUCTIONS_CHARS);
    changed.push({ ...tool, description: `${tool.description}\n\nServer "${tool.serverName}" instructions: ${cut}` });
  }
  return changed;
}

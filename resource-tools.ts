/**
 * MCP resources offered to the model as tools: `get_<resource name>`, no arguments, reading calls `resources/read`.
 */
import type { McpResource } from "./types.ts";
import { shortHash } from "./types.ts";

export const RESOURCE_TOOL_PREFIX = "get_";

/** `Browser console logs` → `get_browser_console_logs`; a name with no letters or digits falls back to the URI. */
export function resourceToolName(resource: McpResource): string {
  const slug = slugify(resource.name) || slugify(resource.uri.replace(/^[a-z][a-z0-9+.-]*:\/*/i, ""));
  return `${RESOURCE_TOOL_PREFIX}${slug || `resource_${shortHash(resource.uri)}`}`;
}

/** The name pi-mcp-adapter 2.x gives the same resource tool (`read_<resource>`): its filters may use it. */
export function upstreamResourceToolName(requestName: string): string {
  return `read_${requestName.slice(RESOURCE_TOOL_PREFIX.length)}`;
}

export function resourceToolDescription(resource: McpResource): string {
  const read = `Read resource: ${resource.uri}`;
  return resource.description ? `${read}\n${resource.description}` : read;
}

function slugify(text: string): string {
  return text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "");
}

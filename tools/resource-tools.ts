/**
 * MCP resources offered to the model as tools: `get_<resource name>`, no arguments, reading calls `resources/read`.
 * A resource template (`note://{id}`) is a tool too: its parameters are the template's variables, and a call reads
 * the URI they make. Templates are RFC 6570: their variables are read here (tools are registered at startup, and the
 * MCP SDK is not loaded then); the SDK's `UriTemplate` expands them at the first call, levels 1 to 3.
 */
import { isViewMimeType } from "../apps.ts";
import type { McpResource, McpResourceTemplate, ToolMetadata } from "../types.ts";
import { shortHash } from "../tool-names.ts";

/** Every expression of a template (`{id}`, `{+path}`, `{?q,page}`): its operator, then its variable list. */
const EXPRESSION = /\{([+#./;?&]?)([^}]*)\}/g;
/** Variables of these expressions may be left out (`{?q}`, `{&page}`, `{#part}`): the others make the resource's address. */
const OPTIONAL_EXPRESSION = /\{[?&#]([^}]*)\}/g;

export const RESOURCE_TOOL_PREFIX = "get_";
const VIEW_SCHEME = "ui://";

/**
 * Is this resource a view (MCP Apps)? The spec's `ui://` scheme is the views' (whether a listed tool names it or not),
 * and so is their MIME type, however a server spaces or cases it. A view is HTML for the view host (apps/), which
 * reads it itself: as a tool it would only offer the model a page of markup next to the tool it belongs to. Pi's
 * built-in MCP client leaves the same resources out.
 */
export function isViewResource(uri: string, mimeType: unknown): boolean {
  if (uri.toLowerCase().startsWith(VIEW_SCHEME)) return true;
  return isViewMimeType(mimeType);
}

/** `Browser console logs` → `get_browser_console_logs`; a name with no letters or digits falls back to the URI. */
export function resourceToolName(resource: Pick<McpResource, "name" | "uri">): string {
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

export function templateToolDescription(template: McpResourceTemplate): string {
  const read = `Read resource: ${template.uriTemplate} (fill in the parameters)`;
  return template.description ? `${read}\n${template.description}` : read;
}

/** The tool's JSON Schema: a string per variable. Throws on a template that cannot be read. */
export function templateParameters(template: McpResourceTemplate): Record<string, unknown> {
  if (/[{}]/.test(template.uriTemplate.replace(EXPRESSION, ""))) throw new Error(`Unclosed or stray brace in ${template.uriTemplate}`);
  const names = [...new Set([...template.uriTemplate.matchAll(EXPRESSION)].flatMap((match) => variableNames(match[2]!)))];
  const optional = new Set([...template.uriTemplate.matchAll(OPTIONAL_EXPRESSION)].flatMap((match) => variableNames(match[1]!)));
  const properties = Object.fromEntries(
    names.map((name) => [name, { type: "string", description: `Fills {${name}} in ${template.uriTemplate}` }]),
  );
  return { type: "object", properties, required: names.filter((name) => !optional.has(name)) };
}

/** The URI a resource tool reads for these arguments (its template filled, or its resource's); none for other tools. */
export async function resourceUriOf(
  tool: Pick<ToolMetadata, "uriTemplate" | "resourceUri">,
  params: Record<string, unknown>,
): Promise<string | undefined> {
  return tool.uriTemplate ? expandTemplate(tool.uriTemplate, params) : tool.resourceUri;
}

/** The URI to read: the template filled with the call's arguments (numbers and booleans as text). */
export async function expandTemplate(uriTemplate: string, params: Record<string, unknown>): Promise<string> {
  const variables: Record<string, string> = {};
  for (const [name, value] of Object.entries(params)) {
    if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") variables[name] = String(value);
  }
  const { UriTemplate } = await import("@modelcontextprotocol/client");
  return new UriTemplate(uriTemplate).expand(variables);
}

/** `a,b*,c:3` → `a`, `b`, `c` (explode and prefix modifiers dropped). */
function variableNames(expression: string): string[] {
  return expression
    .split(",")
    .map((name) => name.replace(/[*]$|:\d+$/, "").trim())
    .filter(Boolean);
}

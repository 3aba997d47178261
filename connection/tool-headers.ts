/**
 * The HTTP headers a tool declares for its parameters (MCP 2026-07-28, SEP-2243): an input property marked
 * `"x-mcp-header": "Name"` is sent as the header `Mcp-Param-Name` too, so a gateway can route on it without reading
 * the body. The SDK sends them; a tool whose declarations break the rules must not be offered at all (the server
 * would refuse every call of it), so the listing drops it with the reason this module gives.
 *
 * The rules: the name is an HTTP token (RFC 9110), unique without regard to case; it marks a property of type string,
 * integer or boolean; and the property is reached from the root through `properties` alone. A mark anywhere else
 * (under `items`, `additionalProperties`, a combinator, a condition, a definition) makes the tool invalid.
 */
import { isJsonObject } from "../util/guards.ts";
import { DEFINITION_KEYWORDS, SCHEMA_ARRAY_KEYWORDS, SCHEMA_KEYWORDS, SCHEMA_MAP_KEYWORDS } from "../util/json-schema-keywords.ts";

const HEADER_KEY = "x-mcp-header";
const HTTP_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const HEADER_TYPES = new Set(["string", "integer", "boolean"]);
/** Whether a tool (whose declarations are valid) declares a header for one of its parameters. */
export function declaresHeaders(inputSchema: unknown): boolean {
  const properties = isJsonObject(inputSchema) && isJsonObject(inputSchema.properties) ? Object.values(inputSchema.properties) : [];
  return properties.some((property) => isJsonObject(property) && (HEADER_KEY in property || declaresHeaders(property)));
}

/** Why the tool's header declarations are invalid, or undefined when they are fine (or it has none). */
export function invalidHeaderDeclaration(inputSchema: unknown): string | undefined {
  const seen = new Map<string, string>();
  const visit = (node: unknown, path: string[], reachable: boolean): string | undefined => {
    if (!isJsonObject(node)) return undefined;
    if (HEADER_KEY in node) {
      const problem = declarationProblem(node, path, reachable, seen);
      if (problem) return problem;
    }
    if (isJsonObject(node.properties)) {
      for (const [key, child] of Object.entries(node.properties)) {
        const problem = visit(child, [...path, key], reachable);
        if (problem) return problem;
      }
    }
    // Every other subschema is reached through more than `properties`: a mark there is misplaced.
    for (const [keyword, value] of Object.entries(node)) {
      if (keyword === "properties") continue;
      for (const branch of subschemas(keyword, value)) {
        const problem = visit(branch, [...path, keyword], false);
        if (problem) return problem;
      }
    }
    return undefined;
  };
  return visit(inputSchema, [], true);
}

function declarationProblem(node: Record<string, unknown>, path: string[], reachable: boolean, seen: Map<string, string>) {
  const where = path.length > 0 ? path.join(".") : "the schema's root";
  if (!reachable || path.length === 0) return `${where}: "${HEADER_KEY}" is allowed only on a property reached through "properties"`;
  const name = node[HEADER_KEY];
  if (typeof name !== "string" || !HTTP_TOKEN.test(name)) return `${where}: "${HEADER_KEY}" must be an HTTP header name`;
  if (typeof node.type !== "string" || !HEADER_TYPES.has(node.type))
    return `${where}: "${HEADER_KEY}" is allowed only on a string, integer or boolean property`;
  const earlier = seen.get(name.toLowerCase());
  if (earlier !== undefined) return `${where}: the header "${name}" is declared twice (also as "${earlier}")`;
  seen.set(name.toLowerCase(), name);
  return undefined;
}

/** A keyword's subschemas: one schema, a list of them (`oneOf`, draft 7 `items`), or a map of them (`$defs`); none for other keywords. */
function subschemas(keyword: string, value: unknown): unknown[] {
  if (SCHEMA_ARRAY_KEYWORDS.has(keyword) || (keyword === "items" && Array.isArray(value))) return Array.isArray(value) ? value : [];
  if (!isJsonObject(value)) return [];
  if (SCHEMA_KEYWORDS.has(keyword)) return [value];
  return SCHEMA_MAP_KEYWORDS.has(keyword) || DEFINITION_KEYWORDS.has(keyword) ? Object.values(value) : [];
}

/**
 * What a Pi 1.x `codemode` script's call of an MCP tool resolves to. Pi hands a script a tool's `structuredContent`
 * when the tool declares an `outputSchema`, and its text otherwise (docs/codemode.md, "Call tools"). Its built-in MCP
 * client declares for every MCP tool the schema of the whole `CallToolResult` (content blocks as the server sent
 * them, `structuredContent`, `isError`), so scripts read structured results and see `isError` instead of failing.
 * A user coming from it keeps that: the adapter declares the same shape, with the server's own output schema in it.
 */

/** An MCP content block: scripts branch on `type` (`text`, `image`, `audio`, `resource_link`, `resource`). */
const CONTENT_BLOCK_SCHEMA = {
  type: "object",
  properties: { type: { type: "string" } },
  required: ["type"],
  additionalProperties: true,
};

const STRUCTURED_CONTENT_POINTER = "#/properties/structuredContent";

/** The `CallToolResult` a script receives, with `structuredContent` as the server declared it (any JSON value else). */
export function callToolResultSchema(outputSchema: Record<string, unknown> | undefined): Record<string, unknown> {
  return {
    type: "object",
    properties: {
      content: { type: "array", items: CONTENT_BLOCK_SCHEMA },
      structuredContent: outputSchema ? nestedSchema(outputSchema, STRUCTURED_CONTENT_POINTER) : {},
      isError: { type: "boolean" },
    },
    required: ["content"],
    // Newer protocol versions add fields.
    additionalProperties: true,
  };
}

/** Keywords whose values are data, not schemas: a `$ref` inside them is not a reference. */
const DATA_KEYWORDS = new Set(["const", "enum", "default", "examples"]);
/** Keywords whose values map names (data, whatever they are called) to schemas. */
const MAP_KEYWORDS = new Set(["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"]);

/**
 * `schema` placed at `pointer` inside another schema: its references to itself (`#`, `#/$defs/item`) would resolve
 * against the new root, so they are moved under `pointer`. References to other documents are left as they are.
 */
function nestedSchema(schema: unknown, pointer: string): unknown {
  if (Array.isArray(schema)) return schema.map((item) => nestedSchema(item, pointer));
  if (typeof schema !== "object" || schema === null) return schema;
  const moved: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "$ref" && typeof value === "string" && (value === "#" || value.startsWith("#/"))) {
      moved[key] = pointer + value.slice(1);
    } else if (DATA_KEYWORDS.has(key)) {
      moved[key] = value;
    } else if (MAP_KEYWORDS.has(key)) {
      moved[key] = mapEntries(value, pointer);
    } else {
      moved[key] = nestedSchema(value, pointer);
    }
  }
  return moved;
}

/** A map from names to schemas (`properties`): the names are data, each value a schema. */
function mapEntries(value: unknown, pointer: string): unknown {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([name, schema]) => [name, nestedSchema(schema, pointer)]));
}

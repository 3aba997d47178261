/**
 * Where a JSON Schema (2020-12 and draft 7) holds subschemas, by the shape of the keyword's value. Every walk over a
 * server's schemas (tools/json-schema.ts making them provider-safe, connection/tool-headers.ts checking header
 * declarations) must agree on where a subschema can be, so the keywords are named once, here.
 */

/** Keywords whose value is one subschema (draft 7 `items` may be an array of them too). */
export const SCHEMA_KEYWORDS = new Set([
  "items",
  "additionalItems",
  "contains",
  "not",
  "if",
  "then",
  "else",
  "propertyNames",
  "unevaluatedItems",
  "unevaluatedProperties",
  "additionalProperties",
]);
/** Keywords whose value is an array of subschemas. */
export const SCHEMA_ARRAY_KEYWORDS = new Set(["allOf", "anyOf", "oneOf", "prefixItems"]);
/** Keywords whose value maps names (or patterns) to subschemas. */
export const SCHEMA_MAP_KEYWORDS = new Set(["properties", "patternProperties", "dependentSchemas"]);
/** Keywords whose value maps names to subschemas reached only through references. */
export const DEFINITION_KEYWORDS = new Set(["$defs", "definitions"]);

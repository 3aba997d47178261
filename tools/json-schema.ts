/**
 * Turns an MCP tool's `inputSchema` into a schema every LLM provider accepts, and describes a schema's parameters
 * in one line for error messages.
 *
 * Why: providers differ. Anthropic keeps only `type`, `properties` and `required` at the root, so a top-level
 * `$defs` is dropped and every `$ref` into it dangles; OpenAI and Google reject `$ref`s they cannot follow; and an
 * MCP server may send no schema, a non-object one, or garbage. The rules (`toProviderSafeSchema`):
 *
 * 1. Anything that is not a JSON object becomes `{type: "object", properties: {}}`. The input is parsed JSON (a
 *    server's answer, the cache); a cyclic object (only a bug could make one) gives that empty schema too.
 * 2. Local `$ref`s (any JSON pointer: `#/$defs/x`, `#/definitions/x`, `#/properties/a`, `#`) are inlined; sibling
 *    keywords next to a `$ref` win over the target's. A reference met again inside its own expansion (recursion),
 *    nested deeper than `MAX_REF_DEPTH`, beyond `MAX_REF_EXPANSIONS` per schema, or that cannot be resolved
 *    (external URL, anchor) becomes a permissive stub: the target's `type` (if it has one) and a description.
 * 3. `$schema`, `$id`, `$defs`, `definitions`, `$anchor` are removed everywhere; boolean sub-schemas become
 *    objects (`true` → `{}`, `false` → `{not: {}}`), except `additionalProperties`, which stays boolean.
 * 4. The root is always `{type: "object", properties, required?, additionalProperties?, description?}`:
 *    - `anyOf`/`oneOf` of object schemas: merged; properties are the union (first definition wins), a property is
 *      required only when every variant requires it (the model may choose any variant); the root's own properties
 *      and required come first.
 *    - `allOf` of object schemas: merged; properties are the union, required the union.
 *    - a non-object root type (string, array, ...): an open object with no properties. MCP sends arguments as an
 *      object, so such a schema cannot be satisfied as written; the server stays the judge of what it accepts.
 *    - `required` keeps only names that are in `properties`.
 *    Nothing else at the root carries meaning, since Anthropic would drop it.
 */

import { isJsonObject } from "../util/guards.ts";
import { DEFINITION_KEYWORDS, SCHEMA_ARRAY_KEYWORDS, SCHEMA_KEYWORDS, SCHEMA_MAP_KEYWORDS } from "../util/json-schema-keywords.ts";
import { oneLine } from "../util/text.ts";

type JsonObject = Record<string, unknown>;

export const MAX_REF_DEPTH = 8;
export const MAX_REF_EXPANSIONS = 1000;

/** Keywords that only serve references or identify the document: meaningless once references are inlined. */
const DROPPED_KEYWORDS = new Set(["$schema", "$id", ...DEFINITION_KEYWORDS, "$anchor", "$dynamicAnchor"]);
const REF_KEYWORDS = ["$ref", "$dynamicRef", "$recursiveRef"] as const;

function emptyObjectSchema(): JsonObject {
  return { type: "object", properties: {} };
}

/** Never throws: see the module comment for the rules. */
export function toProviderSafeSchema(input: unknown): JsonObject {
  try {
    if (!isJsonObject(input)) return emptyObjectSchema();
    // The input is parsed JSON (a server's answer or the cache), so it needs no defensive copy: expanding builds
    // new schema objects and never changes the input (data such as enums is shared, and never changed either).
    const inliner = new RefInliner(input);
    const expanded = inliner.expand(input, ["#"]);
    return toObjectRoot(isJsonObject(expanded) ? expanded : {});
  } catch {
    // Only reachable on pathological input (e.g. nesting deep enough to exhaust the stack).
    return emptyObjectSchema();
  }
}

class RefInliner {
  private readonly document: JsonObject;
  private expansions = 0;

  constructor(document: JsonObject) {
    this.document = document;
  }

  /** `refStack`: the references being expanded around this node (the root counts as `#`). */
  expand(node: unknown, refStack: readonly string[]): unknown {
    if (node === true) return {};
    if (node === false) return { not: {} };
    if (!isJsonObject(node)) return node;
    const refKeyword = REF_KEYWORDS.find((keyword) => typeof node[keyword] === "string");
    if (refKeyword) return this.expandRef(node, node[refKeyword] as string, refStack);
    const out: JsonObject = {};
    for (const [key, value] of Object.entries(node)) {
      // A reference keyword without a string value is garbage: dropped rather than left to confuse a provider.
      if (DROPPED_KEYWORDS.has(key) || isRefKeyword(key)) continue;
      define(out, key, this.expandKeyword(key, value, refStack));
    }
    return out;
  }

  private expandKeyword(key: string, value: unknown, refStack: readonly string[]): unknown {
    if (key === "additionalProperties" && typeof value === "boolean") return value;
    // `items` as an array is the pre-2020 tuple form.
    if ((SCHEMA_ARRAY_KEYWORDS.has(key) || key === "items") && Array.isArray(value)) {
      return value.map((item) => this.expand(item, refStack));
    }
    if (SCHEMA_KEYWORDS.has(key)) return this.expand(value, refStack);
    if (SCHEMA_MAP_KEYWORDS.has(key) && isJsonObject(value)) {
      const map: JsonObject = {};
      for (const [name, schema] of Object.entries(value)) define(map, name, this.expand(schema, refStack));
      return map;
    }
    // enum, const, default, examples, description...: data, copied as is (it may even contain "$ref" keys).
    return value;
  }

  private expandRef(node: JsonObject, ref: string, refStack: readonly string[]): JsonObject {
    const siblings: JsonObject = {};
    for (const [key, value] of Object.entries(node)) {
      if (!isRefKeyword(key) && !DROPPED_KEYWORDS.has(key)) define(siblings, key, value);
    }
    const target = resolvePointer(this.document, ref);
    let base: JsonObject;
    if (target === undefined) {
      base = { description: `Unresolved schema reference ${ref}; any value is accepted here.` };
    } else if (refStack.includes(ref) || refStack.length > MAX_REF_DEPTH || this.expansions >= MAX_REF_EXPANSIONS) {
      base = recursionStub(target, ref);
    } else {
      this.expansions++;
      const expanded = this.expand(target, [...refStack, ref]);
      base = isJsonObject(expanded) ? expanded : {};
    }
    const out: JsonObject = { ...base };
    for (const [key, value] of Object.entries(siblings)) define(out, key, this.expandKeyword(key, value, refStack));
    return out;
  }
}

/** Assignment that also works for a key named `__proto__` (a property name a server may well use). */
function define(target: JsonObject, key: string, value: unknown): void {
  if (key === "__proto__") Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

function isRefKeyword(key: string): boolean {
  return (REF_KEYWORDS as readonly string[]).includes(key);
}

function recursionStub(target: unknown, ref: string): JsonObject {
  const stub: JsonObject = {};
  const type = isJsonObject(target) ? target.type : undefined;
  if (typeof type === "string" || Array.isArray(type)) stub.type = type;
  const description = isJsonObject(target) && typeof target.description === "string" ? `${target.description} ` : "";
  stub.description = `${description}(Recursive structure, same shape as ${ref}; not expanded further.)`;
  return stub;
}

/** RFC 6901 pointer in a URI fragment: `#`, `#/a/b~1c/0`. Anything else (URLs, anchors) is unresolvable. */
function resolvePointer(document: JsonObject, ref: string): unknown {
  if (!ref.startsWith("#")) return undefined;
  let fragment: string;
  try {
    fragment = decodeURIComponent(ref.slice(1));
  } catch {
    return undefined;
  }
  if (fragment === "") return document;
  if (!fragment.startsWith("/")) return undefined;
  let current: unknown = document;
  for (const rawToken of fragment.slice(1).split("/")) {
    const token = rawToken.replace(/~1/g, "/").replace(/~0/g, "~");
    if (Array.isArray(current) && /^\d+$/.test(token)) current = current[Number(token)];
    else if (isJsonObject(current) && Object.hasOwn(current, token)) current = current[token];
    else return undefined;
  }
  return current;
}

function toObjectRoot(root: JsonObject): JsonObject {
  const properties: JsonObject = {};
  const required: string[] = [];
  addObjectShape(root, properties, required);
  const variantsKey = Array.isArray(root.anyOf) ? "anyOf" : Array.isArray(root.oneOf) ? "oneOf" : undefined;
  if (variantsKey) mergeAlternatives((root[variantsKey] as unknown[]).filter(isJsonObject), properties, required);
  if (Array.isArray(root.allOf)) {
    for (const part of root.allOf.filter(isJsonObject)) addObjectShape(part, properties, required);
  }
  const out: JsonObject = { type: "object", properties };
  const requiredKnown = [...new Set(required)].filter((name) => Object.hasOwn(properties, name));
  if (requiredKnown.length > 0) out.required = requiredKnown;
  if (typeof root.additionalProperties === "boolean" && !variantsKey) out.additionalProperties = root.additionalProperties;
  if (typeof root.description === "string") out.description = root.description;
  return out;
}

/** Adds an object schema's properties (first definition wins) and required names; ignores non-object schemas. */
function addObjectShape(schema: JsonObject, properties: JsonObject, required: string[]): void {
  if (!describesObject(schema)) return;
  if (isJsonObject(schema.properties)) {
    for (const [name, value] of Object.entries(schema.properties)) {
      if (!Object.hasOwn(properties, name)) define(properties, name, isJsonObject(value) ? value : {});
    }
  }
  if (Array.isArray(schema.required)) {
    for (const name of schema.required) if (typeof name === "string") required.push(name);
  }
}

function mergeAlternatives(variants: JsonObject[], properties: JsonObject, required: string[]): void {
  const objectVariants = variants.filter(describesObject);
  if (objectVariants.length === 0) return;
  const requiredByVariant = objectVariants.map((variant) => {
    const names: string[] = [];
    addObjectShape(variant, properties, names);
    return new Set(names);
  });
  const [first, ...rest] = requiredByVariant;
  for (const name of first) if (rest.every((names) => names.has(name))) required.push(name);
}

/** An object schema, or one without a type that has object keywords (common in hand-written MCP schemas). */
function describesObject(schema: JsonObject): boolean {
  const type = schema.type;
  if (type === "object") return true;
  if (Array.isArray(type)) return type.includes("object");
  return type === undefined;
}

// ---------------------------------------------------------------------------------------------
// One-line parameter descriptions for error messages
// ---------------------------------------------------------------------------------------------

const MAX_PARAMETER_DESCRIPTION = 80;

/**
 * `Parameters: path (string, required) — File path; depth (number)` — what the model needs to retry a call that
 * failed on its arguments. Accepts any schema (it is made provider-safe first).
 */
export function formatParameters(schema: unknown): string {
  const safe = toProviderSafeSchema(schema);
  const properties = safe.properties as JsonObject;
  const required = new Set(Array.isArray(safe.required) ? safe.required : []);
  const parts = Object.entries(properties).map(([name, value]) => {
    const property = isJsonObject(value) ? value : {};
    const facts = [describeType(property), required.has(name) ? "required" : undefined].filter(Boolean);
    const description = typeof property.description === "string" ? oneLine(property.description, MAX_PARAMETER_DESCRIPTION, "excerpt") : "";
    return `${name}${facts.length ? ` (${facts.join(", ")})` : ""}${description ? ` — ${description}` : ""}`;
  });
  return parts.length === 0 ? "Parameters: none" : `Parameters: ${parts.join("; ")}`;
}

function describeType(schema: JsonObject): string | undefined {
  if (Array.isArray(schema.enum)) return `one of ${schema.enum.map((value) => JSON.stringify(value)).join("|")}`;
  if (schema.const !== undefined) return `exactly ${JSON.stringify(schema.const)}`;
  const type = schema.type;
  if (type === "array") {
    const itemType = isJsonObject(schema.items) ? describeType(schema.items) : undefined;
    return itemType ? `array of ${itemType}` : "array";
  }
  if (typeof type === "string") return type;
  if (Array.isArray(type)) return type.join("|");
  const variants = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined;
  if (variants) {
    const types = [...new Set(variants.filter(isJsonObject).map(describeType).filter(Boolean))];
    return types.length ? types.join("|") : undefined;
  }
  return undefined;
}

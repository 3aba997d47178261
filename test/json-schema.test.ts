import { describe, expect, it } from "vitest";
import { formatParameters, MAX_REF_EXPANSIONS, toProviderSafeSchema } from "../tools/json-schema.ts";

const EMPTY = { type: "object", properties: {} };

/** Every `$ref`-like key left anywhere in the output (data under enum/const/default excepted by the caller). */
function refsIn(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(refsIn);
  if (typeof value !== "object" || value === null) return [];
  return Object.entries(value).flatMap(([key, item]) => [...(key === "$ref" ? [String(item)] : []), ...refsIn(item)]);
}

describe("toProviderSafeSchema: root shape", () => {
  it.each([
    ["undefined", undefined],
    ["null", null],
    ["a string", "object"],
    ["a number", 42],
    ["an array", [{ type: "object" }]],
  ])("turns %s into an empty object schema", (_label, input) => {
    expect(toProviderSafeSchema(input)).toEqual(EMPTY);
  });

  it("gives properties to a schema that only names its dialect (real gitlab server)", () => {
    expect(toProviderSafeSchema({ $schema: "http://json-schema.org/draft-07/schema#" })).toEqual(EMPTY);
  });

  it("keeps descriptions, enums, defaults, required and additionalProperties of an ordinary schema", () => {
    const input = {
      type: "object",
      properties: {
        mode: { type: "string", enum: ["a", "b"], default: "a", description: "Mode" },
        depth: { type: "integer", minimum: 0 },
      },
      required: ["mode"],
      additionalProperties: false,
      $schema: "http://json-schema.org/draft-07/schema#",
    };
    const { $schema: _dropped, ...expected } = input;
    expect(toProviderSafeSchema(input)).toEqual(expected);
  });

  it("does not change its input", () => {
    const input = { type: "object", properties: { a: { $ref: "#/$defs/A" } }, $defs: { A: { type: "string" } } };
    const copy = structuredClone(input);
    toProviderSafeSchema(input);
    expect(input).toEqual(copy);
  });

  it("keeps only required names that are properties", () => {
    const out = toProviderSafeSchema({ type: "object", properties: { a: {} }, required: ["a", "ghost", 7, "a"] });
    expect(out.required).toEqual(["a"]);
  });

  it("replaces a non-object properties value", () => {
    expect(toProviderSafeSchema({ type: "object", properties: ["a"] })).toEqual(EMPTY);
  });

  it("turns a non-object root type into an open object", () => {
    expect(toProviderSafeSchema({ type: "string", minLength: 1 })).toEqual(EMPTY);
    expect(toProviderSafeSchema({ type: "array", items: { type: "string" } })).toEqual(EMPTY);
  });

  it("accepts a root type list that includes object", () => {
    const out = toProviderSafeSchema({ type: ["object", "null"], properties: { a: { type: "string" } } });
    expect(out).toEqual({ type: "object", properties: { a: { type: "string" } } });
  });

  it("merges a root anyOf: union of properties, required only when every variant requires it", () => {
    const out = toProviderSafeSchema({
      properties: { common: { type: "string" } },
      required: ["common"],
      anyOf: [
        { type: "object", properties: { id: { type: "string" }, kind: { const: "id" } }, required: ["id", "kind"] },
        { type: "object", properties: { name: { type: "string" }, kind: { const: "name" } }, required: ["name", "kind"] },
        { type: "string" },
      ],
    });
    expect(out.type).toBe("object");
    expect(Object.keys(out.properties as object)).toEqual(["common", "id", "kind", "name"]);
    expect(out.required).toEqual(["common", "kind"]);
    expect(out).not.toHaveProperty("anyOf");
  });

  it("merges a root oneOf reached through a $ref", () => {
    const out = toProviderSafeSchema({
      $ref: "#/$defs/Query",
      $defs: {
        Query: { oneOf: [{ $ref: "#/$defs/ById" }, { type: "object", properties: { q: { type: "string" } } }] },
        ById: { type: "object", properties: { id: { type: "number" } }, required: ["id"] },
      },
    });
    expect(out).toEqual({ type: "object", properties: { id: { type: "number" }, q: { type: "string" } } });
  });

  it("merges a root allOf: union of properties and of required", () => {
    const out = toProviderSafeSchema({
      allOf: [
        { type: "object", properties: { a: { type: "string" } }, required: ["a"] },
        { type: "object", properties: { b: { type: "number" } }, required: ["b"] },
      ],
    });
    expect(out).toEqual({ type: "object", properties: { a: { type: "string" }, b: { type: "number" } }, required: ["a", "b"] });
  });
});

describe("toProviderSafeSchema: references", () => {
  it("inlines #/$defs and #/definitions references and drops the definitions", () => {
    const out = toProviderSafeSchema({
      type: "object",
      properties: { a: { $ref: "#/$defs/A" }, b: { $ref: "#/definitions/B" } },
      $defs: { A: { type: "string", description: "An A" } },
      definitions: { B: { type: "array", items: { $ref: "#/$defs/A" } } },
    });
    expect(out).toEqual({
      type: "object",
      properties: {
        a: { type: "string", description: "An A" },
        b: { type: "array", items: { type: "string", description: "An A" } },
      },
    });
  });

  it("follows other JSON pointers, with ~0 ~1 and percent escapes", () => {
    const out = toProviderSafeSchema({
      type: "object",
      properties: {
        first: { type: "object", properties: { "a/b": { type: "boolean" }, "c~d": { type: "integer" } } },
        second: { $ref: "#/properties/first/properties/a~1b" },
        third: { $ref: "#/properties/first/properties/c~0d" },
        fourth: { $ref: "#/properties/first/properties/a%7E1b" },
      },
    });
    const properties = out.properties as Record<string, unknown>;
    expect(properties.second).toEqual({ type: "boolean" });
    expect(properties.third).toEqual({ type: "integer" });
    expect(properties.fourth).toEqual({ type: "boolean" });
  });

  it("lets keywords beside a $ref win over the target's", () => {
    const out = toProviderSafeSchema({
      type: "object",
      properties: { a: { $ref: "#/$defs/A", description: "Local words" } },
      $defs: { A: { type: "string", description: "Shared words" } },
    });
    expect((out.properties as Record<string, unknown>).a).toEqual({ type: "string", description: "Local words" });
  });

  it("bounds a self-recursive definition with a described stub", () => {
    const out = toProviderSafeSchema({
      type: "object",
      properties: { tree: { $ref: "#/$defs/Node" } },
      $defs: {
        Node: {
          type: "object",
          description: "A node",
          properties: { value: { type: "string" }, children: { type: "array", items: { $ref: "#/$defs/Node" } } },
        },
      },
    });
    const tree = (out.properties as Record<string, any>).tree;
    expect(tree.properties.value).toEqual({ type: "string" });
    const stub = tree.properties.children.items;
    expect(stub.type).toBe("object");
    expect(stub.description).toMatch(/A node.*Recursive structure.*#\/\$defs\/Node/);
    expect(stub.properties).toBeUndefined();
    expect(refsIn(out)).toEqual([]);
  });

  it("bounds mutual recursion and recursion into the root (#)", () => {
    const out = toProviderSafeSchema({
      type: "object",
      properties: { a: { $ref: "#/$defs/A" }, again: { $ref: "#" } },
      $defs: {
        A: { type: "object", properties: { b: { $ref: "#/$defs/B" } } },
        B: { type: "object", properties: { a: { $ref: "#/$defs/A" } } },
      },
    });
    expect(refsIn(out)).toEqual([]);
    const properties = out.properties as Record<string, any>;
    expect(properties.a.properties.b.properties.a.description).toMatch(/Recursive/);
    expect(properties.again.type).toBe("object");
    expect(properties.again.description).toMatch(/Recursive structure, same shape as #/);
    expect(() => JSON.stringify(out)).not.toThrow();
  });

  it("stays bounded when references fan out (no exponential blow-up)", () => {
    // Each level refers twice to the next: 2^30 paths if inlined naively.
    const $defs: Record<string, unknown> = { L30: { type: "string" } };
    for (let level = 29; level >= 0; level--) {
      $defs[`L${level}`] = {
        type: "object",
        properties: { left: { $ref: `#/$defs/L${level + 1}` }, right: { $ref: `#/$defs/L${level + 1}` } },
      };
    }
    const out = toProviderSafeSchema({ type: "object", properties: { root: { $ref: "#/$defs/L0" } }, $defs });
    expect(refsIn(out)).toEqual([]);
    // Each expansion copies one small definition: the size is bounded by the expansion budget.
    expect(JSON.stringify(out).length).toBeLessThan(MAX_REF_EXPANSIONS * 400);
  });

  it("replaces unresolvable references (external, anchors, missing) by permissive stubs", () => {
    const out = toProviderSafeSchema({
      type: "object",
      properties: {
        external: { $ref: "https://example.com/schema.json" },
        anchor: { $ref: "#thing" },
        missing: { $ref: "#/$defs/Nope" },
        badEscape: { $ref: "#/%E0%A4%A" },
      },
    });
    expect(refsIn(out)).toEqual([]);
    for (const value of Object.values(out.properties as Record<string, any>)) {
      expect(value.description).toMatch(/Unresolved schema reference/);
      expect(value.type).toBeUndefined();
    }
  });

  it("leaves data that looks like a reference alone (enum, const, default, examples)", () => {
    const out = toProviderSafeSchema({
      type: "object",
      properties: { a: { type: "object", default: { $ref: "#/nowhere" }, examples: [{ $defs: 1 }] } },
    });
    expect((out.properties as Record<string, any>).a).toEqual({
      type: "object",
      default: { $ref: "#/nowhere" },
      examples: [{ $defs: 1 }],
    });
  });

  it("keeps properties literally named like keywords or like __proto__", () => {
    const out = toProviderSafeSchema({ type: "object", properties: { $defs: { type: "string" }, $ref: { type: "number" } } });
    expect(out.properties).toEqual({ $defs: { type: "string" }, $ref: { type: "number" } });
    const proto = toProviderSafeSchema(
      JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"}},"required":["__proto__"]}'),
    );
    expect(JSON.stringify(proto)).toBe('{"type":"object","properties":{"__proto__":{"type":"string"}},"required":["__proto__"]}');
  });

  it("turns boolean sub-schemas into objects but keeps boolean additionalProperties", () => {
    const out = toProviderSafeSchema({
      type: "object",
      properties: { anything: true, nothing: false, map: { type: "object", additionalProperties: true } },
    });
    expect(out.properties).toEqual({
      anything: {},
      nothing: { not: {} },
      map: { type: "object", additionalProperties: true },
    });
  });
});

describe("toProviderSafeSchema: garbage never throws", () => {
  // Inputs are parsed JSON (a server's answer, the cache): no BigInt or functions can occur, cycles only by mistake.
  it("survives cycles, deep nesting and odd keyword values", () => {
    const cyclic: Record<string, unknown> = { type: "object" };
    cyclic.properties = { self: cyclic };
    let deep: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < 20_000; i++) deep = { type: "object", properties: { x: deep } };
    const inputs: unknown[] = [
      cyclic,
      deep,
      { type: "object", properties: { a: { $ref: 12 } }, required: "a", anyOf: "x", allOf: [null, 3] },
      { type: "object", properties: { a: { items: [true, false, { $ref: "#" }] } } },
    ];
    for (const input of inputs) {
      const out = toProviderSafeSchema(input);
      expect(out.type).toBe("object");
      expect(typeof out.properties).toBe("object");
      expect(refsIn(out)).toEqual([]);
      expect(() => JSON.stringify(out)).not.toThrow();
    }
  });
});

describe("formatParameters", () => {
  it("lists names, types, required and short descriptions", () => {
    const text = formatParameters({
      type: "object",
      properties: {
        path: { type: "string", description: "File path" },
        depth: { type: "number" },
        mode: { enum: ["fast", "slow"] },
        tags: { type: "array", items: { type: "string" } },
        id: { anyOf: [{ type: "string" }, { type: "number" }] },
        note: { type: "string", description: `${"long ".repeat(40)}end` },
      },
      required: ["path"],
    });
    expect(text).toMatch(/^Parameters: path \(string, required\) — File path; depth \(number\); /);
    expect(text).toContain('mode (one of "fast"|"slow")');
    expect(text).toContain("tags (array of string)");
    expect(text).toContain("id (string|number)");
    expect(text).toMatch(/note \(string\) — long long .*…$/);
    expect(text).not.toContain("end");
  });

  it("resolves references and says when there are no parameters", () => {
    expect(formatParameters({ type: "object", properties: { a: { $ref: "#/$defs/A" } }, $defs: { A: { type: "boolean" } } })).toBe(
      "Parameters: a (boolean)",
    );
    expect(formatParameters(undefined)).toBe("Parameters: none");
  });
});

/** SEP-2243's rules for the HTTP headers a tool declares (`x-mcp-header`), as connection/tool-headers.ts checks them. */
import { describe, expect, it } from "vitest";
import { invalidHeaderDeclaration } from "../connection/tool-headers.ts";

const object = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ type: "object", properties, ...extra });

describe("a tool's header declarations", () => {
  it("are fine on string, integer and boolean properties reached through properties, at any depth, and absent", () => {
    expect(invalidHeaderDeclaration(object({ region: { type: "string", "x-mcp-header": "Region" } }))).toBeUndefined();
    const nested = object({
      target: object({ zone: { type: "integer", "x-mcp-header": "Zone" }, dry: { type: "boolean", "x-mcp-header": "Dry-Run" } }),
    });
    expect(invalidHeaderDeclaration(nested)).toBeUndefined();
    expect(invalidHeaderDeclaration(object({ plain: { type: "string" } }))).toBeUndefined();
    expect(invalidHeaderDeclaration(undefined)).toBeUndefined();
  });

  it("are refused on a property of another type (number included), or on the root", () => {
    expect(invalidHeaderDeclaration(object({ size: { type: "number", "x-mcp-header": "Size" } }))).toMatch(
      /^size: .*string, integer or boolean/,
    );
    expect(invalidHeaderDeclaration(object({ tags: { type: "array", "x-mcp-header": "Tags" } }))).toMatch(/^tags: /);
    expect(invalidHeaderDeclaration({ ...object({}), "x-mcp-header": "Root" })).toMatch(/^the schema's root: /);
  });

  it("are refused when the name is no HTTP token, or is declared twice without regard to case", () => {
    expect(invalidHeaderDeclaration(object({ a: { type: "string", "x-mcp-header": "Has Space" } }))).toMatch(/must be an HTTP header name/);
    expect(invalidHeaderDeclaration(object({ a: { type: "string", "x-mcp-header": "" } }))).toMatch(/must be an HTTP header name/);
    const twice = object({ a: { type: "string", "x-mcp-header": "Region" }, b: { type: "string", "x-mcp-header": "region" } });
    expect(invalidHeaderDeclaration(twice)).toBe('b: the header "region" is declared twice (also as "Region")');
  });

  it("are refused anywhere properties alone do not reach: items, combinators, conditions, definitions, additionalProperties", () => {
    const marked = { type: "string", "x-mcp-header": "Hidden" };
    for (const schema of [
      object({ list: { type: "array", items: marked } }),
      object({}, { anyOf: [object({ a: marked })] }),
      object({}, { if: object({ a: marked }) }),
      object({}, { $defs: { thing: marked } }),
      object({}, { additionalProperties: marked }),
      object({}, { patternProperties: { "^x": marked } }),
      object({ list: { type: "array", items: [{ type: "string" }], additionalItems: marked } }),
    ]) {
      expect(invalidHeaderDeclaration(schema), JSON.stringify(schema)).toMatch(/allowed only on a property reached through "properties"/);
    }
  });
});

/**
 * The output schema the adapter's MCP tools declare on Pi 1.x: the `CallToolResult` a codemode script receives, with
 * the server's own output schema as `structuredContent`. Checked with a real JSON Schema validator (Ajv, which the
 * MCP SDK validates with): references inside the server's schema still resolve once it is nested.
 */
import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { callToolResultSchema } from "../host.ts";

const ajv = new Ajv({ strict: false });

/** A server's output schema that refers to itself: a tree of named nodes, its node type in `$defs`. */
const TREE = {
  type: "object",
  properties: { root: { $ref: "#/$defs/node" } },
  required: ["root"],
  $defs: {
    node: {
      type: "object",
      properties: { name: { type: "string" }, children: { type: "array", items: { $ref: "#/$defs/node" } } },
      required: ["name"],
    },
  },
};

describe("the CallToolResult schema of an MCP tool", () => {
  it("accepts what a server answers, and the server's structured content only in its declared shape", () => {
    const valid = ajv.compile(callToolResultSchema(TREE));
    const tree = { root: { name: "a", children: [{ name: "b", children: [] }] } };
    expect(valid({ content: [{ type: "text", text: "a tree" }], structuredContent: tree })).toBe(true);
    expect(valid({ content: [], structuredContent: { root: { name: "a", children: [{ children: [] }] } } })).toBe(false);
    expect(valid({ content: [{ type: "text", text: "no" }], isError: true })).toBe(true);
    expect(valid({ structuredContent: tree })).toBe(false); // content is always there
  });

  it("moves the nested schema's own references, and nothing that only looks like one", () => {
    const schema = {
      type: "object",
      properties: {
        self: { $ref: "#" },
        elsewhere: { $ref: "https://example.com/schema.json#/x" },
        $ref: { type: "string", const: "#/not/a/reference", default: { $ref: "#/data" } },
      },
    };
    const nested = callToolResultSchema(schema) as { properties: { structuredContent: typeof schema } };
    expect(nested.properties.structuredContent.properties).toEqual({
      self: { $ref: "#/properties/structuredContent" },
      elsewhere: { $ref: "https://example.com/schema.json#/x" },
      $ref: { type: "string", const: "#/not/a/reference", default: { $ref: "#/data" } },
    });
  });

  it("takes any structured content from a tool that declares no output schema", () => {
    const valid = ajv.compile(callToolResultSchema(undefined));
    expect(valid({ content: [], structuredContent: [1, "two"] })).toBe(true);
    expect(valid({ content: [{ text: "a block without a type" }] })).toBe(false);
  });
});

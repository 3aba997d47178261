/** Where a server's instructions reach the model: once in ToolSearch's answer, and cut short on its first direct tool. */
import { describe, expect, it } from "vitest";
import { DIRECT_INSTRUCTIONS_CHARS, instructionsToShow, withDirectInstructions } from "../search/server-instructions.ts";
import type { ToolMetadata } from "../types.ts";

const tool = (serverName: string, name: string): ToolMetadata => ({
  name,
  serverName,
  originalName: name,
  description: `does ${name}`,
  inputSchema: {},
});
const inventories = new Map([
  ["fx", { instructions: "Ask for note 1 first." }],
  ["long", { instructions: "y".repeat(1_000) }],
  ["quiet", {}],
]);

describe("server instructions", () => {
  it("are shown once per server, for the servers of the tools loaded, and the servers shown are recorded", () => {
    const shown = new Set<string>();
    const first = instructionsToShow([tool("fx", "a"), tool("fx", "b"), tool("quiet", "c")], inventories, shown);
    expect(first).toEqual({ lines: ['Instructions from MCP server "fx" (shown once):', "Ask for note 1 first."], servers: ["fx"] });
    expect(instructionsToShow([tool("fx", "a")], inventories, shown)).toEqual({ lines: [], servers: [] });
    expect([...shown]).toEqual(["fx"]);
  });

  it("ride on the first direct tool of each server, cut to the always-on bound", () => {
    const changed = withDirectInstructions([tool("long", "a"), tool("long", "b"), tool("quiet", "c"), tool("fx", "d")], inventories);
    expect(changed.map((item) => item.name)).toEqual(["a", "d"]);
    expect(changed[0]!.description).toBe(`does a\n\nServer "long" instructions: ${"y".repeat(DIRECT_INSTRUCTIONS_CHARS - 1)}…`);
    expect(changed[1]!.description).toBe('does d\n\nServer "fx" instructions: Ask for note 1 first.');
  });
});

import { describe, expect, it } from "vitest";
import { shareSlots } from "../search/slots.ts";
import { buildSearchIndex } from "../search/tool-index.ts";
import type { ToolMetadata } from "../types.ts";

describe("shareSlots", () => {
  // Intents: [travel, weather]. Four travel tools score above the one weather tool.
  const candidates = [
    { score: 10, serves: [0.8, 0] },
    { score: 9, serves: [0.8, 0] },
    { score: 8, serves: [0.8, 0] },
    { score: 7, serves: [0.5, 0] },
    { score: 6, serves: [0, 1] },
    { score: 3, serves: [0, 0] },
  ];

  it("keeps the best tool first, gives the intent it leaves out the next slot, and the rest in score order", () => {
    expect(shareSlots(candidates, [1, 1], 3)).toEqual([0, 4, 1, 2, 3, 5]);
  });

  it("weighs a low score against the intent it serves", () => {
    const weak = candidates.map((candidate, i) => (i === 4 ? { ...candidate, score: 1 } : candidate));
    expect(shareSlots(weak, [1, 1], 3)).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it("changes nothing when no candidate serves an unserved intent", () => {
    const travelOnly = candidates.map((candidate) => ({ ...candidate, serves: [candidate.serves[0], 0] }));
    expect(shareSlots(travelOnly, [1, 1], 5)).toEqual([0, 1, 2, 3, 4, 5]);
  });
});

describe("a request naming two intents", () => {
  const tool = (originalName: string, description: string): ToolMetadata => ({
    name: `demo__${originalName}`,
    serverName: "demo",
    originalName,
    description,
    inputSchema: {},
  });
  const travel = ["Hotels", "Flights", "Tours", "Resorts", "Itineraries", "Cruises"].map((name) =>
    tool(name, `Plan a trip to Lisbon: ${name.toLowerCase()}, travel deals and booking in Lisbon.`),
  );
  const index = buildSearchIndex([...travel, tool("SkyCast", "Provides the latest weather information.")]);

  it("finds a tool for each, though one intent's tools match more of its words", () => {
    const top = index.search("plan a trip to Lisbon with hotels and flights, and will it rain there", 5);
    expect(top.map((hit) => hit.tool.originalName)).toContain("SkyCast");
  });
});

import { describe, expect, it } from "vitest";
import { contentWords, intentTermsOf, isIntentTerm } from "../search/intents.ts";
import { buildSearchIndex } from "../search/tool-index.ts";
import { analyzeQuery } from "../search/query.ts";
import type { ToolMetadata } from "../types.ts";

const intentsOf = (text: string) => Object.fromEntries(intentTermsOf(contentWords(text)));

function tool(originalName: string, description: string): ToolMetadata {
  return { name: `demo__${originalName}`, serverName: "demo", originalName, description, inputSchema: {} };
}

describe("intents", () => {
  it("reads the intents a text names, with how many cues name each", () => {
    expect(intentsOf("Real-time quotes for stocks and cryptocurrencies")).toEqual({ "#markets": 2, "#prices": 1 });
    expect(intentsOf("Will it rain in Lisbon tomorrow?")).toEqual({ "#weather": 1 });
    expect(intentsOf("rename a variable")).toEqual({});
  });

  it("counts a phrase once, not also as its words", () => {
    expect(intentsOf("the stock market today")).toEqual({ "#markets": 1 });
  });

  it("matches whole words, not stems: news is not new, marketing is not a market", () => {
    expect(intentsOf("create a new branch")).toEqual({});
    expect(intentsOf("a marketing campaign")).toEqual({ "#marketing": 2 });
  });

  it("names intents with terms no word can spell", () => {
    for (const term of intentTermsOf(contentWords("weather news and flights")).keys()) expect(isIntentTerm(term)).toBe(true);
    expect(isIntentTerm("weather")).toBe(false);
  });
});

describe("a request's intents", () => {
  const terms = ["#weather", "forecast", "oslo"];
  const vocabulary = {
    terms,
    idOf: (term: string) => (terms.includes(term) ? terms.indexOf(term) : undefined),
    relativesOf: () => [],
  };
  const intentWeight = (request: string) => analyzeQuery(request, vocabulary, () => 1).get(0);

  it("count for more when the catalog lacks the request's other words", () => {
    expect(intentWeight("forecast for oslo")).toBeGreaterThan(0);
    expect(intentWeight("forecast for bergen")).toBeGreaterThan(intentWeight("forecast for oslo")!);
  });
});

describe("search by intent", () => {
  const tools = [
    tool("FinanceDesk", "Real-time insights on stocks, options and cryptocurrencies."),
    tool("PetrolWatch", "Average daily petrol price for any region."),
    tool("SkyCast", "Provides the latest weather information."),
  ];
  const index = buildSearchIndex(tools);
  const top = (query: string) => index.search(query, 3).map((hit) => hit.tool.originalName);

  it("finds a tool that shares no word with the request but serves the same intent", () => {
    expect(top("is bitcoin going up")).toEqual(["FinanceDesk"]);
    expect(top("will it snow in Oslo")).toEqual(["SkyCast"]);
  });

  it("still puts a tool the request's own words name first", () => {
    expect(top("petrol price of ethereum")[0]).toBe("PetrolWatch");
  });

  it("takes a tool's name as surer evidence of its intent than its description", () => {
    const named = buildSearchIndex([tool("SkyCast", "Weather information."), tool("WeatherDesk", "Information.")]);
    expect(named.search("will it snow in Oslo", 2).map((hit) => hit.tool.originalName)).toEqual(["WeatherDesk", "SkyCast"]);
  });

  it("never corrects a misspelt word to an intent", () => {
    // "weathr" is one letter from the weather intent's term, but only words are corrections.
    expect(top("marketz")).toEqual([]);
  });
});

import { describe, expect, it } from "vitest";
import { collapseWhitespace, compareStrings, firstItems, oneLine, truncate } from "../util/text.ts";

describe("oneLine", () => {
  it("summary: the first line only, cut at a word boundary without trailing punctuation", () => {
    expect(oneLine("  Reads a file.\nSecond line that is not shown", 40, "summary")).toBe("Reads a file.");
    expect(oneLine("Reads the whole file, then writes it back", 24, "summary")).toBe("Reads the whole file…");
    expect(oneLine("Reads  a\tfile", 40, "summary")).toBe("Reads a file");
  });

  it("summary: a text with no space in its first half is cut at the limit", () => {
    expect(oneLine("abcdefghijklmnopqrstuvwxyz and more", 10, "summary")).toBe("abcdefghi…");
  });

  it("excerpt: every line joined, cut exactly at the limit", () => {
    expect(oneLine("HTTP 500\n  upstream\tfailed ", 40, "excerpt")).toBe("HTTP 500 upstream failed");
    expect(oneLine("first line\nsecond line", 15, "excerpt")).toBe("first line sec…");
  });

  it("never returns more than maxChars characters", () => {
    const text = "word ".repeat(100);
    for (const rule of ["summary", "excerpt"] as const) expect(oneLine(text, 33, rule).length).toBeLessThanOrEqual(33);
  });
});

describe("firstItems", () => {
  it("lists every item that fits, and the first ones with an ellipsis when there are more", () => {
    expect(firstItems(["a", "b"], 2)).toBe("a, b");
    expect(firstItems(["a", "b", "c"], 2)).toBe("a, b, …");
    expect(firstItems([], 2)).toBe("");
  });
});

describe("truncate", () => {
  it("keeps a text that fits, and cuts a longer one to maxChars with an ellipsis", () => {
    expect(truncate("12345", 5)).toBe("12345");
    expect(truncate("123456", 5)).toBe("1234…");
  });
});

describe("collapseWhitespace", () => {
  it("makes every run of whitespace one space and trims both ends", () => {
    expect(collapseWhitespace("\n a \r\n\t b  ")).toBe("a b");
  });
});

describe("compareStrings", () => {
  it("orders by code unit, whatever the locale: upper case before lower, ä after z", () => {
    expect(["b", "ä", "a", "Z", "z"].sort(compareStrings)).toEqual(["Z", "a", "b", "z", "ä"]);
    expect(compareStrings("same", "same")).toBe(0);
  });
});

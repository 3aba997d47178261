import { describe, expect, it } from "vitest";
import { contentWords } from "../search/intents.ts";
import { termsOf } from "../search/words.ts";
import { IntList, TermReader } from "../search/term-reader.ts";

const TEXTS = [
  "Take a screenshot of the page",
  "ghSearchRepos HTTPServer r2_put_object",
  "Café Ünïcödé 東京 タワー привет мир",
  "Search the WEB, then search the web again",
  `web ${"x".repeat(41)} search`,
  "",
];

function read(reader: TermReader, text: string, words?: string[]): string[] {
  const ids = new IntList();
  reader.appendTermIds(text, ids, words);
  return [...ids.toInt32Array()].map((id) => reader.vocabulary().terms[id]);
}

describe("TermReader", () => {
  it("reads the terms of a text, long words left out", () => {
    const reader = new TermReader();
    for (const text of TEXTS) {
      expect(read(reader, text)).toEqual(termsOf(text).filter((term) => term.length <= 40));
    }
  });

  it("hands out the words it read, as contentWords splits them, seen before or not", () => {
    const reader = new TermReader();
    for (const text of [...TEXTS, ...TEXTS]) {
      const words: string[] = [];
      read(reader, text, words);
      expect(words).toEqual(contentWords(text));
    }
  });

  it("reads the same terms whether it hands out words or not", () => {
    const withWords = new TermReader();
    const without = new TermReader();
    for (const text of TEXTS) expect(read(withWords, text, [])).toEqual(read(without, text));
  });
});

import { describe, expect, it } from "vitest";
import { familyKey, splitWords, termOf } from "../search/words.ts";
import { synonymsOf } from "../search/synonyms.ts";
import { analyzeQuery } from "../search/query.ts";

describe("splitWords", () => {
  it("splits identifiers in every naming style", () => {
    expect(splitWords("ghSearchRepos")).toEqual(["gh", "search", "repos"]);
    expect(splitWords("HTTPServer XMLHttpRequest")).toEqual(["http", "server", "xml", "http", "request"]);
    expect(splitWords("API-get-user")).toEqual(["api", "get", "user"]);
    expect(splitWords("chrome_devtools__take_screenshot")).toEqual(["chrome", "devtools", "take", "screenshot"]);
    expect(splitWords("wrangler.toml/path")).toEqual(["wrangler", "toml", "path"]);
  });

  it("keeps letters and digits together, as products name themselves", () => {
    expect(splitWords("r2_put_object d1Query o200k")).toEqual(["r2", "put", "object", "d1", "query", "o200k"]);
  });

  it("drops accents, keeps other scripts, and ignores symbols and emoji", () => {
    expect(splitWords("Café Ünïcödé")).toEqual(["cafe", "unicode"]);
    expect(splitWords("東京 タワー привет, 🎯 мир!")).toEqual(["東京", "タワー", "привет", "мир"]);
    expect(splitWords("(.*+?[{^$|\\")).toEqual([]);
    expect(splitWords("")).toEqual([]);
  });
});

describe("terms", () => {
  it("stems words and drops stop words", () => {
    expect(termOf("screenshots")).toBe(termOf("screenshot"));
    expect(termOf("deploying")).toBe(termOf("deploy"));
    expect(termOf("please")).toBeUndefined();
    expect(termOf("the")).toBeUndefined();
    expect(termOf("r2")).toBe("r2");
  });

  it("meets British and American spellings on one term, short words left as they are", () => {
    const pairs = [
      ["organise", "organize"],
      ["analysed", "analyzed"],
      ["colour", "color"],
      ["behaviour", "behavior"],
      ["centre", "center"],
    ];
    for (const [british, american] of pairs) expect(termOf(british)).toBe(termOf(american));
    expect(termOf("hour")).toBe("hour");
    expect(termOf("rise")).toBe("rise");
  });

  it("keys word families that stems leave apart, not short stems", () => {
    const families = [
      ["creation", "create"],
      ["modification", "modify"],
      ["description", "describe"],
      ["summary", "summarize"],
      ["deployment", "deploy"],
    ];
    for (const [a, b] of families) expect(familyKey(termOf(a)!)).toBe(familyKey(termOf(b)!));
    expect(familyKey(termOf("option")!)).toBeUndefined();
    expect(familyKey(termOf("public")!)).not.toBe(familyKey(termOf("publish")!));
  });

  it("knows abbreviations at nearly full weight and related words at half weight", () => {
    expect(synonymsOf(termOf("repo")!).get(termOf("repository")!)).toBeGreaterThan(0.8);
    expect(synonymsOf(termOf("pr")!).get(termOf("pull")!)).toBeGreaterThan(0.8);
    expect(synonymsOf(termOf("make")!).get(termOf("create")!)).toBe(0.5);
    expect(synonymsOf(termOf("zebra")!).size).toBe(0);
  });
});

describe("a request read as terms", () => {
  const terms = ["list", "tabl", "session", "health", "statu", "fill", "click"];
  const vocabulary = {
    terms,
    idOf: (term: string) => (terms.includes(term) ? terms.indexOf(term) : undefined),
    relativesOf: () => [],
  };
  const weightOf = (request: string, term: string) => analyzeQuery(request, vocabulary, () => 1).get(terms.indexOf(term));

  it("asks for a list when it asks which or what things, in the plural", () => {
    expect(weightOf("which tables are there", "list")).toBe(0.5);
    expect(weightOf("what sessions does it keep", "list")).toBe(0.5);
    expect(weightOf("what is in the table", "list")).toBeUndefined();
    expect(weightOf("which table is the biggest", "list")).toBeUndefined();
  });

  it("asks for a health or status check when it asks whether something is up", () => {
    expect(weightOf("is the billing api up?", "health")).toBe(0.5);
    expect(weightOf("are the workers still running", "statu")).toBe(0.5);
    expect(weightOf("scroll the table up", "health")).toBeUndefined();
  });

  it("asks to fill an input when it types or enters something into a field, words in between", () => {
    expect(weightOf("type hello into the username field", "fill")).toBe(0.5);
    expect(weightOf("enter my email in the signup form", "fill")).toBe(0.5);
    expect(weightOf("add a custom field", "fill")).toBeUndefined();
  });

  it("asks for a click when it presses or taps a button, link or tab", () => {
    expect(weightOf("tap the second tab", "click")).toBe(0.5);
    expect(weightOf("press ctrl+s", "click")).toBeUndefined();
  });
});

import { decode as decodeToon } from "@toon-format/toon";
import { beforeAll, describe, expect, it } from "vitest";
import { loadToonEncoder } from "../calls/toon.ts";
import {
  MAX_TEXT_BYTES,
  MAX_TEXT_LINES,
  McpToolError,
  transformMcpResult,
  transformResourceResult,
  type PiContent,
} from "../calls/content.ts";

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

function texts(content: PiContent[]): string[] {
  return content.flatMap((block) => (block.type === "text" ? [block.text] : []));
}

describe("transformMcpResult: content types", () => {
  it("passes text and images through, in order", () => {
    const out = transformMcpResult({
      content: [
        { type: "text", text: "before" },
        { type: "image", data: PNG, mimeType: "image/png" },
        { type: "text", text: "after" },
      ],
    });
    expect(out.content).toEqual([
      { type: "text", text: "before" },
      { type: "image", data: PNG, mimeType: "image/png" },
      { type: "text", text: "after" },
    ]);
    expect(out.isError).toBe(false);
    expect(out.details).toEqual({ isError: false, truncation: undefined, toonEncoded: false });
  });

  it("notes audio with its type and decoded size, never its data", () => {
    const data = Buffer.alloc(3000).toString("base64");
    const out = transformMcpResult({ content: [{ type: "audio", data, mimeType: "audio/mpeg" }] });
    expect(texts(out.content)).toEqual(["[Audio: audio/mpeg, 2.9KB; audio cannot be shown to the model]"]);
  });

  it("shows an embedded text resource with its URI, and notes a binary one", () => {
    const blob = Buffer.alloc(2048, 1).toString("base64");
    const out = transformMcpResult({
      content: [
        { type: "resource", resource: { uri: "file:///a.txt", mimeType: "text/plain", text: "hello" } },
        { type: "resource", resource: { uri: "file:///b.bin", mimeType: "application/gzip", blob } },
      ],
    });
    expect(texts(out.content)).toEqual([
      "[Resource: file:///a.txt]\nhello",
      "[Resource: file:///b.bin] binary content (application/gzip, 2.0KB) not shown",
    ]);
    expect(JSON.stringify(out)).not.toContain(blob);
  });

  it("shows an embedded image resource as an image", () => {
    const out = transformMcpResult({ content: [{ type: "resource", resource: { uri: "img://logo", mimeType: "image/png", blob: PNG } }] });
    expect(out.content).toEqual([
      { type: "text", text: "[Resource: img://logo]" },
      { type: "image", data: PNG, mimeType: "image/png" },
    ]);
  });

  it("describes a resource link by title or name, URI, type and description", () => {
    const out = transformMcpResult({
      content: [
        { type: "resource_link", uri: "demo://r/1", name: "r1", title: "Resource one", mimeType: "text/plain", description: "First" },
        { type: "resource_link", uri: "demo://r/2", name: "r2" },
      ],
    });
    expect(texts(out.content)).toEqual([
      "[Resource link: Resource one]\nURI: demo://r/1\nType: text/plain\nFirst",
      "[Resource link: r2]\nURI: demo://r/2",
    ]);
  });

  it("uses structuredContent as JSON only when there is no text", () => {
    expect(texts(transformMcpResult({ content: [], structuredContent: { a: 1 } }).content)).toEqual(['{"a":1}']);
    expect(texts(transformMcpResult({ content: [{ type: "text", text: "t" }], structuredContent: { a: 1 } }).content)).toEqual(["t"]);
    // Old protocol revisions answered with `toolResult`.
    expect(texts(transformMcpResult({ toolResult: [1, 2] }).content)).toEqual(["[1,2]"]);
  });

  it("notes unknown and malformed blocks instead of throwing", () => {
    const out = transformMcpResult({
      content: [
        { type: "hologram", data: "x" },
        null,
        "text?",
        { type: "image", mimeType: "image/png" },
        { type: "resource" },
        { type: "text", text: 5 },
      ],
    });
    expect(texts(out.content)).toEqual([
      '[Unsupported MCP content type "hologram" omitted]',
      "[Unreadable MCP content omitted]",
      "[Unreadable MCP content omitted]",
      "[Image without data or type omitted]",
      "[Embedded resource without contents omitted]",
      "",
    ]);
  });

  it.each([undefined, null, 42, "text", [], { content: "nope" }])("turns a garbage result (%j) into a note", (result) => {
    expect(texts(transformMcpResult(result).content)).toEqual(["(no content)"]);
  });

  it("bounds an image larger than the model can take", () => {
    const data = "A".repeat(2000);
    const out = transformMcpResult({ content: [{ type: "image", data, mimeType: "image/jpeg" }] }, { maxImageBytes: 1000 });
    expect(texts(out.content)).toEqual(["[Image omitted: image/jpeg, 1.5KB, larger than the 1000B of base64 the model can take]"]);
  });
});

describe("transformMcpResult: errors", () => {
  it("flags isError results and McpToolError carries their text", () => {
    const out = transformMcpResult({
      content: [
        { type: "text", text: "bad id" },
        { type: "text", text: "try again" },
      ],
      isError: true,
    });
    expect(out.isError).toBe(true);
    expect(out.details.isError).toBe(true);
    const error = new McpToolError(out);
    expect(error).toBeInstanceOf(Error);
    expect(error.message).toBe("bad id\ntry again");
    expect(error.result).toBe(out);
  });

  it("gives an error without content a message", () => {
    const out = transformMcpResult({ isError: true });
    expect(new McpToolError(out).message).toBe("(the tool reported an error without a message)");
    expect(new McpToolError({ ...out, content: [] }).message).toBe("The MCP tool reported an error without a message.");
  });
});

describe("transformMcpResult: size bound", () => {
  it("cuts a huge single-line text at the byte limit and says how much there was", () => {
    const huge = "y".repeat(20 * 1024 * 1024);
    const out = transformMcpResult({ content: [{ type: "text", text: huge }] });
    const [kept, note] = texts(out.content);
    expect(kept).toBe("y".repeat(MAX_TEXT_BYTES));
    expect(note).toMatch(/^\[Output truncated: showing 1 of 1 lines \(50\.0KB of 20\.0MB\)\./);
    expect(out.details.truncation).toEqual({ totalBytes: huge.length, totalLines: 1, shownBytes: MAX_TEXT_BYTES, shownLines: 1 });
  });

  it("keeps whole lines when many lines overflow", () => {
    const lines = Array.from({ length: 5000 }, (_, i) => `line ${i}`);
    const out = transformMcpResult({ content: [{ type: "text", text: lines.join("\n") }] });
    const [kept] = texts(out.content);
    expect(kept.split("\n")).toEqual(lines.slice(0, MAX_TEXT_LINES));
    expect(out.details.truncation?.shownLines).toBe(MAX_TEXT_LINES);
  });

  it("never splits a multi-byte character", () => {
    const out = transformMcpResult({ content: [{ type: "text", text: "é".repeat(100) + "😀".repeat(100) }] }, { maxTextBytes: 301 });
    const [kept] = texts(out.content);
    expect(Buffer.byteLength(kept)).toBeLessThanOrEqual(301);
    expect(kept).toBe("é".repeat(100) + "😀".repeat(25));
    expect(kept).not.toContain("\uFFFD");
  });

  it("shares the budget between blocks, drops the text after the cut and keeps images", () => {
    const out = transformMcpResult(
      {
        content: [
          { type: "text", text: "a".repeat(60) },
          { type: "text", text: "b".repeat(60) },
          { type: "image", data: PNG, mimeType: "image/png" },
          { type: "text", text: "c".repeat(10) },
        ],
      },
      { maxTextBytes: 100 },
    );
    expect(out.content.map((block) => (block.type === "text" ? block.text.slice(0, 3) : "img"))).toEqual(["aaa", "bbb", "img", "[Ou"]);
    expect(texts(out.content)[1]).toBe("b".repeat(40));
    expect(texts(out.content)[2]).toContain("1 further text block(s) omitted");
  });

  it("leaves content within the limits untouched", () => {
    const text = "z".repeat(MAX_TEXT_BYTES);
    const out = transformMcpResult({ content: [{ type: "text", text }] });
    expect(out.content).toEqual([{ type: "text", text }]);
    expect(out.details.truncation).toBeUndefined();
  });
});

describe("transformMcpResult: TOON", () => {
  beforeAll(() => loadToonEncoder());
  const rows = Array.from({ length: 20 }, (_, i) => ({ id: i, name: `item ${i}`, active: i % 2 === 0 }));
  const json = JSON.stringify(rows, null, 2);

  it("encodes JSON text as TOON when shorter, for every server (true) or listed servers", () => {
    for (const options of [{ toonEncode: true }, { toonEncode: ["gh"], serverName: "gh" }]) {
      const out = transformMcpResult({ content: [{ type: "text", text: json }] }, options);
      const [encoded] = texts(out.content);
      expect(encoded.length).toBeLessThan(json.length);
      expect(decodeToon(encoded)).toEqual(rows);
      expect(out.details.toonEncoded).toBe(true);
    }
  });

  it("leaves JSON alone for servers not listed, and when toonEncode is off", () => {
    for (const options of [{}, { toonEncode: false }, { toonEncode: ["other"], serverName: "gh" }, { toonEncode: ["gh"] }]) {
      expect(texts(transformMcpResult({ content: [{ type: "text", text: json }] }, options).content)).toEqual([json]);
    }
  });

  it("leaves non-JSON, broken JSON, JSON scalars and JSON that TOON would not shorten untouched", () => {
    for (const text of ["plain words", "{not json", '"a string"', "42", "[]", "{}"]) {
      const out = transformMcpResult({ content: [{ type: "text", text }] }, { toonEncode: true });
      expect(texts(out.content)).toEqual([text]);
      expect(out.details.toonEncoded).toBe(false);
    }
  });

  it("encodes structured content too", () => {
    const out = transformMcpResult({ content: [], structuredContent: { rows } }, { toonEncode: true });
    expect(decodeToon(texts(out.content)[0])).toEqual({ rows });
  });
});

describe("transformResourceResult", () => {
  it("shows one text resource as it is", () => {
    const out = transformResourceResult({ contents: [{ uri: "memory://graph", mimeType: "application/json", text: '{"a":1}' }] });
    expect(out.content).toEqual([{ type: "text", text: '{"a":1}' }]);
    expect(out.isError).toBe(false);
  });

  it("tells several contents apart by URI, turns image blobs into images and notes other blobs", () => {
    const out = transformResourceResult({
      contents: [
        { uri: "a://1", text: "one" },
        { uri: "a://2", mimeType: "image/png", blob: PNG },
        { uri: "a://3", mimeType: "application/octet-stream", blob: "AAAA" },
        { uri: "a://4" },
        7,
      ],
    });
    expect(out.content).toEqual([
      { type: "text", text: "[Resource: a://1]\none" },
      { type: "text", text: "[Resource: a://2]" },
      { type: "image", data: PNG, mimeType: "image/png" },
      { type: "text", text: "[Resource: a://3] binary content (application/octet-stream, 3B) not shown" },
      { type: "text", text: "[Resource: a://4] without text or binary content" },
      { type: "text", text: "[Unreadable resource contents omitted]" },
    ]);
  });

  it("says when a resource is empty or the result is garbage, and bounds huge resources", () => {
    expect(texts(transformResourceResult({ contents: [] }).content)).toEqual(["(the resource is empty)"]);
    expect(texts(transformResourceResult("garbage").content)).toEqual(["(the resource is empty)"]);
    const out = transformResourceResult({ contents: [{ uri: "big://1", text: "q".repeat(MAX_TEXT_BYTES * 3) }] });
    expect(out.details.truncation?.totalBytes).toBe(MAX_TEXT_BYTES * 3);
  });
});

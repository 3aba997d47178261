// Real MCP content from real servers over stdio: the reference server (images, resource links, embedded
// resources, structured content) and our fixture server (audio, errors, a 20 MB text, an oversized image).
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_TEXT_BYTES, McpToolError, transformMcpResult, transformResourceResult, type PiContent } from "../calls/content.ts";
import { mergeEnv } from "../connection/server-target.ts";
import { GroupedStdioTransport } from "../connection/stdio-transport.ts";

const EVERYTHING = fileURLToPath(new URL("../node_modules/@modelcontextprotocol/server-everything/dist/index.js", import.meta.url));
const CONTENT_SERVER = fileURLToPath(new URL("./fixtures/content-server.mjs", import.meta.url));

// Room for the 20 MB text (the adapter's own limit is 32 MB).
const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/** Through the adapter's stdio transport: the SDK's own reads a long line in quadratic time (minutes when loaded). */
async function connect(script: string, args: string[] = []): Promise<Client> {
  const client = new Client({ name: "mcp-content-test", version: "1.0.0" });
  const transport = new GroupedStdioTransport({
    command: process.execPath,
    args: [script, ...args],
    env: mergeEnv(process.env, undefined),
    maxBufferSize: MAX_MESSAGE_BYTES,
  });
  await client.connect(transport);
  return client;
}

function texts(content: PiContent[]): string[] {
  return content.flatMap((block) => (block.type === "text" ? [block.text] : []));
}

describe("content from @modelcontextprotocol/server-everything", () => {
  let client: Client;
  beforeAll(async () => {
    client = await connect(EVERYTHING, ["stdio"]);
  });
  afterAll(async () => {
    await client?.close();
  });

  it("passes its image through as a Pi image", async () => {
    const out = transformMcpResult(await client.callTool({ name: "get-tiny-image", arguments: {} }));
    const images = out.content.filter((block) => block.type === "image");
    expect(images).toHaveLength(1);
    expect(images[0]).toMatchObject({ type: "image", mimeType: "image/png" });
    expect(
      Buffer.from((images[0] as { data: string }).data, "base64")
        .subarray(1, 4)
        .toString(),
    ).toBe("PNG");
    expect(texts(out.content).length).toBeGreaterThan(0);
  });

  it("describes its resource links with name and URI", async () => {
    const out = transformMcpResult(await client.callTool({ name: "get-resource-links", arguments: { count: 3 } }));
    const links = texts(out.content).filter((text) => text.startsWith("[Resource link:"));
    expect(links).toHaveLength(3);
    for (const link of links) expect(link).toMatch(/\nURI: demo:\/\/resource\//);
  });

  it("shows an embedded text resource and notes an embedded blob without its base64", async () => {
    const textOut = transformMcpResult(
      await client.callTool({ name: "get-resource-reference", arguments: { resourceType: "Text", resourceId: 1 } }),
    );
    expect(texts(textOut.content).some((text) => /^\[Resource: demo:\/\/resource\/dynamic\/text\/1\]\n\S/.test(text))).toBe(true);

    const raw = await client.callTool({ name: "get-resource-reference", arguments: { resourceType: "Blob", resourceId: 1 } });
    const blob = (raw.content as Array<{ type: string; resource?: { blob?: string } }>).find((block) => block.type === "resource")?.resource
      ?.blob;
    expect(blob).toBeTruthy();
    const blobOut = transformMcpResult(raw);
    expect(
      texts(blobOut.content).some((text) => /^\[Resource: demo:\/\/resource\/dynamic\/blob\/1\] binary content \(.+, \d/.test(text)),
    ).toBe(true);
    expect(JSON.stringify(blobOut.content)).not.toContain(blob);
  });

  it("prefers its text over its structured content", async () => {
    const raw = await client.callTool({ name: "get-structured-content", arguments: { location: "Chicago" } });
    expect(raw.structuredContent).toBeDefined();
    const out = transformMcpResult(raw);
    expect(out.content).toEqual((raw.content as PiContent[]).map(({ type, text }: any) => ({ type, text })));
  });

  it("reads its text and blob resources", async () => {
    const text = transformResourceResult(await client.readResource({ uri: "demo://resource/static/document/architecture.md" }));
    expect(texts(text.content)[0]).toMatch(/^#/);
    const blob = transformResourceResult(await client.readResource({ uri: "demo://resource/dynamic/blob/2" }));
    expect(texts(blob.content)[0]).toMatch(/^\[Resource: demo:\/\/resource\/dynamic\/blob\/2\] binary content/);
  });
});

describe("content from the fixture server", () => {
  let client: Client;
  beforeAll(async () => {
    client = await connect(CONTENT_SERVER);
  });
  afterAll(async () => {
    await client?.close();
  });

  it("notes audio by type and size", async () => {
    const out = transformMcpResult(await client.callTool({ name: "audio", arguments: {} }));
    expect(texts(out.content)).toEqual(["[Audio: audio/wav, 7.8KB; audio cannot be shown to the model]"]);
  });

  it("reports isError so the caller can throw", async () => {
    const out = transformMcpResult(await client.callTool({ name: "fail", arguments: {} }));
    expect(out.isError).toBe(true);
    expect(() => {
      throw new McpToolError(out);
    }).toThrow("Repository not found: acme/nothing");
  });

  it("cuts a 20 MB text to the limit with a note of the original size", async () => {
    const out = transformMcpResult(await client.callTool({ name: "huge", arguments: {} }));
    const [kept, note] = texts(out.content);
    expect(Buffer.byteLength(kept)).toBeLessThanOrEqual(MAX_TEXT_BYTES);
    expect(kept.length).toBeGreaterThan(MAX_TEXT_BYTES / 2);
    expect(note).toMatch(/Output truncated: .* of 20\.0MB/);
    expect(out.details.truncation?.totalBytes).toBe(20 * 1024 * 1024);
  });

  it("shows structured content when there is no text", async () => {
    const out = transformMcpResult(await client.callTool({ name: "structured-only", arguments: {} }));
    expect(texts(out.content)).toEqual(['{"temperature":21.5,"unit":"C"}']);
  });

  it("replaces an oversized image by a note", async () => {
    const out = transformMcpResult(await client.callTool({ name: "big-image", arguments: {} }));
    expect(out.content).toEqual([
      { type: "text", text: "[Image omitted: image/png, 3.8MB, larger than the 4.5MB of base64 the model can take]" },
    ]);
  });
});

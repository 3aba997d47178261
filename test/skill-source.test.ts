/**
 * connection/skills.ts against a real server on the official SDK v2 (test/fixtures/servers/skills-server.mjs) in both
 * eras: what a listing keeps of an entry, verified reads, and each verification failure as a result (never the bytes).
 */
import type { Client } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, it, vi } from "vitest";
import { skillSource } from "../connection/skills.ts";
import type { SkillEntry, SkillFileEntry } from "../types.ts";
import { ITEMS_SERVER } from "./helpers/items-fixture.ts";
import { connectSkillsServer, skillReads, skillsServerEnv } from "./helpers/skills-fixture.ts";
import { withTempDir } from "./helpers/temp-dir.ts";

let dir = "";
withTempDir("pi-mcp-skill-source-", (created) => {
  dir = created;
});
const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

async function connect(mode: "auto" | "legacy", tamper?: string): Promise<Client> {
  const client = await connectSkillsServer(mode, skillsServerEnv(dir, { tamper }));
  clients.push(client);
  return client;
}

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
const fileUri = (entry: SkillEntry, path: string) => entry.uri.replace(/SKILL\.md$/, path);

describe.each(["auto", "legacy"] as const)("skillSource, %s era", (mode) => {
  it("lists both skills with their files, sizes and digests, and reads no file to list them", async () => {
    const client = await connect(mode);
    expect(client.getNegotiatedProtocolVersion()).toBe(mode === "auto" ? "2026-07-28" : "2025-11-25");
    const listing = await skillSource(client).list();
    expect(listing.problems).toEqual([]);
    expect(listing.skills.map((entry) => [entry.frontmatter.name, entry.uri])).toEqual([
      ["pdf-tools", "skill://pdf-tools/SKILL.md"],
      ["release-notes", "skill://release-notes/SKILL.md"],
    ]);
    const [pdf] = listing.skills;
    expect(Object.keys(pdf!)).toEqual(["uri", "frontmatter", "resources"]);
    expect(pdf!.resources).toEqual([
      { uri: "skill://pdf-tools/SKILL.md", digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/), size: 269 },
      { uri: "skill://pdf-tools/references/FORMS.md", digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/), size: 93 },
    ]);
    expect(skillReads(dir)).toEqual([]);
  });

  it("reads SKILL.md and the extra file, verified, with the bytes the server sent", async () => {
    const source = skillSource(await connect(mode));
    const [pdf] = (await source.list()).skills;
    const manifest = await source.read(pdf!, pdf!.uri);
    expect(manifest.ok && text(manifest.bytes)).toContain("PDF-TOOLS-BODY");
    const forms = await source.read(pdf!, fileUri(pdf!, "references/FORMS.md"));
    expect(forms.ok && text(forms.bytes)).toContain("FORMS-BODY");
    expect(skillReads(dir)).toEqual(["skill://pdf-tools/SKILL.md", "skill://pdf-tools/references/FORMS.md"]);
  });

  it("a file whose digest does not match its entry is a failure naming the digest, and only that file fails", async () => {
    const source = skillSource(await connect(mode, "pdf-tools/SKILL.md"));
    const [pdf] = (await source.list()).skills;
    const manifest = await source.read(pdf!, pdf!.uri);
    expect(manifest).toEqual({ ok: false, reason: "digest", message: expect.stringContaining("skill://pdf-tools/SKILL.md has digest") });
    expect((await source.read(pdf!, fileUri(pdf!, "references/FORMS.md"))).ok).toBe(true);
  });
});

describe("skillSource: the other checks", () => {
  it("size, frontmatter and a file the entry does not list are failures too (the last one without a request)", async () => {
    const source = skillSource(await connect("auto"));
    const [pdf] = (await source.list()).skills;
    const resources = pdf!.resources as readonly SkillFileEntry[];
    const wrongSize: SkillEntry = {
      ...pdf!,
      resources: resources.map((file, index) => (index === 0 ? { ...file, size: file.size + 1 } : file)),
    };
    expect(await source.read(wrongSize, pdf!.uri)).toMatchObject({ ok: false, reason: "size" });
    const otherFrontmatter: SkillEntry = { ...pdf!, frontmatter: { ...pdf!.frontmatter, description: "Something else entirely." } };
    expect(await source.read(otherFrontmatter, pdf!.uri)).toMatchObject({ ok: false, reason: "frontmatter" });
    const reads = skillReads(dir).length;
    expect(await source.read(pdf!, fileUri(pdf!, "scripts/run.sh"))).toMatchObject({ ok: false, reason: "unlisted" });
    expect(skillReads(dir)).toHaveLength(reads);
  });

  it("a server without the extension has no skills, and nothing is written to the console", async () => {
    const debug = vi.spyOn(console, "debug");
    try {
      const { Client } = await import("@modelcontextprotocol/client");
      const { StdioClientTransport } = await import("@modelcontextprotocol/client/stdio");
      const client = new Client({ name: "skills-test", version: "1.0.0" });
      clients.push(client);
      await client.connect(new StdioClientTransport({ command: process.execPath, args: [ITEMS_SERVER] }));
      expect(await skillSource(client).list()).toEqual({ skills: [], problems: [] });
      expect(debug).not.toHaveBeenCalled();
    } finally {
      debug.mockRestore();
    }
  });
});

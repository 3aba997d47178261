/**
 * skills/session.ts with a real server on the official SDK v2 (test/fixtures/servers/skills-server.mjs), reached
 * through connection/skills.ts: discovery from a listing made beforehand (as the cache holds it) starts nothing,
 * files are fetched when read (and only then), verified before they are written, and refused when they fail.
 */
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseFrontmatter } from "@mariozechner/pi-coding-agent";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { serverFolder } from "../skills/files.ts";
import { SkillSession } from "../skills/session.ts";
import type { ServerDefinition, SkillEntry } from "../types.ts";
import { FixtureSkillServers, listFixtureSkills, skillReads, skillsServerEnv, skillsServerStarts } from "./helpers/skills-fixture.ts";
import { withTempDir } from "./helpers/temp-dir.ts";

const DOCS: ServerDefinition = { name: "docs", command: "skills-server", source: { kind: "user", path: "/mcp.json" } };

let dir = "";
withTempDir("pi-mcp-skills-session-", (created) => {
  dir = created;
});

/** What an earlier session listed (and the cache keeps): listed once for the file, logging elsewhere. */
let cached: SkillEntry[] = [];
beforeAll(async () => {
  const logs = await mkdtemp(join(tmpdir(), "pi-mcp-skills-listing-"));
  try {
    cached = await listFixtureSkills(logs);
  } finally {
    await rm(logs, { recursive: true, force: true });
  }
});

let servers: FixtureSkillServers;
let notices: string[];
afterEach(async () => {
  await servers?.close();
});

async function startSession(options: { tamper?: string; entries?: SkillEntry[]; definition?: ServerDefinition } = {}) {
  servers = new FixtureSkillServers(options.entries ?? cached, skillsServerEnv(dir, { tamper: options.tamper }));
  notices = [];
  const session = new SkillSession({
    agentDir: join(dir, "agent"),
    servers,
    listings: () => [{ server: options.definition ?? DOCS, entries: servers.entries() }],
    notify: (message) => notices.push(message),
  });
  const folders = await session.discover();
  return { session, folders, pdf: folders[0]!, notes: folders[1]! };
}

const mode = (path: string) => statSync(path).mode & 0o777;

describe("SkillSession: discovery", () => {
  it("gives Pi one folder per skill with a stub SKILL.md it lists, private, and starts no server", async () => {
    const { folders, pdf } = await startSession();
    expect(folders).toEqual([join(dir, "agent/mcp-skills/docs/pdf-tools"), join(dir, "agent/mcp-skills/docs/release-notes")]);
    const stub = readFileSync(join(pdf, "SKILL.md"), "utf8");
    expect(parseFrontmatter(stub).frontmatter).toEqual({
      name: "pdf-tools",
      description: "Extract text and tables from PDF files and fill PDF forms. Use when reading, converting or filling PDFs.",
    });
    expect(stub).toContain('MCP server "docs"');
    expect([mode(join(dir, "agent/mcp-skills")), mode(pdf), mode(join(pdf, "SKILL.md"))]).toEqual([0o700, 0o700, 0o600]);
    expect(skillsServerStarts(dir)).toBe(0);
    expect(skillReads(dir)).toEqual([]);
  });
});

describe("serverFolder", () => {
  it("is the server's name, or for a name that is no safe folder name, that name made safe and a hash of it", () => {
    expect(serverFolder("/a", "docs")).toBe("/a/mcp-skills/docs");
    expect(serverFolder("/a", "my docs/x")).toMatch(/^\/a\/mcp-skills\/my_docs_x-[0-9a-f]{8}$/);
    expect(serverFolder("/a", "..")).toMatch(/^\/a\/mcp-skills\/\.\.-[0-9a-f]{8}$/);
  });
});

describe("SkillSession: reads", () => {
  it("a read of SKILL.md starts the server and puts the verified file where Pi reads it; the extra file when it is read", async () => {
    const { session, pdf } = await startSession();
    expect(await session.beforeToolCall("read", { path: join(pdf, "SKILL.md") }, "/elsewhere")).toEqual({ ok: true });
    expect(readFileSync(join(pdf, "SKILL.md"), "utf8")).toContain("PDF-TOOLS-BODY");
    expect(skillReads(dir)).toEqual(["skill://pdf-tools/SKILL.md"]);
    // Relative to the session's cwd, as Pi's read tool resolves it.
    expect(await session.beforeToolCall("read", { path: "references/FORMS.md" }, pdf)).toEqual({ ok: true });
    expect(readFileSync(join(pdf, "references/FORMS.md"), "utf8")).toContain("FORMS-BODY");
    expect(mode(join(pdf, "references/FORMS.md"))).toBe(0o600);
    expect(skillReads(dir)).toEqual(["skill://pdf-tools/SKILL.md", "skill://pdf-tools/references/FORMS.md"]);
    expect(skillsServerStarts(dir)).toBe(1);
  });

  it("fetches a file once per session, and puts it back if its copy on disk changed", async () => {
    const { session, pdf } = await startSession();
    const manifest = join(pdf, "SKILL.md");
    await session.beforeToolCall("read", { path: manifest }, "/");
    writeFileSync(manifest, "changed by someone else");
    await session.beforeToolCall("read", { path: `@${manifest}` }, "/");
    expect(readFileSync(manifest, "utf8")).toContain("PDF-TOOLS-BODY");
    expect(skillReads(dir)).toEqual(["skill://pdf-tools/SKILL.md"]);
  });

  it("a SKILL.md whose digest does not match is never written: the read is refused, the user told once, the skill's other files refused", async () => {
    const { session, pdf } = await startSession({ tamper: "pdf-tools/SKILL.md" });
    const refused = await session.beforeToolCall("read", { path: join(pdf, "SKILL.md") }, "/");
    expect(refused).toEqual({
      ok: false,
      told: true,
      reason:
        'Skill "pdf-tools" of MCP server "docs" was not loaded: SKILL.md failed verification: its content does not match the digest the server listed. Do not use this skill.',
    });
    expect(notices).toEqual([
      'MCP: skill "pdf-tools" of server "docs" refused: SKILL.md failed verification: its content does not match the digest the server listed.',
    ]);
    expect(readFileSync(join(pdf, "SKILL.md"), "utf8")).not.toContain("PDF-TOOLS-BODY");
    expect((await session.beforeToolCall("read", { path: join(pdf, "references/FORMS.md") }, "/")).ok).toBe(false);
    expect(skillReads(dir)).toEqual(["skill://pdf-tools/SKILL.md"]);
    expect(notices).toHaveLength(1);
    expect(session.statusLines("docs")).toContain("skill file pdf-tools/SKILL.md refused: it failed verification");
  });

  it("a tampered extra file is refused alone", async () => {
    const { session, pdf } = await startSession({ tamper: "pdf-tools/references/FORMS.md" });
    expect((await session.beforeToolCall("read", { path: join(pdf, "SKILL.md") }, "/")).ok).toBe(true);
    const refused = await session.beforeToolCall("read", { path: join(pdf, "references/FORMS.md") }, "/");
    expect(refused.ok === false && refused.reason).toBe(
      'Skill "pdf-tools" of MCP server "docs": references/FORMS.md failed verification: its content does not match the digest the server listed, so it was not loaded. Do not use this file.',
    );
  });

  it("a shell command naming a skill's folder gets the whole skill first; other reads and tools are left alone", async () => {
    const { session, pdf } = await startSession();
    expect(await session.beforeToolCall("read", { path: join(dir, "unrelated.txt") }, "/")).toEqual({ ok: true });
    expect(await session.beforeToolCall("write", { path: join(pdf, "x"), content: "" }, "/")).toEqual({ ok: true });
    expect(skillReads(dir)).toEqual([]);
    expect(await session.beforeToolCall("bash", { command: `cat ${pdf}/references/FORMS.md` }, "/")).toEqual({ ok: true });
    expect(skillReads(dir)).toEqual(["skill://pdf-tools/SKILL.md", "skill://pdf-tools/references/FORMS.md"]);
  });

  it("/skill:<name> of an offered skill fetches its SKILL.md; any other input is left alone", async () => {
    const { session, pdf } = await startSession();
    expect(await session.beforeSkillCommand("/skill:other-skill go")).toBe(true);
    expect(await session.beforeSkillCommand("hello")).toBe(true);
    expect(skillReads(dir)).toEqual([]);
    expect(await session.beforeSkillCommand("/skill:pdf-tools extract report.pdf")).toBe(true);
    expect(readFileSync(join(pdf, "SKILL.md"), "utf8")).toContain("PDF-TOOLS-BODY");
  });

  it("a skill the server no longer lists is refused at its read, naming it", async () => {
    const manifest = { uri: "skill://gone-skill/SKILL.md", digest: `sha256:${"0".repeat(64)}`, size: 1 };
    const gone: SkillEntry = { uri: manifest.uri, frontmatter: { name: "gone-skill", description: "Gone." }, resources: [manifest] };
    const { session, folders } = await startSession({ entries: [...cached, gone] });
    const outcome = await session.beforeToolCall("read", { path: join(folders[2]!, "SKILL.md") }, "/");
    expect(outcome).toEqual({ ok: false, reason: 'Skill "gone-skill" of MCP server "docs" is no longer offered by the server.' });
  });
});

describe("SkillSession: what it says", () => {
  it("marks what a read returns from a skill as the server's text", async () => {
    const { session, pdf } = await startSession();
    expect(session.provenance("read", { path: join(pdf, "SKILL.md") }, "/")).toBe(
      '[Skill "pdf-tools" from the MCP server "docs": the text below is that server\'s, checked against what it listed.]',
    );
    expect(session.provenance("read", { path: join(dir, "other.md") }, "/")).toBeUndefined();
    expect(session.provenance("bash", { command: `cat ${pdf}/SKILL.md` }, "/")).toBeUndefined();
  });

  it("says once that the user's own skill of a name is kept, and shows it in the status", async () => {
    const { session, pdf } = await startSession();
    const loaded = [
      { name: "pdf-tools", filePath: "/home/me/.pi/agent/skills/pdf-tools/SKILL.md" },
      { name: "release-notes", filePath: join(pdf, "../release-notes/SKILL.md") },
    ];
    session.noticeLoaded(loaded);
    session.noticeLoaded(loaded);
    expect(notices).toEqual([
      'MCP: skill "pdf-tools" of server "docs" is not used: your own skill of that name (/home/me/.pi/agent/skills/pdf-tools/SKILL.md) is kept.',
    ]);
    expect(session.statusLines("docs")).toEqual(["skills: pdf-tools (yours is used), release-notes"]);
    expect(session.summary("docs")).toBe("2 skills");
  });

  it("status: skills left out with why, and skills listed after discovery offered from /reload", async () => {
    const { session } = await startSession({ entries: cached.slice(0, 1), definition: { ...DOCS, excludeSkills: ["pdf-*"] } });
    await servers.connect();
    expect(session.statusLines("docs")).toEqual([
      "skill pdf-tools not offered: left out by includeSkills / excludeSkills",
      "skills listed since the session started (offered after /reload): release-notes",
    ]);
    expect(session.summary("docs")).toBeUndefined();
  });
});

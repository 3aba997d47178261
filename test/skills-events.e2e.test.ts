/**
 * What Pi does with the skills' events, in the real Pi of this run with a scripted model and the skills fixture
 * server (official SDK v2): the offered skills in the system prompt with no server started, the model's `read` of
 * SKILL.md and of the extra file fetching them (verified, marked as the server's), `/skill:<name>`, and a SKILL.md
 * whose digest does not match refused before its text reaches the model. The skills code runs in a test extension
 * (test/fixtures/extensions/skills-harness.ts) that reaches the server as the adapter reaches a lazy one.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { ModelRequest, ScriptStep } from "./helpers/faux-script.ts";
import { currentHost, REPO_ROOT } from "./helpers/hosts.ts";
import { type PiSession, startSession } from "./helpers/pi-session.ts";
import { listFixtureSkills, skillReads, skillsServerEnv, skillsServerStarts } from "./helpers/skills-fixture.ts";
import { withTempDir } from "./helpers/temp-dir.ts";
import { HARNESS_FILE } from "./fixtures/extensions/skills-harness.ts";
import type { SkillEntry } from "../types.ts";

const host = currentHost();
const HARNESS = join(REPO_ROOT, "test/fixtures/extensions/skills-harness.ts");

let cached: SkillEntry[] = [];
let listingLogs = "";
beforeAll(async () => {
  listingLogs = await mkdtemp(join(tmpdir(), "pi-mcp-skills-listing-"));
  cached = await listFixtureSkills(listingLogs);
});
afterAll(() => rm(listingLogs, { recursive: true, force: true }));

let dir = "";
withTempDir("pi-mcp-skills-events-", (created) => {
  dir = created;
});

async function start(script: readonly ScriptStep[], tamper?: string): Promise<PiSession> {
  await writeFile(join(dir, HARNESS_FILE), JSON.stringify({ entries: cached, env: skillsServerEnv(dir, { tamper }) }));
  return startSession({ extensions: [HARNESS], agentDir: dir, script });
}

/** The location Pi's system prompt gives a skill. */
function location(request: ModelRequest, name: string): string {
  const match = new RegExp(`<name>${name}</name>\\s*<description>[^<]*</description>\\s*<location>([^<]+)</location>`).exec(
    request.systemPrompt,
  );
  if (!match) throw new Error(`no skill ${name} in the system prompt:\n${request.systemPrompt}`);
  return match[1]!;
}

const readCall = (path: string) => ({ toolCalls: [{ name: "read", arguments: { path } }] });
const everything = (pi: PiSession) => JSON.stringify(pi.requests.map((request) => request.messages));

describe(`MCP skills in Pi ${host.version}`, () => {
  test("the skills are in the system prompt with no server started; reading SKILL.md, then the extra file, fetches each (verified, marked as the server's)", async () => {
    let manifest = "";
    const pi = await start([
      (request) => {
        manifest = location(request, "pdf-tools");
        return readCall(manifest);
      },
      () => readCall(manifest.replace(/SKILL\.md$/, "references/FORMS.md")),
      "Done.",
    ]);
    try {
      expect(skillsServerStarts(dir)).toBe(0);
      await pi.prompt("Fill in the PDF form.");
      const prompt = pi.requests[0]!.systemPrompt;
      expect(prompt).toContain(
        "<description>Extract text and tables from PDF files and fill PDF forms. Use when reading, converting or filling PDFs.</description>",
      );
      expect(prompt).toContain("<name>release-notes</name>");
      expect(manifest).toMatch(new RegExp(`^${dir}/mcp-skills/docs/pdf-tools/SKILL\\.md$`));
      const [skill, forms] = pi.toolResults;
      expect(skill!.isError).toBe(false);
      expect(skill!.text).toMatch(
        /^\[Skill "pdf-tools" from the MCP server "docs": the text below is that server's, checked against what it listed\.\]\n/,
      );
      expect(skill!.text).toContain("PDF-TOOLS-BODY");
      expect(forms!.text).toContain("FORMS-BODY");
      expect(skillReads(dir)).toEqual(["skill://pdf-tools/SKILL.md", "skill://pdf-tools/references/FORMS.md"]);
      expect(skillsServerStarts(dir)).toBe(1);
    } finally {
      await pi.dispose();
    }
  });

  test("/skill:release-notes gives the model the verified SKILL.md's instructions", async () => {
    const pi = await start(["Noted."]);
    try {
      await pi.prompt("/skill:release-notes v1.0 to v1.1");
      expect(everything(pi)).toContain("RELEASE-NOTES-BODY");
      expect(skillReads(dir)).toEqual(["skill://release-notes/SKILL.md"]);
    } finally {
      await pi.dispose();
    }
  });

  test("a SKILL.md whose digest does not match never reaches the model: its read is refused, and the user is told", async () => {
    let manifest = "";
    const pi = await start(
      [
        (request) => {
          manifest = location(request, "pdf-tools");
          return readCall(manifest);
        },
        () => readCall(manifest.replace(/SKILL\.md$/, "references/FORMS.md")),
        "I cannot use that skill.",
      ],
      "pdf-tools/SKILL.md",
    );
    try {
      await pi.prompt("Fill in the PDF form.");
      const [skill, forms] = pi.toolResults;
      expect(skill!.isError).toBe(true);
      expect(skill!.text).toContain('Skill "pdf-tools" of MCP server "docs" was not loaded: SKILL.md failed verification');
      expect(forms!.isError).toBe(true);
      expect(everything(pi)).not.toContain("PDF-TOOLS-BODY");
      expect(skillReads(dir)).toEqual(["skill://pdf-tools/SKILL.md"]);
      expect(pi.ui).toContainEqual({
        kind: "notify",
        level: "warning",
        message:
          'MCP: skill "pdf-tools" of server "docs" refused: SKILL.md failed verification: its content does not match the digest the server listed.',
      });
    } finally {
      await pi.dispose();
    }
  });
});

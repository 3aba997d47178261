/** skills/offer.ts: which listed skills a session offers, and the reason given for each other one. */
import { describe, expect, it } from "vitest";
import { MAX_DESCRIPTION_CHARS, offerSkills, skillFiles } from "../skills/offer.ts";
import type { ServerDefinition, SkillEntry } from "../types.ts";

const DIGEST = `sha256:${"0".repeat(64)}`;

function entry(name: string, files: string[] = [], extra: Partial<SkillEntry> = {}): SkillEntry {
  const uri = `skill://${name}/SKILL.md`;
  const resources = [uri, ...files.map((file) => `skill://${name}/${file}`)].map((file) => ({ uri: file, digest: DIGEST, size: 1 }));
  return { uri, frontmatter: { name, description: `The ${name} skill.` }, resources, ...extra };
}

function server(name: string, extra: Partial<ServerDefinition> = {}): ServerDefinition {
  return { name, command: "x", source: { kind: "user", path: "/mcp.json" }, ...extra };
}

const names = (skills: readonly { server: string; name: string }[]) => skills.map((skill) => `${skill.server}/${skill.name}`);

describe("offerSkills", () => {
  it("offers every valid skill of every server in the config's order, as Pi lists it", () => {
    const offer = offerSkills([
      { server: server("docs"), entries: [entry("pdf-tools", ["references/FORMS.md"]), entry("release-notes")] },
      { server: server("notes"), entries: [entry("meeting-notes")] },
    ]);
    expect(offer.offered).toEqual([
      { server: "docs", name: "pdf-tools", description: "The pdf-tools skill.", commandOnly: false },
      { server: "docs", name: "release-notes", description: "The release-notes skill.", commandOnly: false },
      { server: "notes", name: "meeting-notes", description: "The meeting-notes skill.", commandOnly: false },
    ]);
    expect(offer.leftOut).toEqual([]);
  });

  it("skills: false, a disabled server, includeSkills and excludeSkills (globs) keep skills out", () => {
    const listed = [entry("pdf-tools"), entry("pdf-old"), entry("release-notes")];
    const offer = offerSkills([
      { server: server("off", { skills: false }), entries: listed },
      { server: server("disabled", { enabled: false }), entries: listed },
      { server: server("docs", { includeSkills: ["pdf-*"], excludeSkills: ["*-old"] }), entries: listed },
    ]);
    expect(names(offer.offered)).toEqual(["docs/pdf-tools"]);
    expect(offer.leftOut).toEqual([
      { server: "docs", name: "pdf-old", reason: "left out by includeSkills / excludeSkills" },
      { server: "docs", name: "release-notes", reason: "left out by includeSkills / excludeSkills" },
    ]);
  });

  it("the first server in the config's order keeps a name two servers offer", () => {
    const offer = offerSkills([
      { server: server("a"), entries: [entry("pdf-tools")] },
      { server: server("b"), entries: [entry("pdf-tools"), entry("other")] },
    ]);
    expect(names(offer.offered)).toEqual(["a/pdf-tools", "b/other"]);
    expect(offer.leftOut).toEqual([{ server: "b", name: "pdf-tools", reason: 'server "a" offers a skill of that name' }]);
  });

  it("keeps a description within Pi's limit and says when a skill is for /skill: only", () => {
    const long = entry("long", [], { frontmatter: { name: "long", description: "d".repeat(2000), "disable-model-invocation": true } });
    const [offered] = offerSkills([{ server: server("docs"), entries: [long] }]).offered;
    expect(offered!.description).toHaveLength(MAX_DESCRIPTION_CHARS);
    expect(offered!.description.endsWith("…")).toBe(true);
    expect(offered!.commandOnly).toBe(true);
  });

  it("does not offer what Pi could not list or the session could not verify, and says why", () => {
    const entries = [
      entry("Bad_Name", [], { uri: "skill://Bad_Name/SKILL.md" }),
      entry("no-description", [], { frontmatter: { name: "no-description", description: " " } }),
      entry("dynamic", [], { resources: "dynamic" }),
      entry("escapes", ["..%2F..%2Fetc/passwd"]),
      entry("outside", [], {
        resources: [
          { uri: "skill://outside/SKILL.md", digest: DIGEST, size: 1 },
          { uri: "skill://elsewhere/x.md", digest: DIGEST, size: 1 },
        ],
      }),
    ];
    const offer = offerSkills([{ server: server("docs"), entries }]);
    expect(offer.offered).toEqual([]);
    expect(offer.leftOut.map((left) => `${left.name}: ${left.reason}`)).toEqual([
      "Bad_Name: its name is not a skill name (lowercase letters, digits and single hyphens, at most 64)",
      "no-description: it has no description",
      'dynamic: its files are not listed ("dynamic"), so they cannot be verified',
      "escapes: its file skill://escapes/..%2F..%2Fetc/passwd has no path of its own inside the skill's folder",
      "outside: its file skill://elsewhere/x.md has no path of its own inside the skill's folder",
    ]);
  });
});

describe("skillFiles", () => {
  it("maps each file to its path in the skill's folder, percent-encoding decoded", () => {
    const files = skillFiles(entry("pdf-tools", ["references/FORMS.md", "Q%26A.md"]));
    expect(typeof files === "object" && [...files.keys()]).toEqual(["SKILL.md", "references/FORMS.md", "Q&A.md"]);
  });
});

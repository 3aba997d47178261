/**
 * What a server's skills cost the model on every request: the tokens (o200k) they add to the real Pi's system prompt
 * at 1, 10 and 100 skills, over the same session with none. Only a skill's name, description and location are
 * always there (its files are fetched when read), so that is what is measured. The descriptions are generated at
 * the length of real ones: the Agent Skills examples (anthropics/skills) run 150–450 characters, "what it does and
 * when to use it"; these have about 270. The location is a path under the agent dir (a short temp dir here, about as
 * long as `~/.pi/agent` expanded). No server starts: discovery reads the listing the cache holds.
 *
 * The same skills installed in Pi's own skills folder are the baseline (Pi's own `formatSkillsForPrompt` on them):
 * an MCP skill should cost what a local one does, plus its longer location (`mcp-skills/<server>-<id>/`). Runs on
 * the host of this process (Pi 0.73.1 on Node 20, 0.87.1 or 1.5.2 with PI_TEST_HOST on Node 22).
 *
 *   node node_modules/jiti/lib/jiti-cli.mjs bench/skills-tokens.ts
 *
 * Until the adapter's session offers skills, it runs the skills code through the test extension that does
 * (test/fixtures/extensions/skills-harness.ts); the stubs, folders and so the system prompt are the same.
 */
import { createHash } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HARNESS_FILE } from "../test/fixtures/extensions/skills-harness.ts";
import { currentHost, REPO_ROOT } from "../test/helpers/hosts.ts";
import { startSession } from "../test/helpers/pi-session.ts";
import type { SkillEntry } from "../types.ts";
import { fixed, reportGoal, table, tokens } from "./measure.ts";

const HARNESS = join(REPO_ROOT, "test/fixtures/extensions/skills-harness.ts");
const COUNTS = [1, 10, 100];
/** What the longer location of an MCP skill (`mcp-skills/<server>/`, a short server name) may cost over a local one. */
const MAX_EXTRA_PER_SKILL = 5;
const TOPICS = ["PDF forms", "release notes", "database migrations", "incident reviews", "API changelogs", "invoices", "test plans"];
const ACTIONS = ["draft", "check", "convert", "summarise", "review"];

/** A skill entry as a server lists it: the frontmatter and its SKILL.md's real size and digest. */
function skill(index: number): SkillEntry {
  const name = `skill-${index}`;
  const topic = TOPICS[index % TOPICS.length]!;
  const action = ACTIONS[index % ACTIONS.length]!;
  const description =
    `${action[0]!.toUpperCase()}${action.slice(1)} ${topic} for team ${index}: gathers the sources, applies the house ` +
    `template and style rules, checks names, dates and figures against the records, and lists what is missing. Use ` +
    `when the user asks to ${action} ${topic} or mentions their ${topic} workflow.`;
  const text = `---\nname: ${name}\ndescription: ${description}\n---\n\nInstructions.\n`;
  const uri = `skill://${name}/SKILL.md`;
  const digest = `sha256:${createHash("sha256").update(text).digest("hex")}`;
  return { uri, frontmatter: { name, description }, resources: [{ uri, digest, size: Buffer.byteLength(text) }] };
}

interface Measured {
  /** The system prompt's tokens. */
  tokens: number;
  /** What the same skills cost as local skills (`<agentDir>/skills/<name>/SKILL.md`), by Pi's own formatter. */
  localTokens: number;
  descriptionChars: number;
}

async function measure(count: number, cwd: string): Promise<Measured> {
  const agentDir = await mkdtemp(join(tmpdir(), "pi-skills-bench-"));
  const entries = Array.from({ length: count }, (_, index) => skill(index + 1));
  try {
    await writeFile(join(agentDir, HARNESS_FILE), JSON.stringify({ entries, env: {} }));
    const pi = await startSession({ extensions: [HARNESS], agentDir, cwd, script: ["ok"] });
    try {
      await pi.prompt("go");
      const prompt = pi.requests[0]!.systemPrompt;
      const listed = prompt.match(/<skill>/g)?.length ?? 0;
      if (listed !== count) throw new Error(`expected ${count} skills in the system prompt, found ${listed}`);
      return {
        tokens: tokens(prompt),
        localTokens: tokens(await localSection(agentDir, entries)),
        descriptionChars: entries.reduce((sum, entry) => sum + entry.frontmatter.description.length, 0),
      };
    } finally {
      await pi.dispose();
    }
  } finally {
    await rm(agentDir, { recursive: true, force: true });
  }
}

/** The skills section Pi writes for these skills installed in its own skills folder. */
async function localSection(agentDir: string, entries: readonly SkillEntry[]): Promise<string> {
  const { formatSkillsForPrompt } = (await import(host.packageName)) as { formatSkillsForPrompt: (skills: unknown[]) => string };
  const skills = entries.map(({ frontmatter: { name, description } }) => {
    const filePath = join(agentDir, "skills", name, "SKILL.md");
    return { name, description, filePath, baseDir: join(agentDir, "skills", name), disableModelInvocation: false };
  });
  return formatSkillsForPrompt(skills);
}

const host = currentHost();
// One project folder for every run: its path is in the system prompt.
const cwd = await mkdtemp(join(tmpdir(), "pi-skills-bench-cwd-"));
const baseline = await measure(0, cwd);
const rows = [];
for (const count of COUNTS) {
  const measured = await measure(count, cwd);
  rows.push({
    count,
    added: measured.tokens - baseline.tokens,
    local: measured.localTokens,
    meanDescription: measured.descriptionChars / count,
  });
}
await rm(cwd, { recursive: true, force: true });
console.log(`Pi ${host.version}: system prompt tokens (o200k) the skills add over the same session without skills.\n`);
console.log(
  table(
    ["skills", "description (mean chars)", "tokens added", "per skill", "same skills installed locally (Pi's formatter)"],
    rows.map((row) => [
      fixed(row.count),
      fixed(row.meanDescription),
      `+${fixed(row.added)}`,
      fixed(row.added / row.count, 1),
      `+${fixed(row.local)}`,
    ]),
  ),
);
console.log();
// Per skill beyond the first: Pi's fixed skills header (and, on 0.87+, its <skills> section tags) cancel out.
const [one, , hundred] = rows as [(typeof rows)[0], unknown, (typeof rows)[0]];
const perSkill = (hundred.added - one.added) / (hundred.count - one.count);
const perLocalSkill = (hundred.local - one.local) / (hundred.count - one.count);
reportGoal({
  goal: `Pi ${host.version}: always-on tokens per MCP skill`,
  target: `a local skill's (the same name and description in Pi's skills folder) + ≤ ${MAX_EXTRA_PER_SKILL} (the longer location)`,
  measured: `${fixed(perSkill, 1)} per skill (local: ${fixed(perLocalSkill, 1)}); the first brings Pi's skills header: +${fixed(one.added)} in all`,
  met: perSkill - perLocalSkill <= MAX_EXTRA_PER_SKILL,
  margin: `${fixed(perSkill - perLocalSkill, 1)} more per skill than a local one`,
});

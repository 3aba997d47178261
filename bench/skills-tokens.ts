/**
 * What a server's skills cost the model on every request: the tokens (o200k) they add to the real Pi's system prompt
 * at 1, 10 and 100 skills, with the adapter (pi-mcp-adapter.ts) loaded as a user loads it, over the same session with
 * none. Only a skill's name, description and location are always there (its files are fetched when read), so that is
 * what is measured. The descriptions are generated at the length of real ones: the Agent Skills examples
 * (anthropics/skills) run 150–450 characters, "what it does and when to use it"; these have about 270. The location is
 * a path under the agent dir (a short temp dir here, about as long as `~/.pi/agent` expanded).
 *
 * The skills are a lazy server's (`docs`), listed in the metadata cache as the adapter writes it after a listing: no
 * server starts (discovery reads the cache; the config's command is never run). The baseline is the same skills
 * installed in Pi's own skills folder (`<agentDir>/skills/<name>/SKILL.md`, offered to Pi by bench/probes/local-skills.ts
 * since the test hosts turn Pi's own discovery off), measured the same way: Pi's system prompt with them over the same
 * session with none, in the same agent dir and project folder. An MCP skill should
 * cost what a local one does, plus its longer location (`mcp-skills/<server>/`). Runs on the host of this process
 * (Pi 0.73.1 on Node 20, 0.87.1 or 1.x with PI_TEST_HOST on Node 22).
 *
 *   node node_modules/jiti/lib/jiti-cli.mjs bench/skills-tokens.ts
 */
import { createHash } from "node:crypto";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { currentHost, REPO_ROOT } from "../test/helpers/hosts.ts";
import { startSession } from "../test/helpers/pi-session.ts";
import type { SkillEntry } from "../types.ts";
import { type CorpusAgent, prepareCorpusAgent, writeCorpusCache } from "./corpus.ts";
import { fixed, reportGoal, table, tokens } from "./measure.ts";

const ADAPTER = join(REPO_ROOT, "pi-mcp-adapter.ts");
const LOCAL_SKILLS = join(REPO_ROOT, "bench/probes/local-skills.ts");
/** The server offering the skills: a short name, as a location holds it. */
const SERVER = "docs";
const COUNTS = [1, 10, 100];
/** What the longer location of an MCP skill (`mcp-skills/<server>/`, a short server name) may cost over a local one. */
const MAX_EXTRA_PER_SKILL = 5;
const TOPICS = ["PDF forms", "release notes", "database migrations", "incident reviews", "API changelogs", "invoices", "test plans"];
const ACTIONS = ["draft", "check", "convert", "summarise", "review"];

/** A skill's SKILL.md: the frontmatter Pi lists (the description quoted: it holds a colon, which plain YAML refuses). */
function skillFile(index: number): { name: string; description: string; text: string } {
  const name = `skill-${index}`;
  const topic = TOPICS[index % TOPICS.length]!;
  const action = ACTIONS[index % ACTIONS.length]!;
  const description =
    `${action[0]!.toUpperCase()}${action.slice(1)} ${topic} for team ${index}: gathers the sources, applies the house ` +
    `template and style rules, checks names, dates and figures against the records, and lists what is missing. Use ` +
    `when the user asks to ${action} ${topic} or mentions their ${topic} workflow.`;
  return { name, description, text: `---\nname: ${name}\ndescription: ${JSON.stringify(description)}\n---\n\nInstructions.\n` };
}

/** The skill as a server lists it: the frontmatter and its SKILL.md's real size and digest. */
function skillEntry(index: number): SkillEntry {
  const { name, description, text } = skillFile(index);
  const uri = `skill://${name}/SKILL.md`;
  const digest = `sha256:${createHash("sha256").update(text).digest("hex")}`;
  return { uri, frontmatter: { name, description }, resources: [{ uri, digest, size: Buffer.byteLength(text) }] };
}

interface Measured {
  /** The system prompt's tokens the server's skills add. */
  mcp: number;
  /** What the same skills add installed in Pi's skills folder. */
  local: number;
  descriptionChars: number;
}

/**
 * The system prompt's tokens, with the adapter and the local skills' probe loaded in every run and the agent dir as it
 * is; checks how many skills Pi lists.
 */
async function promptTokens(agent: CorpusAgent, skills: number): Promise<number> {
  const extensions = [ADAPTER, LOCAL_SKILLS];
  const pi = await startSession({ extensions, agentDir: agent.agentDir, cwd: agent.cwd, script: ["ok"] });
  try {
    await pi.prompt("go");
    const prompt = pi.requests[0]!.systemPrompt;
    const listed = prompt.match(/<skill>/g)?.length ?? 0;
    if (listed !== skills) throw new Error(`expected ${skills} skills in the system prompt, found ${listed}`);
    return tokens(prompt);
  } finally {
    await pi.dispose();
  }
}

/** In one agent dir and project folder (their paths are in the prompt): no skills, the local ones, the server's. */
async function measure(count: number): Promise<Measured> {
  const indexes = Array.from({ length: count }, (_, index) => index + 1);
  const agent = await prepareCorpusAgent([{ server: SERVER, tools: [] }]);
  try {
    const none = await promptTokens(agent, 0);
    const localDir = join(agent.agentDir, "skills");
    for (const { name, text } of indexes.map(skillFile)) {
      await mkdir(join(localDir, name), { recursive: true });
      await writeFile(join(localDir, name, "SKILL.md"), text);
    }
    const local = await promptTokens(agent, count);
    await rm(localDir, { recursive: true, force: true });
    await writeCorpusCache(agent.agentDir, agent.cwd, [{ server: SERVER, tools: [], skills: indexes.map(skillEntry) }]);
    const mcp = await promptTokens(agent, count);
    const descriptionChars = indexes.reduce((sum, index) => sum + skillFile(index).description.length, 0);
    return { mcp: mcp - none, local: local - none, descriptionChars };
  } finally {
    await agent.cleanup();
  }
}

const host = currentHost();
const rows = [];
for (const count of COUNTS) rows.push({ count, ...(await measure(count)) });
console.log(
  `Pi ${host.version}, the adapter loaded: system prompt tokens (o200k) a server's skills add over the same session ` +
    "without skills, and the same skills installed in Pi's skills folder.\n",
);
console.log(
  table(
    ["skills", "description (mean chars)", "MCP skills: tokens added", "per skill", "local skills: tokens added", "per skill"],
    rows.map((row) => [
      fixed(row.count),
      fixed(row.descriptionChars / row.count),
      `+${fixed(row.mcp)}`,
      fixed(row.mcp / row.count, 1),
      `+${fixed(row.local)}`,
      fixed(row.local / row.count, 1),
    ]),
  ),
);
console.log();
// Per skill beyond the first: Pi's fixed skills header (and, on 0.87+, its <skills> section tags) cancel out.
const [one, , hundred] = rows as [(typeof rows)[0], unknown, (typeof rows)[0]];
const perSkill = (hundred.mcp - one.mcp) / (hundred.count - one.count);
const perLocalSkill = (hundred.local - one.local) / (hundred.count - one.count);
reportGoal({
  goal: `Pi ${host.version}: always-on tokens per MCP skill`,
  target: `a local skill's (the same name and description in Pi's skills folder) + ≤ ${MAX_EXTRA_PER_SKILL} (the longer location)`,
  measured:
    `${fixed(perSkill, 1)} per skill (local: ${fixed(perLocalSkill, 1)}); the first brings Pi's skills header: ` +
    `+${fixed(one.mcp)} in all at 1 skill, +${fixed(rows[1]!.mcp)} at 10, +${fixed(hundred.mcp)} at 100`,
  met: perSkill - perLocalSkill <= MAX_EXTRA_PER_SKILL,
  margin: `${fixed(perSkill - perLocalSkill, 1)} more per skill than a local one`,
});

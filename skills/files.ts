/**
 * Where a server's skills live on disk, for Pi to list and read: `<agentDir>/mcp-skills/<server>/<skill>/`, private
 * to the user (folders 0700, files 0600: a skill of a server the user signed in to may be theirs alone). The skill's
 * folder is its name, as Pi (0.73) wants it. The location is in the system prompt with every skill, so it is kept
 * short: the server's name alone (8 hex digits of a definition would cost 6 more tokens per skill). Two definitions
 * of one server name (two projects) may so share a folder; that costs nothing wrong: a session writes each file it
 * fetched, verified, right before Pi reads it, and refuses a file its own server does not list.
 *
 * At discovery each offered skill gets a stub `SKILL.md`: the frontmatter Pi lists (name, description, and
 * `disable-model-invocation`), and a line saying where the instructions come from. A file is written only when its
 * content changes, always atomically (another Pi session may be reading it).
 */
import { createHash } from "node:crypto";
import { mkdir, readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { writeFileAtomic } from "../util/atomic-file.ts";
import type { OfferedSkill } from "./offer.ts";

export const SKILLS_DIR_NAME = "mcp-skills";
export const MANIFEST = "SKILL.md";

export function skillsRoot(agentDir: string): string {
  return join(agentDir, SKILLS_DIR_NAME);
}

/** The folder of a server's skills: its name, with a hash of it when it is not a safe folder name as it is. */
export function serverFolder(agentDir: string, server: string): string {
  const safe = server.replace(/[^A-Za-z0-9_.-]/g, "_");
  const name =
    safe === server && !/^\.+$/.test(server) ? server : `${safe}-${createHash("sha256").update(server).digest("hex").slice(0, 8)}`;
  return join(skillsRoot(agentDir), name);
}

/** What Pi finds before the skill is read: enough to list it, and the way to its instructions. */
export function stubText(skill: OfferedSkill): string {
  // JSON strings are YAML scalars: any description (quotes, colons, newlines) reads back exactly.
  const fields = [`name: ${JSON.stringify(skill.name)}`, `description: ${JSON.stringify(skill.description)}`];
  if (skill.commandOnly) fields.push("disable-model-invocation: true");
  const body = `This skill comes from the MCP server "${skill.server}". Its instructions are fetched from the server, and checked against what the server listed, when this file is opened with the read tool.`;
  return `---\n${fields.join("\n")}\n---\n\n${body}\n`;
}

/**
 * Writes `content` at `path` unless it is there already; the folders on the way below the skills root are made
 * private. Returns whether it wrote.
 */
export async function writePrivateFile(root: string, path: string, content: string | Uint8Array): Promise<boolean> {
  const wanted = typeof content === "string" ? Buffer.from(content) : content;
  const current = await readFile(path).catch(() => undefined);
  if (current?.equals(wanted)) return false;
  await mkdir(root, { recursive: true, mode: 0o700 });
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  await writeFileAtomic(path, wanted, { mode: 0o600 });
  return true;
}

/** The file a `read` of `path` opens, as Pi's read tool resolves it (`@` prefix, `~`, relative to the session's cwd). */
export function readToolPath(path: string, cwd: string): string {
  const bare = path.startsWith("@") ? path.slice(1) : path;
  const home = bare === "~" || bare.startsWith("~/") ? join(homedir(), bare.slice(1)) : bare;
  return isAbsolute(home) ? resolve(home) : resolve(cwd, home);
}

/** `path` relative to `folder` when it is inside it (`/`-separated), else undefined. */
export function pathInside(folder: string, path: string): string | undefined {
  const rest = relative(folder, path);
  if (rest === "" || rest.startsWith("..") || isAbsolute(rest)) return undefined;
  return rest.split(/[\\/]/).join("/");
}

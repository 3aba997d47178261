/**
 * Which of the servers' skills a session offers to Pi, and why each other one is not. A skill is offered when its
 * server's config lets it through (`skills: false`, `includeSkills` / `excludeSkills`: name patterns as the tool
 * filters read them), when Pi can list it as the server describes it (a valid name, a description), and when every
 * one of its files is listed with a size and a digest under a path that stays inside the skill's folder (each file is
 * verified when read: a skill whose files cannot be is not offered). Two servers offering one name: the first in the
 * config's order keeps it.
 *
 * Only servers the session uses are given (an untrusted project's servers are not in the config at all).
 */
import { matchesAnyPattern } from "../tool-metadata.ts";
import type { ServerDefinition, SkillEntry, SkillFileEntry } from "../types.ts";
import { truncate } from "../util/text.ts";

/** Pi's own limit on a skill's description (longer ones load, with a warning Pi shows at startup). */
export const MAX_DESCRIPTION_CHARS = 1024;
/** The Agent Skills name rule, which Pi warns about too: it also names the skill's folder, so nothing else passes. */
const SKILL_NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const MAX_NAME_CHARS = 64;
const MANIFEST = "SKILL.md";

/** A configured server and the skill entries of its last listing (cached or live). */
export interface ServerSkills {
  server: ServerDefinition;
  entries: readonly SkillEntry[];
}

/** A skill the session offers, as Pi lists it. Its files are found again in the server's freshest entry when read. */
export interface OfferedSkill {
  server: string;
  name: string;
  /** Cut to Pi's limit. */
  description: string;
  /** `disable-model-invocation: true`: left out of the system prompt, loaded by `/skill:<name>` only. */
  commandOnly: boolean;
}

/** A skill a server lists that the session does not offer, and why (one clause). */
export interface SkillLeftOut {
  server: string;
  name: string;
  reason: string;
}

export interface SkillOffer {
  offered: OfferedSkill[];
  leftOut: SkillLeftOut[];
}

export function offerSkills(listings: readonly ServerSkills[]): SkillOffer {
  const offer: SkillOffer = { offered: [], leftOut: [] };
  const takenBy = new Map<string, string>();
  for (const { server, entries } of listings) {
    if (server.enabled === false || server.skills === false) continue;
    for (const entry of entries) {
      const name = entry.frontmatter.name;
      const reason = whyNotOffered(server, entry) ?? takenReason(takenBy.get(name));
      if (reason) {
        offer.leftOut.push({ server: server.name, name, reason });
        continue;
      }
      takenBy.set(name, server.name);
      offer.offered.push({
        server: server.name,
        name,
        description: truncate(entry.frontmatter.description, MAX_DESCRIPTION_CHARS),
        commandOnly: entry.frontmatter["disable-model-invocation"] === true,
      });
    }
  }
  return offer;
}

function whyNotOffered(server: ServerDefinition, entry: SkillEntry): string | undefined {
  const { name, description } = entry.frontmatter;
  if (typeof name !== "string" || name.length > MAX_NAME_CHARS || !SKILL_NAME.test(name))
    return "its name is not a skill name (lowercase letters, digits and single hyphens, at most 64)";
  if (filteredOut(server, name)) return "left out by includeSkills / excludeSkills";
  if (typeof description !== "string" || description.trim() === "") return "it has no description";
  const files = skillFiles(entry);
  return typeof files === "string" ? files : undefined;
}

function takenReason(server: string | undefined): string | undefined {
  return server === undefined ? undefined : `server "${server}" offers a skill of that name`;
}

/** `includeSkills` (when set) must match the name, then `excludeSkills` must not. */
function filteredOut(server: ServerDefinition, name: string): boolean {
  if (server.includeSkills && !matchesAnyPattern(server.includeSkills, [name])) return true;
  return matchesAnyPattern(server.excludeSkills, [name]);
}

/**
 * The skill's files by their path in its folder (`SKILL.md`, `references/FORMS.md`), or why they cannot be written
 * there: not listed ("dynamic"), or a URI outside the skill's folder or with a segment no file name can be.
 */
export function skillFiles(entry: SkillEntry): Map<string, SkillFileEntry> | string {
  if (entry.resources === "dynamic") return `its files are not listed ("dynamic"), so they cannot be verified`;
  const manifest = canonical(entry.uri);
  if (!manifest?.endsWith(`/${MANIFEST}`)) return `its URI ${entry.uri} does not name a ${MANIFEST}`;
  const root = manifest.slice(0, -MANIFEST.length);
  const files = new Map<string, SkillFileEntry>();
  for (const file of entry.resources) {
    const path = pathInSkill(root, file.uri);
    if (path === undefined || files.has(path)) return `its file ${file.uri} has no path of its own inside the skill's folder`;
    files.set(path, file);
  }
  return files.has(MANIFEST) ? files : `its files do not include its ${MANIFEST}`;
}

/** `references/FORMS.md` for `<root>references/FORMS.md`; undefined when it leaves the folder or cannot be a file name. */
function pathInSkill(root: string, uri: string): string | undefined {
  const file = canonical(uri);
  if (!file?.startsWith(root) || /[?#]/.test(file)) return undefined;
  const segments = file.slice(root.length).split("/").map(decoded);
  return segments.every(isFileName) ? segments.join("/") : undefined;
}

function isFileName(segment: string | undefined): segment is string {
  return segment !== undefined && segment !== "" && segment !== "." && segment !== ".." && !/[/\\\0]/.test(segment);
}

function decoded(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

function canonical(uri: string): string | undefined {
  return URL.canParse(uri) ? new URL(uri).href : undefined;
}

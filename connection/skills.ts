/**
 * A server's skills (MCP Skills extension, SEP-2640) through the official SDK v2's `SkillsClient`: its `skills/list`
 * entries, and each file read and verified against its entry (listed, size, sha256 digest, and for `SKILL.md` the
 * frontmatter field by field). In both eras: a 2025-11-25 session lists and reads them as a 2026-07-28 one does.
 * Loaded with the SDK half of the connection code only: nothing at Pi's startup imports it.
 */
import type { Client } from "@modelcontextprotocol/client";
import { type Skill, SkillsClient, SkillVerificationError } from "@modelcontextprotocol/client/ext/skills";
import { keptSkillEntry, type SkillListing, type SkillRead, type SkillSource } from "../types.ts";

/** The skills of the server `client` is connected to (the capability is read at each call: connect first). */
export function skillSource(client: Client): SkillSource {
  // skipInvalid: one bad entry costs that skill, not the server's whole listing.
  const skills = new SkillsClient(client, { skipInvalid: true });
  return {
    async list(options): Promise<SkillListing> {
      // The SDK writes a console.debug line when asked to list a server without the extension: Pi's TUI would show it.
      if (!skills.supported) return { skills: [], problems: [] };
      const listing = await skills.list({}, options);
      return {
        skills: listing.skills.map(keptSkillEntry),
        problems: listing.invalid.map(
          (refused) => `skill ${refused.uri ?? `#${refused.index + 1}`} of skills/list left out: ${refused.reason}`,
        ),
      };
    },
    async read(entry, fileUri, options): Promise<SkillRead> {
      try {
        const file = await skills.read(entry as Skill, fileUri, options);
        // A "dynamic" skill's files come unverified: nothing listed them, so they are not handed over.
        if (!file.verified) return { ok: false, reason: "unlisted", message: `${fileUri} is not listed with a size and digest` };
        return { ok: true, bytes: file.bytes };
      } catch (error) {
        if (error instanceof SkillVerificationError) return { ok: false, reason: error.reason, message: error.message };
        throw error;
      }
    },
  };
}

/**
 * The ranking as it was at an earlier commit, for measuring ours against it in the same run: its search modules are
 * read out of git into a folder under node_modules/.cache (so `stemmer` still resolves) and imported from there.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../test/helpers/hosts.ts";
import type { ToolMetadata } from "../types.ts";

/** main before issue 10: the ranking tuned on our own sets only. */
export const PREVIOUS_RANKING_COMMIT = "5b841fa";
/** What search-index.ts needed at that commit. */
const MODULES = ["search-index.ts", "search-query.ts", "search-synonyms.ts", "search-text.ts", "term-reader.ts", "types.ts", "guards.ts"];

type BuildSearchIndex = (tools: readonly ToolMetadata[]) => { search(query: string, limit?: number): { tool: ToolMetadata }[] };

export async function previousBuildSearchIndex(commit = PREVIOUS_RANKING_COMMIT): Promise<BuildSearchIndex> {
  const dir = join(REPO_ROOT, "node_modules/.cache/previous-ranking", commit);
  mkdirSync(dir, { recursive: true });
  for (const module of MODULES) {
    writeFileSync(join(dir, module), execFileSync("git", ["show", `${commit}:${module}`], { cwd: REPO_ROOT }));
  }
  const loaded = (await import(join(dir, "search-index.ts"))) as { buildSearchIndex: BuildSearchIndex };
  return loaded.buildSearchIndex;
}

/**
 * Name patterns over tools: `includeTools` / `excludeTools` (which tools a server offers at all) and `approveTools`
 * (which ones ask before they run) all match the same way, so a pattern means one thing wherever it is written.
 *
 * A pattern is an exact name or a glob (`*` any run of characters, `?` one character), matched against the whole of
 * each name a tool goes by: its MCP name, the Pi name the model sees, and the name pi-mcp-adapter 2.x (upstream)
 * gives it (`<server>_<tool>`), so filters written for upstream keep selecting the same tools here.
 */
import { getServerPrefix } from "../tool-names.ts";

/** The tool-selecting fields of a server entry. */
export interface ToolFilter {
  includeTools?: readonly string[];
  excludeTools?: readonly string[];
}

const compiled = new Map<string, RegExp>();

export function isGlob(pattern: string): boolean {
  return pattern.includes("*") || pattern.includes("?");
}

function globRegExp(pattern: string): RegExp {
  let regexp = compiled.get(pattern);
  if (!regexp) {
    const source = pattern
      .replace(/[.+^${}()|[\]\\]/g, "\\$&")
      .replace(/\*/g, ".*")
      .replace(/\?/g, ".");
    regexp = new RegExp(`^${source}$`, "s");
    compiled.set(pattern, regexp);
  }
  return regexp;
}

export function globMatches(pattern: string, name: string): boolean {
  return globRegExp(pattern).test(name);
}

/** True when one of the patterns matches one of the names. */
export function matchesAnyPattern(patterns: readonly string[] | undefined, names: readonly string[]): boolean {
  if (!patterns || patterns.length === 0) return false;
  return patterns.some((pattern) => (isGlob(pattern) ? names.some((name) => globMatches(pattern, name)) : names.includes(pattern)));
}

/**
 * The names a pattern may use for a tool of `serverName`: those given (MCP name, Pi name, a resource's names), each
 * also behind upstream's `<server>_` prefix.
 */
export function patternNames(serverName: string, names: readonly string[]): string[] {
  const upstreamPrefix = `${getServerPrefix(serverName, "server")}_`;
  const all = new Set(names);
  for (const name of names) all.add(upstreamPrefix + name);
  return [...all];
}

/** `includeTools` (when set) must match, then `excludeTools` must not. */
export function isToolFilteredOut(filter: ToolFilter, serverName: string, names: readonly string[]): boolean {
  if (!filter.includeTools && !filter.excludeTools) return false;
  const candidates = patternNames(serverName, names);
  if (filter.includeTools && !matchesAnyPattern(filter.includeTools, candidates)) return true;
  return matchesAnyPattern(filter.excludeTools, candidates);
}

/**
 * What the model loaded, as the session records it: every ToolSearch answer (and every McpCall that activated a
 * tool) names the tools it activated in its result's `details.loaded`. Those results are entries of the session
 * tree, so they follow the branch: read from the branch they say what must be active there after a reload, a
 * resume, a fork or a move in `/tree`, on every host (Pi ≥ 0.87 also replays its own record of the active tools
 * on `/tree` and resume; Pi 0.73 does neither, so the adapter does it for all).
 */
import { MCP_CALL_NAME, TOOL_SEARCH_NAME } from "../types.ts";

/** The record a loading answer keeps in its details. */
export interface LoadRecord {
  /** Tools this call activated. */
  loaded?: string[];
  /** Servers whose instructions the answer showed (ToolSearch only: shown once per branch). */
  instructed?: string[];
}

/** The part of a session entry this module reads (both hosts' `SessionEntry` have it). */
export interface SessionEntryView {
  type: string;
  message?: { role: string; toolName?: string; details?: unknown };
}

/** Tools loaded by the adapter's tools in `entries` (a branch, or the whole session). */
export function loadedIn(entries: readonly SessionEntryView[]): Set<string> {
  return namesIn(entries, "loaded");
}

/** Servers whose instructions a ToolSearch answer in `entries` showed: the model has them already. */
export function instructedIn(entries: readonly SessionEntryView[]): Set<string> {
  return namesIn(entries, "instructed");
}

/**
 * The active set after moving to another branch: tools loaded only on other branches are dropped, the tools
 * loaded on this branch are added; everything else (built-in tools, other extensions' tools, direct MCP tools)
 * stays as it is. Undefined when nothing changes (always, on hosts that replayed their own record first).
 */
export function activeOnBranch(
  active: readonly string[],
  onBranch: ReadonlySet<string>,
  anywhere: ReadonlySet<string>,
  keep: ReadonlySet<string>,
): string[] | undefined {
  const elsewhere = (name: string) => anywhere.has(name) && !onBranch.has(name) && !keep.has(name);
  const kept = active.filter((name) => !elsewhere(name));
  const added = [...onBranch].filter((name) => !active.includes(name));
  return kept.length === active.length && added.length === 0 ? undefined : [...kept, ...added];
}

function namesIn(entries: readonly SessionEntryView[], field: keyof LoadRecord): Set<string> {
  const names = new Set<string>();
  for (const entry of entries) {
    const message = entry.message;
    if (entry.type !== "message" || message?.role !== "toolResult") continue;
    if (message.toolName !== TOOL_SEARCH_NAME && message.toolName !== MCP_CALL_NAME) continue;
    const list = (message.details as LoadRecord | undefined)?.[field];
    for (const name of Array.isArray(list) ? list : []) if (typeof name === "string") names.add(name);
  }
  return names;
}

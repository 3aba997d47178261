/**
 * The whole result of a call, for a program rather than the model: what a Pi 1.x codemode script's call resolves to
 * (host/call-result-schema.ts says why that shape). Content blocks as the server sent them, never cut or spilled:
 * the script decides what reaches the model. `_meta` is protocol bookkeeping, left out as Pi's own client does.
 */
import { isJsonObject } from "../util/guards.ts";

/** A `CallToolResult` without `_meta`. */
export type ScriptResult = { content: unknown[] } & Record<string, unknown>;

/** A `tools/call` answer as a script receives it. */
export function scriptResultOfCall(raw: unknown): ScriptResult {
  if (!isJsonObject(raw)) return { content: [] };
  const { _meta: _left, ...result } = raw;
  return { ...result, content: Array.isArray(result.content) ? result.content : [] };
}

/** A `resources/read` answer (a resource offered as a tool) as a call's result: each resource an embedded block. */
export function scriptResultOfRead(raw: unknown): ScriptResult {
  const contents = isJsonObject(raw) && Array.isArray(raw.contents) ? raw.contents : [];
  return { content: contents.map((resource) => ({ type: "resource", resource })) };
}

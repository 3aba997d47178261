/**
 * The rules that turn MCP tool names into names every LLM provider accepts (`^[a-zA-Z0-9_-]{1,64}$`), unique among
 * Pi's builtins, the adapter's own tools and each other, and the same from one session to the next.
 */
import { createHash } from "node:crypto";
import { MCP_CALL_NAME, TOOL_SEARCH_NAME, type ToolPrefixMode } from "./types.ts";
import { compareStrings } from "./util/text.ts";

/**
 * Pi's builtin tools: an MCP tool must never take one of these names (it would replace the builtin). Pi 0.87
 * added `powershell`.
 */
export const BUILTIN_TOOL_NAMES: ReadonlySet<string> = new Set(["read", "bash", "edit", "write", "grep", "find", "ls", "powershell"]);
/** Names of the adapter's own tools. */
export const ADAPTER_TOOL_NAMES: ReadonlySet<string> = new Set([TOOL_SEARCH_NAME, MCP_CALL_NAME]);
export const PREFIX_SEPARATOR = "__";
/** What every provider accepts (Anthropic, OpenAI, Google): `^[a-zA-Z0-9_-]{1,64}$`. */
const MAX_TOOL_NAME_LENGTH = 64;
const HASH_LENGTH = 8;

export function shortHash(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, HASH_LENGTH);
}

/** Letters with accents keep their base letter; anything else outside [A-Za-z0-9_-] becomes `_`. */
function sanitizeNamePart(text: string, allowHyphen: boolean): string {
  const ascii = text.normalize("NFKD").replace(/[\u0300-\u036f]/g, "");
  const invalid = allowHyphen ? /[^A-Za-z0-9_-]+/g : /[^A-Za-z0-9_]+/g;
  return ascii.replace(invalid, "_");
}

export function getServerPrefix(serverName: string, mode: ToolPrefixMode): string {
  if (mode === "none") return "";
  if (mode === "mcp") return `mcp${PREFIX_SEPARATOR}${getServerPrefix(serverName, "server")}`;
  const base = mode === "short" ? serverName.replace(/[-_]mcp$/i, "").replace(/^mcp[-_]/i, "") || serverName : serverName;
  return sanitizeNamePart(base, false);
}

/**
 * The name a tool asks for: `<prefix>__<tool>`, sanitised, and shortened with a stable hash when longer than
 * 64 characters. Collisions are settled by `allocateToolNames`.
 */
export function formatToolName(toolName: string, serverName: string, mode: ToolPrefixMode): string {
  const prefix = getServerPrefix(serverName, mode);
  let tool = sanitizeNamePart(toolName, true);
  if (!/[A-Za-z0-9]/.test(tool)) tool = `tool_${shortHash(toolName)}`;
  const full = prefix ? `${prefix}${PREFIX_SEPARATOR}${tool}` : tool;
  if (full.length <= MAX_TOOL_NAME_LENGTH) return full;
  return withHashSuffix(full, `${serverName}\0${toolName}`);
}

function withHashSuffix(name: string, identity: string): string {
  const suffix = `_${shortHash(identity)}`;
  return name.slice(0, MAX_TOOL_NAME_LENGTH - suffix.length) + suffix;
}

export interface ToolNameRequest {
  serverName: string;
  originalName: string;
  /** The server's own `toolPrefix`, over the one given to `allocateToolNames`. */
  mode?: ToolPrefixMode;
}

export interface ToolNameConflict extends ToolNameRequest {
  wanted: string;
  assigned: string;
  reason: "builtin" | "reserved" | "duplicate";
  /** For duplicates: the tool that kept the wanted name. */
  keptBy?: ToolNameRequest;
}

export interface ToolNameAllocation {
  /** key: `toolKey(serverName, originalName)` */
  names: Map<string, string>;
  conflicts: ToolNameConflict[];
}

export function toolKey(serverName: string, originalName: string): string {
  return `${serverName}\0${originalName}`;
}

/**
 * Gives every requested tool a unique, valid name. Deterministic: the same requests (in any order) always give
 * the same names, because tools are settled in (server, tool) order and a loser is renamed with a hash of its
 * own identity, not with a counter that depends on what came before.
 */
export function allocateToolNames(
  requests: readonly ToolNameRequest[],
  mode: ToolPrefixMode,
  reserved: ReadonlySet<string> = ADAPTER_TOOL_NAMES,
): ToolNameAllocation {
  const sorted = [...requests].sort((a, b) => compareStrings(a.serverName, b.serverName) || compareStrings(a.originalName, b.originalName));
  const names = new Map<string, string>();
  const owners = new Map<string, ToolNameRequest>();
  const conflicts: ToolNameConflict[] = [];
  for (const request of sorted) {
    const key = toolKey(request.serverName, request.originalName);
    if (names.has(key)) continue;
    const wanted = formatToolName(request.originalName, request.serverName, request.mode ?? mode);
    const reason = BUILTIN_TOOL_NAMES.has(wanted)
      ? "builtin"
      : reserved.has(wanted)
        ? "reserved"
        : owners.has(wanted)
          ? "duplicate"
          : undefined;
    let assigned = wanted;
    if (reason) {
      assigned = withHashSuffix(wanted, key);
      for (let n = 2; owners.has(assigned) || reserved.has(assigned); n++) assigned = withHashSuffix(wanted, `${key}\0${n}`);
      conflicts.push({ ...request, wanted, assigned, reason, keptBy: reason === "duplicate" ? owners.get(wanted) : undefined });
    }
    names.set(key, assigned);
    owners.set(assigned, request);
  }
  return { names, conflicts };
}

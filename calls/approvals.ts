/**
 * Approvals: tools that ask the user before they run (`approveTools` in `settings` and per server; the server's own
 * rule wins). A call of such a tool — direct, through McpCall, or a resource read — asks through Pi's dialog: allow
 * once, allow this tool for the session, allow this server for the session, or deny.
 *
 * - Fails closed: with no one to answer (print/JSON mode: `ctx.hasUI` false), or a question left unanswered (an RPC
 *   client that never replies: the dialog's timeout; the call aborted), the call does not run, and the model is told
 *   it needs approval and how the user can allow it in the config.
 * - Grants hold for the session: each one is written to the session as a custom entry (`pi.appendEntry`, never sent
 *   to the model) holding only the server's and the tool's MCP names, and read back at the next `session_start`, so
 *   they survive `/reload` and resume like tools the model loaded.
 * - Server annotations (`destructiveHint`, `readOnlyHint`) are not used: only the config decides what asks.
 */
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { isJsonObject } from "../util/guards.ts";
import { truncate } from "../util/text.ts";
import { matchesAnyPattern, patternNames } from "../tool-metadata.ts";
import type { LoadedConfig, ServerDefinition, ToolMetadata } from "../types.ts";
import { DIALOG_TIMEOUT_MS } from "../ui.ts";
import { debugLog } from "../util/debug-log.ts";

/** The custom session entries grants are kept in. */
export const APPROVAL_ENTRY_TYPE = "mcp-approval";

/** A grant as stored in the session: a whole server (no `tool`), or one of its tools by MCP name. */
export interface ApprovalGrant {
  server: string;
  tool?: string;
}

/** What gating a call needs (the session's state has it). */
export interface ApprovalContext {
  readonly servers: ReadonlyMap<string, ServerDefinition>;
  readonly config: Pick<LoadedConfig, "settings">;
  readonly approvals: SessionApprovals;
}

const ALLOW_ONCE = "Allow once";
const DENY = "Deny";

/** The grants of this session, read back from its entries; new ones are written through `record`. */
export class SessionApprovals {
  private readonly servers = new Set<string>();
  private readonly tools = new Set<string>();
  private readonly record: (grant: ApprovalGrant) => void;

  constructor(restored: Iterable<ApprovalGrant>, record: (grant: ApprovalGrant) => void) {
    this.record = record;
    for (const grant of restored) this.remember(grant);
  }

  isGranted(tool: ToolMetadata): boolean {
    return this.servers.has(tool.serverName) || this.tools.has(grantKey(tool.serverName, tool.originalName));
  }

  grant(grant: ApprovalGrant): void {
    this.remember(grant);
    this.record(grant);
  }

  private remember(grant: ApprovalGrant): void {
    if (grant.tool === undefined) this.servers.add(grant.server);
    else this.tools.add(grantKey(grant.server, grant.tool));
  }
}

function grantKey(server: string, tool: string): string {
  return `${server}\0${tool}`;
}

/** The grants among a session's entries (those of a branch, in order). */
export function grantsInSession(entries: Iterable<unknown>): ApprovalGrant[] {
  const grants: ApprovalGrant[] = [];
  for (const entry of entries) {
    if (!isJsonObject(entry) || entry.type !== "custom" || entry.customType !== APPROVAL_ENTRY_TYPE || !isJsonObject(entry.data)) continue;
    const { server, tool } = entry.data;
    if (typeof server !== "string" || (tool !== undefined && typeof tool !== "string")) continue;
    grants.push(tool === undefined ? { server } : { server, tool });
  }
  return grants;
}

/** Does a call of this tool ask first? The server's `approveTools`, else the setting's; patterns as in tools/filters.ts. */
export function needsApproval(context: ApprovalContext, tool: ToolMetadata): boolean {
  const rule = context.servers.get(tool.serverName)?.approveTools ?? context.config.settings.approveTools ?? false;
  const matches = typeof rule === "boolean" ? rule : matchesAnyPattern(rule, patternNames(tool.serverName, [tool.originalName, tool.name]));
  return matches && !context.approvals.isGranted(tool);
}

/**
 * Asks the user about a call that needs approval; resolves when it may run, throws (the model's error result) when
 * it may not. Call it only when `needsApproval` said so: most calls never wait for it.
 */
export async function askApproval(
  context: ApprovalContext,
  tool: ToolMetadata,
  params: unknown,
  ctx: ExtensionContext | undefined,
  signal: AbortSignal | undefined,
): Promise<void> {
  const label = `MCP tool "${tool.originalName}" on server "${tool.serverName}"`;
  if (!ctx?.hasUI)
    throw new Error(`${label} needs the user's approval, and there is no one to ask in this mode. ${howToAllow(context, tool)}`);
  const allowTool = `Allow ${tool.originalName} for this session`;
  const allowServer = `Allow every tool of ${tool.serverName} for this session`;
  const answer = await ctx.ui
    .select(question(tool, params), [ALLOW_ONCE, allowTool, allowServer, DENY], { signal, timeout: DIALOG_TIMEOUT_MS })
    .catch((error: unknown) => debugLog("the approval dialog failed (read as a denial)", error));
  if (answer === ALLOW_ONCE) return;
  if (answer === allowTool) return context.approvals.grant({ server: tool.serverName, tool: tool.originalName });
  if (answer === allowServer) return context.approvals.grant({ server: tool.serverName });
  if (answer === DENY) throw new Error(`The user denied ${label}. Do not call it again unless the user asks for it.`);
  throw new Error(`${label} needs the user's approval, and the question went unanswered. ${howToAllow(context, tool)}`);
}

const ARGUMENTS_SHOWN = 300;

function question(tool: ToolMetadata, params: unknown): string {
  const what = tool.resourceUri ? `read ${tool.resourceUri}` : `run ${tool.originalName}`;
  const args = tool.resourceUri ? "" : JSON.stringify(params ?? {});
  const shown = truncate(args, ARGUMENTS_SHOWN);
  return `MCP server "${tool.serverName}" wants to ${what}${shown && shown !== "{}" ? ` with ${shown}` : ""}. Allow it?`;
}

function howToAllow(context: ApprovalContext, tool: ToolMetadata): string {
  const server = context.servers.get(tool.serverName);
  const file = server ? ` in ${server.source.path}` : "";
  const where = server?.approveTools !== undefined ? `the "approveTools" of server "${tool.serverName}"${file}` : `"settings.approveTools"`;
  return (
    `To let it run without asking, the user can take it out of ${where} (or set "approveTools": false on server "${tool.serverName}"), ` +
    "or run it in an interactive session and allow it there."
  );
}

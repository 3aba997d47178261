/**
 * The host side of the script API: what `tools.<name>(args)`, `searchTools`, `describeTool` and `describeNamespace`
 * do when a script calls them. A tool call goes through the executor like the model's own (lazy start, approvals,
 * time limits, large-result spill, stats); searching uses ToolSearch's ranking.
 *
 * A script names a tool by its Pi name (`server__tool`) or by that name made a JavaScript identifier (`-` and other
 * characters become `_`, as Pi 1.x codemode does), so `tools.my_server__x` and `tools["my-server__x"]` both work.
 */
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { callToolResultSchema, scriptIdentifier } from "../host.ts";
import { executeMcpTool, type ToolCallContext } from "../tool-executor.ts";
import { serverAbout } from "../tool-view.ts";
import { rankTools, type ToolSearchContext, waitForStartup } from "../tool-search.ts";
import { isJsonObject } from "../util/guards.ts";
import type { ToolMetadata } from "../types.ts";
import { type HostCall, HostCallError } from "./sandbox.ts";

/** What the script API uses of the session. */
export type ScriptApiContext = ToolCallContext & ToolSearchContext;

const DEFAULT_SEARCH_LIMIT = 8;
const MAX_SEARCH_LIMIT = 50;
const CLOSE_MATCHES = 3;

/** `ALL_TOOLS`: every MCP tool the adapter knows, by the name a script calls it with. */
export function scriptCatalog(state: ScriptApiContext): { name: string; description: string }[] {
  return [...state.tools.byName.values()].map((tool) => ({ name: scriptIdentifier(tool.name), description: tool.description }));
}

/** The host functions behind the script API, for one script run with the calling session's context. */
export function scriptHostCalls(state: ScriptApiContext, ctx: ExtensionContext | undefined): HostCall {
  return async (kind, payload, signal) => {
    const input = isJsonObject(payload) ? payload : {};
    switch (kind) {
      case "tool":
        return callTool(state, String(input.name), input.args, signal, ctx);
      case "searchTools":
        return searchTools(state, String(input.query ?? ""), isJsonObject(input.options) ? input.options : {});
      case "describeTool":
        return describeTool(state, String(input.name));
      case "describeNamespace":
        return describeNamespace(state, String(input.name));
      default:
        throw new Error(`unknown script API call "${kind}"`);
    }
  };
}

/**
 * Resolves to the tool's whole result (`{ content, structuredContent?, isError? }`, calls/script-result.ts), as a
 * Pi 1.x codemode script's call of an MCP tool does, so one script text runs on every host; an error the server
 * reported resolves too (the script reads `isError`). A call that could not be made rejects.
 */
async function callTool(
  state: ScriptApiContext,
  name: string,
  args: unknown,
  signal: AbortSignal,
  ctx: ExtensionContext | undefined,
): Promise<unknown> {
  let tool = findTool(state, name);
  if (!tool) {
    // It may belong to a server whose tools startup is still listing (no cache).
    await waitForStartup(state, signal);
    tool = findTool(state, name);
  }
  if (!tool) throw new HostCallError(unknownTool(state, name), name);
  if (args !== undefined && args !== null && !isJsonObject(args)) {
    throw new HostCallError(
      `tools.${name}() takes one object with the tool's arguments (got ${Array.isArray(args) ? "an array" : typeof args}).`,
      name,
    );
  }
  try {
    const result = await executeMcpTool(state, tool.name, args ?? {}, signal, undefined, ctx, { scriptResults: true });
    return result.structuredContent;
  } catch (error) {
    // The executor's messages name the tool and its server already; a refused approval too.
    const message = error instanceof Error ? error.message : String(error);
    const named = message.includes(tool.serverName)
      ? message
      : `MCP tool "${tool.originalName}" on server "${tool.serverName}": ${message}`;
    throw new HostCallError(named, tool.name);
  }
}

function findTool(state: ScriptApiContext, name: string): ToolMetadata | undefined {
  const exact = state.tools.byName.get(name);
  if (exact) return exact;
  for (const tool of state.tools.byName.values()) if (scriptIdentifier(tool.name) === name) return tool;
  return undefined;
}

function unknownTool(state: ScriptApiContext, name: string): string {
  const close = rankTools(state, name.replace(/_+/g, " "), CLOSE_MATCHES).map((tool) => scriptIdentifier(tool.name));
  const hint = close.length > 0 ? ` Close matches: ${close.join(", ")}.` : " No MCP tool is known yet.";
  return `No tool is named "${name}".${hint} Use searchTools("what you need") to find others.`;
}

function searchTools(state: ScriptApiContext, query: string, options: Record<string, unknown>): { name: string; description: string }[] {
  const wanted =
    typeof options.limit === "number" && options.limit > 0 ? Math.min(Math.floor(options.limit), MAX_SEARCH_LIMIT) : DEFAULT_SEARCH_LIMIT;
  const namespace = typeof options.namespace === "string" ? options.namespace : undefined;
  // Within one server: ranked among all tools, then that server's kept (the index ranks the whole catalog).
  const ranked = rankTools(state, query, namespace ? state.tools.byName.size : wanted);
  return ranked
    .filter((tool) => namespace === undefined || tool.serverName === namespace)
    .slice(0, wanted)
    .map((tool) => ({ name: scriptIdentifier(tool.name), description: tool.description }));
}

/** The description, the parameters and what a call resolves to (JSON Schemas), or undefined for a name no tool has. */
function describeTool(state: ScriptApiContext, name: string): Record<string, unknown> | undefined {
  const tool = findTool(state, name);
  return (
    tool && {
      name: scriptIdentifier(tool.name),
      description: tool.description,
      parameters: tool.inputSchema,
      returns: callToolResultSchema(tool.outputSchema),
    }
  );
}

function describeNamespace(state: ScriptApiContext, name: string): Record<string, unknown> | undefined {
  const tools = state.tools.byServer.get(name);
  if (!tools) return undefined;
  return { name, ...serverAbout(state, name), tools: tools.map((tool) => scriptIdentifier(tool.name)) };
}

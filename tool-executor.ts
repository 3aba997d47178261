/**
 * Runs an MCP tool for the model: finds it, asks the user first when `approveTools` says so (calls/approvals.ts),
 * connects its server when needed (lazy servers, dropped ones, within the failure backoff), calls it (or reads the
 * resource it stands for) with cancellation, progress and the server's time limits (calls/limits.ts), and turns the
 * answer into a Pi result; what is too large for the model is kept in a file it can read (calls/result-spill.ts).
 *
 * Every failure is thrown, because Pi marks a tool result as an error only when `execute` throws. Messages say
 * what went wrong and what the model can do about it: for argument errors, the parameters the tool expects.
 */
import type { AgentToolResult, AgentToolUpdateCallback, ExtensionContext } from "@mariozechner/pi-coding-agent";
import type { CallToolResult, Progress } from "@modelcontextprotocol/client";
import { type AppViews, callableByViews, type ViewCall, viewsOffered } from "./apps.ts";
import { type ApprovalContext, askApproval, needsApproval } from "./calls/approvals.ts";
import { callLimits, timeoutMessage, type CallLimits } from "./calls/limits.ts";
import { callWithUrlElicitation, type UnansweredPages } from "./connection/elicitation-url.ts";
import { errorMessage, isJsonObject } from "./util/guards.ts";
import { formatParameters } from "./tools/json-schema.ts";
import type { McpLifecycleManager } from "./lifecycle.ts";
import {
  errorResultText,
  keepOverflow,
  McpToolError,
  transformMcpResult,
  transformResourceResult,
  type TransformedResult,
} from "./calls/content.ts";
import { keepInFile, resultDir } from "./calls/result-spill.ts";
import { type ScriptResult, scriptResultOfCall, scriptResultOfRead } from "./calls/script-result.ts";
import { loadToonEncoder } from "./calls/toon.ts";
import { resourceUriOf } from "./tools/resource-tools.ts";
import type { CallOptions, McpServerManager } from "./server-manager.ts";
import { type MessageContent, type SessionTasks, type TaskCall, taskLimits } from "./tasks.ts";
import type { CallStats } from "./calls/stats.ts";
export type { CallStats, ToolCallStats } from "./calls/stats.ts";
export { requestLimitLine } from "./calls/limits.ts";
export { piSampling, samplingSettings } from "./calls/sampling.ts";
import type { ToolView } from "./tool-view.ts";
import { getServerPrefix, PREFIX_SEPARATOR } from "./tool-names.ts";
import { matchesAnyPattern, patternNames } from "./tool-metadata.ts";
import { TOOL_SEARCH_NAME, type ToolMetadata } from "./types.ts";
import { McpErrorCode, SdkErrorCode } from "./util/mcp-error-codes.ts";

/** What running a tool uses of the session (its state has it all). */
export interface ToolCallContext extends ApprovalContext, Pick<ToolView, "tools" | "inventories"> {
  /** A tool with a view opens it here (MCP Apps); unset: no view opens. */
  readonly views?: Pick<AppViews, "toolCalled">;
  /** Results too large for the model are kept in files under it (calls/result-spill.ts). */
  readonly agentDir: string;
  readonly manager: Pick<McpServerManager, "getConnection" | "getState" | "startToolCall" | "readResource">;
  /** Waits for a call's task, or hands it back (tasks.ts). */
  readonly tasks: Pick<SessionTasks, "await">;
  readonly lifecycle: Pick<McpLifecycleManager, "ensureConnected">;
  readonly stats: Pick<CallStats, "record"> | undefined;
  readonly unansweredPages: Pick<UnansweredPages, "take">;
  /** Set at shutdown: calls it cuts short say so, with Pi's reason. */
  readonly shutDown: boolean;
  readonly shutdownReason?: string;
}

export interface McpToolDetails {
  server: string;
  tool: string;
  truncated: boolean;
  toonEncoded: boolean;
}

/**
 * A tool's result. For a caller that asked for script results, Pi 1.x's fields too: `structuredContent` (what a
 * codemode script's call resolves to; Pi keeps it out of the transcript and the model's view) and `isError`.
 */
export interface McpToolResult extends AgentToolResult<McpToolDetails> {
  structuredContent?: ScriptResult;
  isError?: boolean;
}

/**
 * `scriptResults`: the result carries the whole call result for scripts (calls/script-result.ts), and an answer the
 * server marked `isError` is returned as an error result that keeps it, rather than thrown.
 */
export interface McpCallOptions {
  scriptResults?: boolean;
}

export async function executeMcpTool(
  state: ToolCallContext,
  piName: string,
  params: unknown,
  signal: AbortSignal | undefined,
  onUpdate: AgentToolUpdateCallback<unknown> | undefined,
  ctx?: ExtensionContext,
  options: McpCallOptions = {},
): Promise<McpToolResult> {
  // The common case (a known tool of a connected server, no approval asked) takes no extra await: each costs on every call.
  const found = state.tools.byName.get(piName) ?? (await findUnlistedTool(state, piName, signal));
  // Before the server is started: a call the user refuses must not start one either.
  if (needsApproval(state, found)) await askApproval(state, found, params, ctx, signal);
  const startedAt = performance.now();
  let ok = false;
  try {
    const tool = state.manager.getConnection(found.serverName) ? found : await connectFor(state, found, signal);
    const result = await callTool(state, tool, params, signal, onUpdate, ctx, options);
    ok = !result.isError;
    return withUnansweredPages(state, found.serverName, result);
  } catch (error) {
    throw errorWithUnansweredPages(state, found.serverName, error);
  } finally {
    state.stats?.record(found.serverName, found.originalName, performance.now() - startedAt, ok);
  }
}

async function callTool(
  state: ToolCallContext,
  tool: ToolMetadata,
  params: unknown,
  signal: AbortSignal | undefined,
  onUpdate: AgentToolUpdateCallback<unknown> | undefined,
  ctx: ExtensionContext | undefined,
  callOptions: McpCallOptions,
): Promise<McpToolResult> {
  const limits = callLimits(state.servers.get(tool.serverName), state.config.settings);
  const options = await transformOptions(state, tool.serverName, limits);
  let result: TransformedResult;
  let scriptResult: ScriptResult | undefined;
  let view: ViewCall | undefined;
  try {
    const resourceUri = await resourceUriOf(tool, asArguments(params));
    if (resourceUri) {
      const raw = await state.manager.readResource(tool.serverName, resourceUri, callTimeouts(state, tool.serverName, limits, signal));
      if (callOptions.scriptResults) scriptResult = scriptResultOfRead(raw);
      result = transformResourceResult(raw, options);
    } else {
      view = openView(state, tool, params);
      const raw = await requestCall(state, tool, params, limits, signal, onUpdate, ctx);
      view?.result(raw);
      await view?.shown;
      if (callOptions.scriptResults) scriptResult = scriptResultOfCall(raw);
      result = transformMcpResult(raw, options);
    }
  } catch (error) {
    const failure = callFailure(state, tool, limits, error, signal);
    view?.failed(failure.message);
    throw failure;
  }
  result = await withOverflowKept(state, tool.serverName, tool.originalName, result);
  const details: McpToolDetails = {
    server: tool.serverName,
    tool: tool.originalName,
    truncated: !!result.details.truncation,
    toonEncoded: result.details.toonEncoded,
  };
  if (!scriptResult) {
    if (result.isError) throw new McpToolError(result);
    return { content: result.content, details };
  }
  // The model reads an error result as it reads a thrown one; the script still gets what the server said.
  const content = result.isError ? [{ type: "text" as const, text: errorResultText(result) }] : result.content;
  return { content, details, structuredContent: scriptResult, ...(result.isError ? { isError: true } : {}) };
}

/** A request's time limits, cancel and fallback connect (the server was connected for the call, but may close before it goes out). */
function callTimeouts(state: ToolCallContext, serverName: string, limits: CallLimits, signal: AbortSignal | undefined) {
  const connect = () => state.lifecycle.ensureConnected(serverName, signal);
  return { signal, timeoutMs: limits.requestTimeoutMs, maxTotalTimeoutMs: limits.maxTotalTimeoutMs, connect };
}

/**
 * `tools/call` within the server's limits, with progress, and the pages a server asks the user to open on the way. A
 * call the server runs as a task (connection/task-calls.ts) is waited for, or handed back to the model with a note
 * that is the call's result (tasks.ts).
 */
function requestCall(
  state: ToolCallContext,
  tool: ToolMetadata,
  params: unknown,
  limits: CallLimits,
  signal: AbortSignal | undefined,
  onUpdate: AgentToolUpdateCallback<unknown> | undefined,
  ctx: ExtensionContext | undefined,
): Promise<CallToolResult> {
  return callWithUrlElicitation(
    () => callOrAwaitTask(state, tool, asArguments(params), callTimeouts(state, tool.serverName, limits, signal), onUpdate),
    tool.serverName,
    ctx,
    signal,
  );
}

async function callOrAwaitTask(
  state: ToolCallContext,
  tool: ToolMetadata,
  args: Record<string, unknown>,
  timeouts: CallOptions,
  onUpdate: AgentToolUpdateCallback<unknown> | undefined,
): Promise<CallToolResult> {
  const { optionalAsTask } = taskLimits(tool.serverName, state.servers.get(tool.serverName), state.config.settings);
  const start = await state.manager.startToolCall(tool.serverName, tool.originalName, args, {
    ...timeouts,
    onProgress: onUpdate && ((progress) => onUpdate(progressUpdate(tool, progress))),
    policy: { optionalAsTask },
  });
  if (start.kind === "result") return start.result;
  const call: TaskCall = { server: tool.serverName, tool: tool.originalName, args };
  const wait = await state.tasks.await(call, start.task, timeouts.signal, onUpdate && ((text) => onUpdate(textUpdate(tool, text))));
  return wait.kind === "result" ? wait.result : { content: [{ type: "text", text: wait.text }] };
}

/**
 * A task's result as the model reads a tool result (a task handed back delivers it as a message): converted and
 * bounded the same way, the rest kept in a file; an error result as its text.
 */
export async function presentTaskResult(
  state: Pick<ToolCallContext, "config" | "servers" | "agentDir">,
  call: TaskCall,
  raw: CallToolResult,
): Promise<MessageContent[]> {
  const options = await transformOptions(state, call.server, callLimits(state.servers.get(call.server), state.config.settings));
  const result = await withOverflowKept(state, call.server, call.tool, transformMcpResult(raw, options));
  return result.isError ? [{ type: "text", text: errorResultText(result) }] : result.content;
}

async function transformOptions(state: Pick<ToolCallContext, "config">, serverName: string, limits: CallLimits) {
  const { toonEncode } = state.config.settings;
  if (toonEncode) await loadToonEncoder();
  return { serverName, toonEncode, maxTextBytes: limits.maxTextBytes, maxTextLines: limits.maxTextLines };
}

/** What the model is not shown of a result is kept in a file it can read (calls/result-spill.ts). */
async function withOverflowKept(
  state: Pick<ToolCallContext, "agentDir">,
  serverName: string,
  toolName: string,
  result: TransformedResult,
): Promise<TransformedResult> {
  if (!result.overflow) return result;
  const dir = resultDir(state.agentDir);
  return keepOverflow(result, (data, mimeType) => keepInFile(dir, data, mimeType, `${serverName}-${toolName}`));
}

/** A tool with a view (MCP Apps) opens it, unless views are off for its server; the view is told how the call ends. */
function openView(state: ToolCallContext, tool: ToolMetadata, params: unknown): ViewCall | undefined {
  if (!tool.viewUri || !state.views || !viewsOffered(state.config.settings, state.servers.get(tool.serverName))) return undefined;
  const listed = state.inventories.get(tool.serverName)?.tools.find((candidate) => candidate.name === tool.originalName);
  const call = {
    serverName: tool.serverName,
    toolName: tool.originalName,
    viewUri: tool.viewUri,
    tool: listed ?? { name: tool.originalName },
  };
  return state.views.toolCalled(call, asArguments(params));
}

/**
 * A view's `tools/call` (MCP Apps): a tool of the view's own server that the server lets views call and the config
 * does not exclude, asked about (`approveTools`) and limited as the model's calls are; answered with the whole result.
 */
export async function callToolForView(
  state: ToolCallContext,
  serverName: string,
  toolName: string,
  args: Record<string, unknown>,
  signal: AbortSignal,
  ctx: ExtensionContext | undefined,
): Promise<CallToolResult> {
  let tool = toolForView(state, serverName, toolName);
  if (needsApproval(state, tool)) await askApproval(state, tool, args, ctx, signal);
  if (!state.manager.getConnection(serverName)) {
    await state.lifecycle.ensureConnected(serverName, signal);
    tool = toolForView(state, serverName, toolName);
  }
  const limits = callLimits(state.servers.get(serverName), state.config.settings);
  try {
    return await requestCall(state, tool, args, limits, signal, undefined, ctx);
  } catch (error) {
    throw callFailure(state, tool, limits, error, signal);
  }
}

/** A view's resource read (its `ui://` page, or what it asks for), on its own server, within the server's limits. */
export async function readResourceForView(state: ToolCallContext, serverName: string, uri: string): Promise<unknown> {
  const limits = callLimits(state.servers.get(serverName), state.config.settings);
  return state.manager.readResource(serverName, uri, callTimeouts(state, serverName, limits, undefined));
}

function toolForView(state: ToolCallContext, serverName: string, toolName: string): ToolMetadata {
  const listed = state.inventories.get(serverName)?.tools.find((tool) => tool.name === toolName);
  const label = `MCP tool "${toolName}" of server "${serverName}"`;
  if (!listed) throw new Error(`MCP server "${serverName}" offers no tool "${toolName}": a view calls only its own server's tools.`);
  if (!callableByViews(listed.ui)) throw new Error(`${label} is for the model only: the server does not let views call it.`);
  const server = state.servers.get(serverName);
  if (matchesAnyPattern(server?.excludeTools, patternNames(serverName, [toolName])))
    throw new Error(`${label} is left out by the "excludeTools" of server "${serverName}"${server ? ` in ${server.source.path}` : ""}.`);
  const offered = state.tools.byServer.get(serverName)?.find((tool) => tool.originalName === toolName && !tool.resourceUri);
  return (
    offered ?? {
      name: toolName,
      serverName,
      originalName: toolName,
      description: listed.description ?? "",
      inputSchema: { type: "object" },
    }
  );
}

/** Pages the server asked the user to open during the call that nobody could be asked about: the model is told. */
function withUnansweredPages(state: ToolCallContext, serverName: string, result: McpToolResult): McpToolResult {
  const note = state.unansweredPages.take(serverName);
  return note ? { ...result, content: [...result.content, { type: "text", text: note }] } : result;
}

function errorWithUnansweredPages(state: ToolCallContext, serverName: string, error: unknown): unknown {
  const note = state.unansweredPages.take(serverName);
  if (note && error instanceof Error) error.message += `\n${note}`;
  return error;
}

/**
 * A tool the metadata does not know yet may still belong to a server whose tools were never listed (no cache): its
 * prefix names the server, which is then connected to learn them.
 */
async function findUnlistedTool(state: ToolCallContext, piName: string, signal: AbortSignal | undefined): Promise<ToolMetadata> {
  const server = serverByPrefix(state, piName);
  if (server) {
    await state.lifecycle.ensureConnected(server, signal);
    const learned = state.tools.byName.get(piName);
    if (learned) return learned;
  }
  throw new Error(`Unknown MCP tool "${piName}". Use ${TOOL_SEARCH_NAME} to find the tool you need.`);
}

function serverByPrefix(state: ToolCallContext, piName: string): string | undefined {
  for (const [name, server] of state.servers) {
    const mode = server.toolPrefix ?? state.config.settings.toolPrefix ?? "server";
    if (mode === "none" || state.inventories.has(name)) continue;
    if (piName.startsWith(`${getServerPrefix(name, mode)}${PREFIX_SEPARATOR}`)) return name;
  }
  return undefined;
}

/** Connects the tool's server (a cancelled call stops waiting); the fresh tool list may have changed the tool, or dropped it. */
async function connectFor(state: ToolCallContext, tool: ToolMetadata, signal: AbortSignal | undefined): Promise<ToolMetadata> {
  await state.lifecycle.ensureConnected(tool.serverName, signal);
  const current = state.tools.byServer
    .get(tool.serverName)
    ?.find(
      (candidate) =>
        candidate.originalName === tool.originalName &&
        candidate.resourceUri === tool.resourceUri &&
        candidate.uriTemplate === tool.uriTemplate,
    );
  if (!current)
    throw new Error(
      `MCP server "${tool.serverName}" no longer offers "${tool.originalName}". Use ${TOOL_SEARCH_NAME} to find another tool.`,
    );
  return current;
}

function asArguments(params: unknown): Record<string, unknown> {
  return isJsonObject(params) ? params : {};
}

function progressUpdate(tool: ToolMetadata, progress: Progress): AgentToolResult<McpToolDetails> {
  const amount = progress.total ? `${progress.progress}/${progress.total}` : `${progress.progress}`;
  return textUpdate(tool, progress.message ? `${progress.message} (${amount})` : `Progress: ${amount}`);
}

/** A line the TUI shows under the running call (progress, or its task's status). */
function textUpdate(tool: ToolMetadata, text: string): AgentToolResult<McpToolDetails> {
  return {
    content: [{ type: "text", text }],
    details: { server: tool.serverName, tool: tool.originalName, truncated: false, toonEncoded: false },
  };
}

/** An error the model can act on: argument problems come with the expected parameters. */
function callFailure(
  state: ToolCallContext,
  tool: ToolMetadata,
  limits: CallLimits,
  error: unknown,
  signal: AbortSignal | undefined,
): Error {
  const label = `MCP tool "${tool.originalName}" on server "${tool.serverName}"`;
  // The SDK turns an abort into a RequestTimeout error: only the signal tells a cancel from a timeout.
  if (signal?.aborted) return new Error(`${label} was cancelled.`);
  // Shutdown closes the servers under their calls: the server did nothing wrong.
  if (state.shutDown)
    return new Error(`${label} was stopped before it answered: ${sessionEnd(state.shutdownReason)}. The server did not fail.`);
  const message = errorMessage(error);
  const code = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  if (code === McpErrorCode.InvalidParams) return new Error(`${label}: ${message}\n${formatParameters(tool.inputSchema)}`);
  if (code === SdkErrorCode.RequestTimeout)
    return new Error(timeoutMessage(label, tool.serverName, limits, (error as { data?: unknown }).data));
  if (code === SdkErrorCode.ConnectionClosed) return connectionLost(state, tool, label, message);
  return new Error(`${label} failed: ${message}`);
}

/** Why the calls still running at shutdown were stopped, by Pi's `session_shutdown` reason. */
function sessionEnd(reason: string | undefined): string {
  if (reason === "reload") return "the MCP adapter is reloading (/reload)";
  if (reason === "quit" || reason === undefined) return "the Pi session ended";
  return `the Pi session was replaced (${reason})`;
}

/** The server died mid-call (or its connection dropped): its last stderr lines usually say why. */
function connectionLost(state: ToolCallContext, tool: ToolMetadata, label: string, message: string): Error {
  const stderr = state.manager.getState(tool.serverName).stderrTail;
  const tail = stderr.length > 0 ? `\nLast server output:\n${stderr.join("\n")}` : "";
  return new Error(`${label}: the server closed the connection during the call (${message}). The next call starts it again.${tail}`);
}

/**
 * A server's sampling request as a pi-ai completion, and the model's answer as the server's `CreateMessageResult`.
 *
 * - In: text and images, in user and assistant turns (an image only from the user: pi-ai's assistant turns carry
 *   none), and the system prompt. What Pi's models cannot be given is refused, with what it was: audio.
 * - Sampling with tools (the client declares `sampling.tools`): the request's `tools` are offered to the model, under
 *   names every provider accepts (an MCP tool name may hold `.` or `/`, which providers reject; the model's calls
 *   are named back). A `tool_use` of an assistant turn becomes the model's own tool call, and a user turn of
 *   `tool_result`s becomes tool results (their content converted as a tool call's result is, calls/content.ts). The
 *   spec's rules are checked, and a request that breaks them is refused as invalid (-32602): a user turn that mixes
 *   tool results with other content, a tool use left without its result in the next turn, a result of no tool use.
 * - Out: the answer's text (thinking left out), the model's id, and why it stopped. pi-ai passes no stop sequences
 *   to the providers, so they are applied here: the text ends before the first one the model wrote. When the model
 *   stopped to use tools, its tool calls go back as `tool_use` content with stop reason `toolUse`, and each call's
 *   thought signature (Gemini's, which it needs to see again with the call) is kept in its `_meta`, which the spec
 *   asks a server to send back unchanged.
 * - `toolChoice`: `none` takes the tool calls out of the answer (the host asks the provider for none where it can,
 *   host/model-completion.ts); `required` refuses an answer without one (no provider-neutral way to force one
 *   exists). An answer that breaks the server's choice and has nothing else to give fails, saying so.
 * - `modelPreferences` are hints a client may ignore: the user's current model answers. `includeContext` is not
 *   offered (no `sampling.context`, which the spec deprecates), so nothing of the session is added.
 */
import type {
  Api,
  AssistantMessage,
  Context,
  ImageContent,
  Message,
  Model,
  TextContent,
  ToolCall,
  ToolResultMessage,
  Tool as PiTool,
} from "@mariozechner/pi-ai";
import type {
  CreateMessageRequestParams,
  CreateMessageResult,
  CreateMessageResultWithTools,
  SamplingMessage,
  SamplingMessageContentBlock,
  Tool,
  ToolResultContent,
  ToolUseContent,
} from "@modelcontextprotocol/client";
import { toProviderSafeSchema } from "../tool-metadata.ts";
import { formatToolName, shortHash } from "../tool-names.ts";
import { transformMcpResult } from "./content.ts";

type Block = SamplingMessageContentBlock;
export type ToolMode = "auto" | "required" | "none";

/** The `_meta` key under which a tool call's thought signature goes to the server and comes back. */
export const THOUGHT_SIGNATURE_META = "pi-mcp-adapter/thoughtSignature";

/** JSON-RPC "invalid params": what the spec asks a client to answer a request whose tool turns break its rules. */
export class InvalidSamplingRequest extends Error {
  readonly code = -32602;
}

const NO_USAGE = {
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};

/** How the model may use the request's tools; undefined when the request brings none. */
export function toolMode(request: CreateMessageRequestParams): ToolMode | undefined {
  return request.tools?.length || request.toolChoice ? (request.toolChoice?.mode ?? "auto") : undefined;
}

/** The completion's context; throws on content Pi's models cannot be given, and on tool turns the spec forbids. */
export function samplingContext(request: CreateMessageRequestParams, model: Model<Api>): Context {
  const names = new ToolNames(request.tools ?? []);
  checkToolTurns(request.messages);
  const toolUses = new Map<string, string>();
  const messages = request.messages.flatMap((message) => toMessages(message, model, names, toolUses));
  const tools = request.tools?.length ? request.tools.map((tool) => toPiTool(tool, names)) : undefined;
  return { ...(request.systemPrompt ? { systemPrompt: request.systemPrompt } : {}), messages, ...(tools ? { tools } : {}) };
}

/**
 * The request's tool names as the model sees them, and back. A name providers accept stays as it is; another is
 * made valid as the adapter's own tool names are (tool-names.ts), and one that would then take another tool's name
 * gets a stable hash instead.
 */
class ToolNames {
  private readonly toModel = new Map<string, string>();
  private readonly toServer = new Map<string, string>();

  constructor(tools: readonly Tool[]) {
    for (const { name } of tools) {
      if (this.toModel.has(name)) continue;
      const wanted = formatToolName(name, "", "none");
      const given = this.toServer.has(wanted) ? `tool_${shortHash(name)}` : wanted;
      this.toModel.set(name, given);
      this.toServer.set(given, name);
    }
  }

  /** A tool a turn names but the request does not offer is renamed the same way, with nothing to collide with. */
  modelName(serverName: string): string {
    return this.toModel.get(serverName) ?? formatToolName(serverName, "", "none");
  }

  /** A name the model made up (no offered tool has it) goes to the server as it is, for the server to refuse. */
  serverName(modelName: string): string {
    return this.toServer.get(modelName) ?? modelName;
  }
}

function toPiTool(tool: Tool, names: ToolNames): PiTool {
  // pi-ai takes a plain JSON Schema as the parameters (typebox's schemas are JSON Schema).
  const parameters = toProviderSafeSchema(tool.inputSchema) as unknown as PiTool["parameters"];
  return { name: names.modelName(tool.name), description: tool.description ?? tool.title ?? tool.name, parameters };
}

const blocksOf = (message: SamplingMessage): Block[] => [message.content].flat();
const isToolUse = (block: Block): block is ToolUseContent => block.type === "tool_use";
const isToolResult = (block: Block): block is ToolResultContent => block.type === "tool_result";

/**
 * The spec's rules for tool turns: a user turn with tool results holds nothing else, and every tool use of an
 * assistant turn has its result in the next turn (providers reject a transcript that leaves one unanswered).
 */
function checkToolTurns(messages: readonly SamplingMessage[]): void {
  messages.forEach((message, index) => {
    const blocks = blocksOf(message);
    const results = blocks.filter(isToolResult);
    if (results.length > 0 && results.length < blocks.length)
      throw new InvalidSamplingRequest("tool results are mixed with other content in one message");
    const uses = blocks.filter(isToolUse);
    if (uses.length === 0) return;
    const next = messages[index + 1];
    const answered = new Set(
      next?.role === "user"
        ? blocksOf(next)
            .filter(isToolResult)
            .map((block) => block.toolUseId)
        : [],
    );
    const missing = uses.filter((use) => !answered.has(use.id));
    if (missing.length > 0)
      throw new InvalidSamplingRequest(`tool result missing in request (for ${missing.map((use) => `"${use.name}"`).join(", ")})`);
  });
}

/** One MCP turn as pi-ai messages: a user turn of tool results is one tool result message per result. */
function toMessages(message: SamplingMessage, model: Model<Api>, names: ToolNames, toolUses: Map<string, string>): Message[] {
  const blocks = blocksOf(message);
  const timestamp = Date.now();
  if (message.role === "user") {
    if (blocks.some(isToolResult)) return blocks.filter(isToolResult).map((block) => toolResult(block, toolUses, timestamp));
    return [{ role: "user", content: blocks.map((block) => userBlock(block)), timestamp }];
  }
  const content = blocks.map((block) => {
    if (block.type === "text") return { type: "text" as const, text: block.text };
    if (isToolUse(block)) {
      toolUses.set(block.id, names.modelName(block.name));
      return toolCall(block, names);
    }
    throw unsupported(block.type, "in an assistant turn");
  });
  const usesTools = content.some((block) => block.type === "toolCall");
  return [
    {
      role: "assistant",
      content,
      api: model.api,
      provider: model.provider,
      model: model.id,
      usage: NO_USAGE,
      stopReason: usesTools ? "toolUse" : "stop",
      timestamp,
    },
  ];
}

function toolCall(block: ToolUseContent, names: ToolNames): ToolCall {
  const signature = block._meta?.[THOUGHT_SIGNATURE_META];
  return {
    type: "toolCall",
    id: block.id,
    name: names.modelName(block.name),
    arguments: block.input,
    ...(typeof signature === "string" ? { thoughtSignature: signature } : {}),
  };
}

function toolResult(block: ToolResultContent, toolUses: ReadonlyMap<string, string>, timestamp: number): ToolResultMessage {
  const toolName = toolUses.get(block.toolUseId);
  if (toolName === undefined) throw new InvalidSamplingRequest(`a tool result answers no tool use (toolUseId "${block.toolUseId}")`);
  const { content, isError } = transformMcpResult(block);
  return { role: "toolResult", toolCallId: block.toolUseId, toolName, content, isError, timestamp };
}

function userBlock(block: Block): TextContent | ImageContent {
  if (block.type === "text") return { type: "text", text: block.text };
  if (block.type === "image") return { type: "image", data: block.data, mimeType: block.mimeType };
  throw unsupported(block.type, "");
}

function unsupported(type: string, where: string): Error {
  return new Error(`the request holds ${type} content${where ? ` ${where}` : ""}, which Pi does not pass to a model`);
}

/**
 * The server's answer; throws when the completion failed or was aborted (with what pi-ai said), and when the model
 * broke the request's `toolChoice` with nothing else to give.
 */
export function samplingResult(
  answer: AssistantMessage,
  request: CreateMessageRequestParams,
): CreateMessageResult | CreateMessageResultWithTools {
  if (answer.stopReason === "error" || answer.stopReason === "aborted")
    throw new Error(`the model ${answer.stopReason === "aborted" ? "was stopped" : "failed"}: ${answer.errorMessage ?? "no reason given"}`);
  const whole = answer.content
    .filter((block): block is TextContent => block.type === "text")
    .map((block) => block.text)
    .join("");
  const stop = firstStop(whole, request.stopSequences ?? []);
  const text = stop === undefined ? whole : whole.slice(0, stop);
  const uses = toolUseContent(answer, request);
  const base = { model: answer.model, role: "assistant" as const };
  if (uses.length > 0) return { ...base, content: [...(text ? [{ type: "text" as const, text }] : []), ...uses], stopReason: "toolUse" };
  return {
    ...base,
    content: { type: "text", text },
    stopReason: stop !== undefined ? "stopSequence" : answer.stopReason === "length" ? "maxTokens" : "endTurn",
  };
}

/** The model's tool calls as the server's `tool_use` content, as far as the request's `toolChoice` allows them. */
function toolUseContent(answer: AssistantMessage, request: CreateMessageRequestParams): ToolUseContent[] {
  // Calls count only when the model stopped to make them: one cut off by maxTokens may be half written.
  const calls = answer.stopReason === "toolUse" ? answer.content.filter((block): block is ToolCall => block.type === "toolCall") : [];
  const mode = toolMode(request);
  if (mode === "required" && calls.length === 0)
    throw new Error('the model answered without using a tool, though the server required one (toolChoice "required")');
  if (mode === undefined || mode === "none") {
    const wroteText = answer.content.some((block) => block.type === "text" && block.text !== "");
    if (calls.length > 0 && !wroteText)
      throw new Error(`the model only asked to use a tool, which this request does not allow${mode ? ' (toolChoice "none")' : ""}`);
    return [];
  }
  const names = new ToolNames(request.tools ?? []);
  return calls.map((call) => ({
    type: "tool_use",
    id: call.id,
    name: names.serverName(call.name),
    input: call.arguments,
    ...(call.thoughtSignature ? { _meta: { [THOUGHT_SIGNATURE_META]: call.thoughtSignature } } : {}),
  }));
}

/** Where the first stop sequence starts in the text, if one does. */
function firstStop(text: string, stopSequences: readonly string[]): number | undefined {
  const found = stopSequences
    .filter((stop) => stop !== "")
    .map((stop) => text.indexOf(stop))
    .filter((index) => index >= 0);
  return found.length > 0 ? Math.min(...found) : undefined;
}

/** What the server asks, as the approval dialog shows it: the last user turn, other content named. */
export function lastUserText(request: CreateMessageRequestParams): string {
  const last = request.messages.findLast((message) => message.role === "user");
  return (last ? blocksOf(last) : []).map(describeBlock).join(" ");
}

function describeBlock(block: Block): string {
  if (block.type === "text") return block.text;
  if (!isToolResult(block)) return `[${block.type}]`;
  const text = transformMcpResult(block)
    .content.filter((part): part is TextContent => part.type === "text")
    .map((part) => part.text)
    .join(" ");
  return `[tool result${block.isError ? " (error)" : ""}: ${text}]`;
}

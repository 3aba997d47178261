/**
 * A scripted model for tests: a list of steps, each a reply or a function of the request the model receives.
 *
 * Shared by the in-process SDK harness and the faux-provider extension used in print mode, so both modes
 * script the model the same way and record the same things. Both hosts' faux providers call a step with
 * the request context; they differ in its shape (0.73.1 passes `systemPrompt` and `tools`, 0.87.1 passes a
 * transcript whose system messages declare the prompt and `toolsAdded`/`toolsRemoved`), which
 * `describeRequest` hides.
 */

export interface OfferedTool {
  name: string;
  description: string;
  parameters: unknown;
}

/** A non-system message as the model sees it (user, assistant or toolResult). */
export interface RequestMessage {
  role: string;
  content: unknown;
  [field: string]: unknown;
}

/** What the model is shown at one request. */
export interface ModelRequest {
  /** 0-based position among all model requests of the session (or CLI process). */
  index: number;
  tools: OfferedTool[];
  systemPrompt: string;
  messages: RequestMessage[];
  /** The completion's bound, when the request set one (a sampling completion does). */
  maxTokens?: number;
  /** pi-ai's provider-neutral tool choice, when the request set one (Pi 0.87 and 1.x take it). */
  toolChoice?: string;
}

export interface ToolCallSpec {
  name: string;
  arguments: Record<string, unknown>;
}

/** A plain string is a text reply. */
export type ModelReply = string | { text?: string; toolCalls?: ToolCallSpec[] };
export type ScriptStep = ModelReply | ((request: ModelRequest) => ModelReply);

export interface ToolResultRecord {
  toolName: string;
  toolCallId: string;
  isError: boolean;
  /** The text parts of the result content, joined by newlines. */
  text: string;
  details: unknown;
}

/** The options a faux provider hands to a step with the context. */
export interface FauxOptions {
  maxTokens?: number;
  toolChoice?: string;
}

/** The request context a faux provider hands to a step; fields by host (see the module comment). */
export interface FauxContext {
  systemPrompt?: string;
  tools?: readonly OfferedTool[];
  messages: readonly { role: string }[];
}

/** 0.87.1's transcript replay (`@earendil-works/pi-ai`): what its providers send for a transcript. */
export interface TranscriptReplay {
  getCurrentTools(messages: readonly { role: string }[]): OfferedTool[];
  getCurrentSystemPrompt(messages: readonly { role: string }[]): string;
}

export function describeRequest(index: number, context: FauxContext, replay?: TranscriptReplay, options?: FauxOptions): ModelRequest {
  const messages = context.messages.filter((message) => message.role !== "system") as RequestMessage[];
  const isTranscript = context.tools === undefined && context.systemPrompt === undefined && replay !== undefined;
  const tools = isTranscript ? replay.getCurrentTools(context.messages) : (context.tools ?? []);
  return {
    index,
    tools: tools.map(({ name, description, parameters }) => ({ name, description, parameters })),
    systemPrompt: isTranscript ? replay.getCurrentSystemPrompt(context.messages) : (context.systemPrompt ?? ""),
    messages,
    ...(options?.maxTokens !== undefined ? { maxTokens: options.maxTokens } : {}),
    ...(options?.toolChoice !== undefined ? { toolChoice: options.toolChoice } : {}),
  };
}

export function offeredToolNames(request: ModelRequest): string[] {
  return request.tools.map((tool) => tool.name);
}

/** Text of the tool results in a request's transcript, newest last. */
export function toolResultTexts(request: ModelRequest): string[] {
  return request.messages.filter((message) => message.role === "toolResult").map((message) => contentText(message.content));
}

export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((part): part is { type: "text"; text: string } => part?.type === "text" && typeof part.text === "string")
    .map((part) => part.text)
    .join("\n");
}

/** The steps still to play and every request seen; one per session (or CLI process). */
export class ModelScript {
  readonly requests: ModelRequest[] = [];
  private readonly steps: ScriptStep[];
  private readonly onRequest: (request: ModelRequest) => void;

  constructor(steps: readonly ScriptStep[] = [], onRequest: (request: ModelRequest) => void = () => {}) {
    this.steps = [...steps];
    this.onRequest = onRequest;
  }

  append(steps: readonly ScriptStep[]): void {
    this.steps.push(...steps);
  }

  get pendingSteps(): number {
    return this.steps.length;
  }

  /** Record the request and play the next step; throws (a model error for the host) when the script is used up. */
  respond(context: FauxContext, replay?: TranscriptReplay, options?: FauxOptions): ModelReply {
    const request = describeRequest(this.requests.length, context, replay, options);
    this.requests.push(request);
    this.onRequest(request);
    const step = this.steps.shift();
    if (step === undefined) {
      throw new Error(`faux script exhausted: no step left for model request #${request.index}`);
    }
    return typeof step === "function" ? step(request) : step;
  }
}

/** The host's faux message builders (`@mariozechner/pi-ai` on 0.73.1, its compat alias on 0.87.1). */
export interface FauxBuilders<Block, Message> {
  fauxAssistantMessage(content: Block[], options?: { stopReason?: "stop" | "toolUse" }): Message;
  fauxText(text: string): Block;
  fauxToolCall(name: string, args: Record<string, unknown>): Block;
}

/** The response queue of a host's faux provider registration. */
export interface FauxQueue<Message> {
  setResponses(responses: ((context: FauxContext, options?: FauxOptions) => Message)[]): void;
  appendResponses(responses: ((context: FauxContext, options?: FauxOptions) => Message)[]): void;
}

/** Answer every request to the faux provider with the script's next step. */
export function answerWithScript<Block, Message>(
  faux: FauxQueue<Message>,
  script: ModelScript,
  builders: FauxBuilders<Block, Message>,
  replay?: TranscriptReplay,
): void {
  const respond = (context: FauxContext, options?: FauxOptions): Message => {
    // One queued response per request keeps the faux queue from running dry; the script decides when it ends.
    faux.appendResponses([respond]);
    return toAssistantMessage(script.respond(context, replay, options), builders);
  };
  faux.setResponses([respond]);
}

function toAssistantMessage<Block, Message>(reply: ModelReply, builders: FauxBuilders<Block, Message>): Message {
  const { text, toolCalls = [] } = typeof reply === "string" ? { text: reply } : reply;
  const content = [
    ...(text === undefined ? [] : [builders.fauxText(text)]),
    ...toolCalls.map((call) => builders.fauxToolCall(call.name, call.arguments)),
  ];
  return builders.fauxAssistantMessage(content, { stopReason: toolCalls.length > 0 ? "toolUse" : "stop" });
}

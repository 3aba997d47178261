/**
 * A server's sampling request as a pi-ai completion, and the model's answer as the server's `CreateMessageResult`.
 *
 * - In: text and images, in user and assistant turns (an image only from the user: pi-ai's assistant turns carry
 *   none), and the system prompt. What Pi's models cannot be given is refused, with what it was: audio, and the tool
 *   use of sampling with tools (the client does not declare `sampling.tools`, so a server must not send it).
 * - Out: the answer's text (thinking left out), the model's id, and why it stopped. pi-ai passes no stop sequences
 *   to the providers, so they are applied here: the text ends before the first one the model wrote.
 * - `modelPreferences` are hints a client may ignore: the user's current model answers. `includeContext` is not
 *   offered (no `sampling.context`), so nothing of the session is added.
 */
import type { Api, AssistantMessage, Context, ImageContent, Message, Model, TextContent } from "@mariozechner/pi-ai";
import type { CreateMessageRequestParams, CreateMessageResult, SamplingMessage } from "@modelcontextprotocol/client";

type Block = SamplingMessage["content"] extends infer C ? (C extends readonly (infer B)[] ? B : C) : never;

const NO_USAGE = {
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};

/** The completion's context; throws on content Pi's models cannot be given. */
export function samplingContext(request: CreateMessageRequestParams, model: Model<Api>): Context {
  const messages = request.messages.map((message) => toMessage(message, model));
  return { ...(request.systemPrompt ? { systemPrompt: request.systemPrompt } : {}), messages };
}

function toMessage(message: SamplingMessage, model: Model<Api>): Message {
  const blocks = [message.content].flat() as Block[];
  const timestamp = Date.now();
  if (message.role === "user") return { role: "user", content: blocks.map((block) => userBlock(block)), timestamp };
  const content = blocks.map((block) => {
    if (block.type === "text") return { type: "text" as const, text: block.text };
    throw unsupported(block.type, "in an assistant turn");
  });
  return {
    role: "assistant",
    content,
    api: model.api,
    provider: model.provider,
    model: model.id,
    usage: NO_USAGE,
    stopReason: "stop",
    timestamp,
  };
}

function userBlock(block: Block): TextContent | ImageContent {
  if (block.type === "text") return { type: "text", text: block.text };
  if (block.type === "image") return { type: "image", data: block.data, mimeType: block.mimeType };
  throw unsupported(block.type, "");
}

function unsupported(type: string, where: string): Error {
  const what = type === "tool_use" || type === "tool_result" ? `${type} content (sampling with tools)` : `${type} content`;
  return new Error(`the request holds ${what}${where ? ` ${where}` : ""}, which Pi does not pass to a model`);
}

/** The server's answer; a completion that failed or was aborted throws with what pi-ai said. */
export function samplingResult(answer: AssistantMessage, stopSequences: readonly string[] = []): CreateMessageResult {
  if (answer.stopReason === "error" || answer.stopReason === "aborted")
    throw new Error(`the model ${answer.stopReason === "aborted" ? "was stopped" : "failed"}: ${answer.errorMessage ?? "no reason given"}`);
  const text = answer.content
    .filter((block): block is TextContent => block.type === "text")
    .map((block) => block.text)
    .join("");
  const stop = firstStop(text, stopSequences);
  return {
    model: answer.model,
    role: "assistant",
    content: { type: "text", text: stop === undefined ? text : text.slice(0, stop) },
    stopReason: stop !== undefined ? "stopSequence" : answer.stopReason === "length" ? "maxTokens" : "endTurn",
  };
}

/** Where the first stop sequence starts in the text, if one does. */
function firstStop(text: string, stopSequences: readonly string[]): number | undefined {
  const found = stopSequences
    .filter((stop) => stop !== "")
    .map((stop) => text.indexOf(stop))
    .filter((index) => index >= 0);
  return found.length > 0 ? Math.min(...found) : undefined;
}

/** The text of the last user turn: what the server asks, as the approval dialog shows it. */
export function lastUserText(request: CreateMessageRequestParams): string {
  const last = request.messages.findLast((message) => message.role === "user");
  const blocks = last ? ([last.content].flat() as Block[]) : [];
  return blocks.map((block) => (block.type === "text" ? block.text : `[${block.type}]`)).join(" ");
}

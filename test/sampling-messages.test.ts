/**
 * A server's sampling request as a pi-ai completion, and the answer back (calls/sampling-messages.ts). The whole way,
 * through the real Pi and real servers, is in mcp-2026.e2e.test.ts; here what those servers do not send: images,
 * assistant turns, stop sequences, content Pi cannot pass on, and answers that failed.
 */
import type { Api, AssistantMessage, Model } from "@mariozechner/pi-ai";
import type { CreateMessageRequestParams } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { lastUserText, samplingContext, samplingResult } from "../calls/sampling-messages.ts";

const MODEL: Model<Api> = {
  id: "m-1",
  name: "M 1",
  api: "faux",
  provider: "faux",
  baseUrl: "http://localhost",
  reasoning: false,
  input: ["text", "image"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 1000,
  maxTokens: 100,
};

const request = (messages: CreateMessageRequestParams["messages"], extra: Partial<CreateMessageRequestParams> = {}) => ({
  messages,
  maxTokens: 10,
  ...extra,
});

function answer(
  content: AssistantMessage["content"],
  stopReason: AssistantMessage["stopReason"] = "stop",
  errorMessage?: string,
): AssistantMessage {
  return {
    role: "assistant",
    content,
    api: "faux",
    provider: "faux",
    model: "m-1",
    usage: {} as AssistantMessage["usage"], // not read
    stopReason,
    ...(errorMessage ? { errorMessage } : {}),
    timestamp: 0,
  };
}

describe("the request as a completion's context", () => {
  it("keeps the system prompt, text and images of user turns, and text of assistant turns", () => {
    const context = samplingContext(
      request(
        [
          {
            role: "user",
            content: [
              { type: "text", text: "What is this?" },
              { type: "image", data: "aGk=", mimeType: "image/png" },
            ],
          },
          { role: "assistant", content: { type: "text", text: "A cat." } },
          { role: "user", content: { type: "text", text: "Sure?" } },
        ],
        { systemPrompt: "Be brief." },
      ),
      MODEL,
    );
    expect(context.systemPrompt).toBe("Be brief.");
    expect(context.messages.map((message) => [message.role, message.content])).toEqual([
      [
        "user",
        [
          { type: "text", text: "What is this?" },
          { type: "image", data: "aGk=", mimeType: "image/png" },
        ],
      ],
      ["assistant", [{ type: "text", text: "A cat." }]],
      ["user", [{ type: "text", text: "Sure?" }]],
    ]);
    expect(context.messages[1]).toMatchObject({ api: "faux", provider: "faux", model: "m-1", stopReason: "stop" });
  });

  it("refuses what Pi cannot pass to a model, saying what it was", () => {
    const audio = request([{ role: "user", content: { type: "audio", data: "aGk=", mimeType: "audio/wav" } }]);
    expect(() => samplingContext(audio, MODEL)).toThrow("the request holds audio content, which Pi does not pass to a model");
    const toolUse = request([{ role: "assistant", content: { type: "tool_use", id: "1", name: "x", input: {} } }]);
    expect(() => samplingContext(toolUse, MODEL)).toThrow("tool_use content (sampling with tools) in an assistant turn");
    const image = request([{ role: "assistant", content: { type: "image", data: "aGk=", mimeType: "image/png" } }]);
    expect(() => samplingContext(image, MODEL)).toThrow("image content in an assistant turn");
  });

  it("what the dialog shows: the last user turn's text, other content named", () => {
    const asked = request([
      { role: "user", content: { type: "text", text: "first" } },
      { role: "assistant", content: { type: "text", text: "reply" } },
      {
        role: "user",
        content: [
          { type: "text", text: "Describe" },
          { type: "image", data: "aGk=", mimeType: "image/png" },
        ],
      },
    ]);
    expect(lastUserText(asked)).toBe("Describe [image]");
  });
});

describe("the answer as the server's result", () => {
  it("the text (thinking left out), the model, and why it stopped", () => {
    const full = answer([
      { type: "thinking", thinking: "hmm" },
      { type: "text", text: "Hello " },
      { type: "text", text: "there." },
    ]);
    expect(samplingResult(full)).toEqual({
      model: "m-1",
      role: "assistant",
      content: { type: "text", text: "Hello there." },
      stopReason: "endTurn",
    });
    expect(samplingResult(answer([{ type: "text", text: "Hel" }], "length")).stopReason).toBe("maxTokens");
  });

  it("ends the text before the first stop sequence the model wrote", () => {
    const result = samplingResult(answer([{ type: "text", text: "one. END two. STOP three" }]), ["STOP", "END", ""]);
    expect(result).toMatchObject({ content: { type: "text", text: "one. " }, stopReason: "stopSequence" });
    expect(samplingResult(answer([{ type: "text", text: "no stop here" }]), ["STOP"]).stopReason).toBe("endTurn");
  });

  it("a failed or aborted completion throws with what pi-ai said", () => {
    expect(() => samplingResult(answer([], "error", "401 invalid key"))).toThrow("the model failed: 401 invalid key");
    expect(() => samplingResult(answer([], "aborted", "Request was aborted"))).toThrow("the model was stopped: Request was aborted");
  });
});

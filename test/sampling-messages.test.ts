/**
 * A server's sampling request as a pi-ai completion, and the answer back (calls/sampling-messages.ts). The whole way,
 * through the real Pi and real servers, is in mcp-2026.e2e.test.ts and sampling-tools.e2e.test.ts; here what those
 * servers do not send: images, assistant turns, stop sequences, content Pi cannot pass on, answers that failed, tool
 * names providers reject, tool turns that break the spec's rules, and thought signatures.
 */
import type { Api, AssistantMessage, Model } from "@mariozechner/pi-ai";
import type { CreateMessageRequestParams } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import {
  InvalidSamplingRequest,
  lastUserText,
  samplingContext,
  samplingResult,
  THOUGHT_SIGNATURE_META,
} from "../calls/sampling-messages.ts";

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

/** A request without tools, for the answers that do not depend on it. */
const ASKED = request([{ role: "user", content: { type: "text", text: "Hi" } }]);

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
    expect(samplingResult(full, ASKED)).toEqual({
      model: "m-1",
      role: "assistant",
      content: { type: "text", text: "Hello there." },
      stopReason: "endTurn",
    });
    expect(samplingResult(answer([{ type: "text", text: "Hel" }], "length"), ASKED).stopReason).toBe("maxTokens");
  });

  it("ends the text before the first stop sequence the model wrote", () => {
    const result = samplingResult(answer([{ type: "text", text: "one. END two. STOP three" }]), {
      ...ASKED,
      stopSequences: ["STOP", "END", ""],
    });
    expect(result).toMatchObject({ content: { type: "text", text: "one. " }, stopReason: "stopSequence" });
    expect(samplingResult(answer([{ type: "text", text: "no stop here" }]), { ...ASKED, stopSequences: ["STOP"] }).stopReason).toBe(
      "endTurn",
    );
  });

  it("a failed or aborted completion throws with what pi-ai said", () => {
    expect(() => samplingResult(answer([], "error", "401 invalid key"), ASKED)).toThrow("the model failed: 401 invalid key");
    expect(() => samplingResult(answer([], "aborted", "Request was aborted"), ASKED)).toThrow("the model was stopped: Request was aborted");
  });
});

describe("sampling with tools", () => {
  const weather = { name: "weather.get", description: "Weather in a city", inputSchema: CITY_SCHEMA() };
  const weatherTool = { ...weather, name: "weather_get" }; // the same name once made valid for providers
  const question = { role: "user" as const, content: { type: "text" as const, text: "Weather in Paris?" } };
  const use = (id: string, name = "weather.get") => ({ type: "tool_use" as const, id, name, input: { city: "Paris" } });
  const result = (toolUseId: string, text: string, isError?: boolean) => ({
    type: "tool_result" as const,
    toolUseId,
    content: [{ type: "text" as const, text }],
    ...(isError ? { isError } : {}),
  });

  it("offers the request's tools under names providers accept, with schemas they accept", () => {
    const context = samplingContext(request([question], { tools: [weather, weatherTool] }), MODEL);
    expect(context.tools?.map((tool) => tool.name)).toEqual(["weather_get", expect.stringMatching(/^tool_[0-9a-f]{8}$/)]);
    expect(context.tools?.[0]).toEqual({
      name: "weather_get",
      description: "Weather in a city",
      parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] }, // $defs inlined
    });
  });

  it("a tool round as the model's own tool calls and results: names, ids, content converted, errors kept", () => {
    const signed = { ...use("call-1"), _meta: { [THOUGHT_SIGNATURE_META]: "sig-1" } };
    const context = samplingContext(
      request(
        [
          question,
          { role: "assistant", content: [{ type: "text", text: "Looking." }, signed, use("call-2")] },
          {
            role: "user",
            content: [
              {
                ...result("call-1", "18°C"),
                content: [
                  { type: "text", text: "18°C" },
                  { type: "image", data: "aGk=", mimeType: "image/png" },
                ],
              },
              result("call-2", "no such city", true),
            ],
          },
        ],
        { tools: [weather] },
      ),
      MODEL,
    );
    expect(context.messages.slice(1)).toEqual([
      expect.objectContaining({
        role: "assistant",
        stopReason: "toolUse",
        content: [
          { type: "text", text: "Looking." },
          { type: "toolCall", id: "call-1", name: "weather_get", arguments: { city: "Paris" }, thoughtSignature: "sig-1" },
          { type: "toolCall", id: "call-2", name: "weather_get", arguments: { city: "Paris" } },
        ],
      }),
      expect.objectContaining({
        role: "toolResult",
        toolCallId: "call-1",
        toolName: "weather_get",
        isError: false,
        content: [
          { type: "text", text: "18°C" },
          { type: "image", data: "aGk=", mimeType: "image/png" },
        ],
      }),
      expect.objectContaining({
        role: "toolResult",
        toolCallId: "call-2",
        isError: true,
        content: [{ type: "text", text: "no such city" }],
      }),
    ]);
  });

  it("refuses tool turns the spec forbids as invalid params (-32602), saying what is wrong", () => {
    const refused = (messages: CreateMessageRequestParams["messages"]) => {
      try {
        samplingContext(request(messages, { tools: [weather] }), MODEL);
      } catch (error) {
        expect(error).toBeInstanceOf(InvalidSamplingRequest);
        expect((error as InvalidSamplingRequest).code).toBe(-32602);
        return (error as Error).message;
      }
      throw new Error("not refused");
    };
    const asked = { role: "assistant" as const, content: [use("a"), use("b")] };
    expect(refused([question, asked, { role: "user", content: [result("a", "x")] }])).toBe(
      'tool result missing in request (for "weather.get")',
    );
    expect(refused([question, asked])).toBe('tool result missing in request (for "weather.get", "weather.get")');
    const mixed = { role: "user" as const, content: [result("a", "x"), result("b", "y"), { type: "text" as const, text: "and?" }] };
    expect(refused([question, asked, mixed])).toBe("tool results are mixed with other content in one message");
    expect(refused([question, { role: "user", content: result("z", "x") }])).toBe('a tool result answers no tool use (toolUseId "z")');
  });

  it("the model's tool calls go back as tool_use under the server's names, with the signature in _meta", () => {
    const calls = answer(
      [
        { type: "text", text: "Checking." },
        { type: "toolCall", id: "call-1", name: "weather_get", arguments: { city: "Paris" }, thoughtSignature: "sig-1" },
        { type: "toolCall", id: "call-2", name: "invented", arguments: {} },
      ],
      "toolUse",
    );
    expect(samplingResult(calls, request([question], { tools: [weather] }))).toEqual({
      model: "m-1",
      role: "assistant",
      content: [
        { type: "text", text: "Checking." },
        { type: "tool_use", id: "call-1", name: "weather.get", input: { city: "Paris" }, _meta: { [THOUGHT_SIGNATURE_META]: "sig-1" } },
        { type: "tool_use", id: "call-2", name: "invented", input: {} },
      ],
      stopReason: "toolUse",
    });
  });

  it("toolChoice: required refuses an answer without a tool call; none keeps only the text, or fails without any", () => {
    const text = answer([{ type: "text", text: "Sunny." }]);
    const toolOnly = answer([{ type: "toolCall", id: "c", name: "weather_get", arguments: {} }], "toolUse");
    const both = answer([{ type: "text", text: "Sunny." }, ...toolOnly.content], "toolUse");
    const asked = (mode: "auto" | "required" | "none") => request([question], { tools: [weather], toolChoice: { mode } });
    expect(() => samplingResult(text, asked("required"))).toThrow(
      'the model answered without using a tool, though the server required one (toolChoice "required")',
    );
    expect(samplingResult(toolOnly, asked("required")).stopReason).toBe("toolUse");
    expect(samplingResult(both, asked("none"))).toMatchObject({ content: { type: "text", text: "Sunny." }, stopReason: "endTurn" });
    expect(() => samplingResult(toolOnly, asked("none"))).toThrow(
      'the model only asked to use a tool, which this request does not allow (toolChoice "none")',
    );
    expect(samplingResult(text, asked("auto"))).toMatchObject({ content: { type: "text", text: "Sunny." }, stopReason: "endTurn" });
  });

  it("a call cut off at maxTokens is not passed on (it may be half written)", () => {
    const cut = answer(
      [
        { type: "text", text: "Let me" },
        { type: "toolCall", id: "c", name: "weather_get", arguments: {} },
      ],
      "length",
    );
    expect(samplingResult(cut, request([question], { tools: [weather] }))).toMatchObject({
      content: { type: "text", text: "Let me" },
      stopReason: "maxTokens",
    });
  });

  it("the dialog shows tool results by their text", () => {
    const asked = request([question, { role: "assistant", content: use("a") }, { role: "user", content: result("a", "18°C", true) }]);
    expect(lastUserText(asked)).toBe("[tool result (error): 18°C]");
  });
});

/** An input schema with a `$defs` reference, which Anthropic would leave dangling. */
function CITY_SCHEMA() {
  return {
    type: "object" as const,
    properties: { city: { $ref: "#/$defs/city" } },
    required: ["city"],
    $defs: { city: { type: "string" } },
  };
}

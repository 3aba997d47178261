/**
 * The sampling handler (calls/sampling.ts) on what real servers do not send: a request whose tool turns break the
 * spec's rules. The official SDKs' servers check those rules before they send, so no end-to-end test can reach this;
 * the whole way with real servers and the real Pi is in sampling-tools.e2e.test.ts.
 */
import type { Api, Model } from "@mariozechner/pi-ai";
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { describe, expect, it, vi } from "vitest";
import { piSampling } from "../tool-executor.ts";

const MODEL = { id: "m-1", provider: "faux", api: "faux" } as Model<Api>;

/** The handler of a session with a UI whose dialog answers with `confirm`, and default settings. */
function samplingWith(confirm: () => Promise<boolean>) {
  const ctx = { hasUI: true, model: MODEL, ui: { confirm } } as unknown as ExtensionContext;
  return piSampling(
    () => ctx,
    () => ({ servers: new Map(), config: { settings: {} } }),
  );
}

describe("piSampling", () => {
  it("refuses a request that mixes tool results with text before asking the user, with the spec's code (-32602)", async () => {
    const confirm = vi.fn(async () => true);
    const handler = samplingWith(confirm);
    const request = {
      maxTokens: 10,
      tools: [{ name: "look", inputSchema: { type: "object" as const } }],
      messages: [
        { role: "user" as const, content: { type: "text" as const, text: "Look it up" } },
        { role: "assistant" as const, content: { type: "tool_use" as const, id: "1", name: "look", input: {} } },
        {
          role: "user" as const,
          content: [
            { type: "tool_result" as const, toolUseId: "1", content: [] },
            { type: "text" as const, text: "and?" },
          ],
        },
      ],
    };
    await expect(handler("srv", request, new AbortController().signal)).rejects.toMatchObject({
      code: -32602,
      message: `Pi refused MCP server "srv"'s request to use the user's model (sampling): tool results are mixed with other content in one message.`,
    });
    expect(confirm).not.toHaveBeenCalled();
  });

  it("a request the user does not allow is refused with the spec's code for a user's rejection (-1), not as a failure", async () => {
    const confirm = vi.fn(async () => false);
    const handler = samplingWith(confirm);
    const request = { maxTokens: 10, messages: [{ role: "user" as const, content: { type: "text" as const, text: "Summarize" } }] };
    await expect(handler("srv", request, new AbortController().signal)).rejects.toMatchObject({
      code: -1,
      message: `Pi refused MCP server "srv"'s request to use the user's model (sampling): the user did not allow it.`,
    });
    expect(confirm).toHaveBeenCalledOnce();
  });
});

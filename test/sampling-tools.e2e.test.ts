/**
 * Sampling with tools (spec 2025-11-25 "client/sampling") through the real Pi on this run's host: a server runs a
 * small agent loop through the user's model (test/fixtures/servers/sampling-agent-server.mjs, `ask_weather`), once
 * on the official SDK v1 (2025-11-25: `sampling/createMessage` requests) and once on SDK v2 (2026-07-28: each round
 * an `input_required` result). The model is asked with the server's tool, answers with a tool use, the server runs
 * it and asks again with the result and `toolChoice: none`, and the model's final text reaches the server and the
 * call's result. One session for every case of a mode; the cache is warmed once, so the tools are direct from the
 * first request.
 *
 * - Print mode (no UI): both servers' requests are refused, the call's result says why, and the model is never asked.
 * - RPC: each request approved in the client's dialog, which names the tools, what the model may do with them and
 *   the ignored `includeContext`; bounded by `settings.sampling.maxTokens`; `toolChoice` honoured: `none` drops the
 *   tool call the model made anyway (and is passed to the provider where the host takes it), `required` refuses an
 *   answer without one.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { ModelReply, ModelRequest, ToolResultRecord } from "./helpers/faux-script.ts";
import { contentText } from "./helpers/faux-script.ts";
import { currentHost, REPO_ROOT } from "./helpers/hosts.ts";
import { warmCache } from "./helpers/items-fixture.ts";
import { type McpDirs, mcpDirs } from "./helpers/mcp-setup.ts";
import { runPrint, runRpc } from "./helpers/pi-print.ts";

const host = currentHost();
const AGENT_SERVER = join(REPO_ROOT, "test/fixtures/servers/sampling-agent-server.mjs");
/** Below the fixture's own request (200): the setting is what bounds each completion. */
const SAMPLING_MAX_TOKENS = 50;
const SERVERS = { agent1: "v1", agent2: "v2" } as const;

let dirs: McpDirs;

beforeAll(async () => {
  const server = (sdk: string) => ({ command: process.execPath, args: [AGENT_SERVER], env: { AGENT_SDK: sdk }, directTools: true });
  dirs = await mcpDirs({
    mcpServers: Object.fromEntries(Object.entries(SERVERS).map(([name, sdk]) => [name, server(sdk)])),
    settings: { sampling: { maxTokens: SAMPLING_MAX_TOKENS } },
  });
  await warmCache(dirs, ...Object.keys(SERVERS));
}, 120_000);

afterAll(async () => {
  await dirs?.cleanup();
});

const call = (name: string, args: Record<string, unknown> = {}) => ({ name, arguments: args });
const ask = (server: keyof typeof SERVERS, city: string, toolChoice?: string) =>
  ({ toolCalls: [call(`${server}__ask_weather`, { city, ...(toolChoice ? { toolChoice } : {}) })] }) satisfies ModelReply;
const lookUp = (city: string) => ({ toolCalls: [call("get_weather", { city })] }) satisfies ModelReply;
/** The model requests that were sampling completions: bounded by the setting, which the agent's own requests are not. */
const samplingRequests = (requests: readonly ModelRequest[]) => requests.filter((request) => request.maxTokens === SAMPLING_MAX_TOKENS);
const DEBUG_LOG = { MCP_DEBUG: "1" };
const debugLog = () => readFileSync(join(dirs.agentDir, "mcp-debug.log"), "utf8");
const seen = (records: readonly ToolResultRecord[]) =>
  JSON.stringify(records.map((record) => [record.toolName, record.isError, record.text]));
/** The fixture's report: the model's last text and each round's stop reason and tool uses. */
const report = (answer: string, ...rounds: { stopReason: string; toolUses?: { name: string; input: unknown }[] }[]) =>
  JSON.stringify({ answer, rounds: rounds.map(({ stopReason, toolUses = [] }) => ({ stopReason, toolUses })) });

describe(`sampling with tools from a 2025 (SDK v1) and a 2026 (SDK v2) server on Pi ${host.version}`, () => {
  test("print mode: without a UI each server's request is refused, the call's result says why, the model is never asked", async () => {
    const result = await runPrint({
      extensions: [REPO_ROOT],
      script: [ask("agent1", "Paris"), ask("agent2", "Paris"), "Done."],
      prompts: ["weather in Paris, twice"],
      agentDir: dirs.agentDir,
      cwd: dirs.cwd,
      env: DEBUG_LOG,
    });
    expect(result.exitCode, result.stderr).toBe(0);
    const why = "there is no one to approve it in this mode (no UI); it can be approved in an interactive or RPC session";
    const [v1, v2] = result.toolResults;
    // The 2025 server got the refusal as its request's error and says so in its result; the 2026 call fails with it.
    expect(v1, seen(result.toolResults)).toMatchObject({ toolName: "agent1__ask_weather", isError: true });
    expect(v1!.text).toMatch(/^sampling failed: MCP error -?\d+: Pi refused MCP server "agent1"'s request/);
    expect(v1!.text).toContain(`Pi refused MCP server "agent1"'s request to use the user's model (sampling): ${why}.`);
    expect(v2).toMatchObject({ toolName: "agent2__ask_weather", isError: true });
    expect(v2!.text).toContain(`Pi refused MCP server "agent2"'s request to use the user's model (sampling): ${why}.`);
    expect(samplingRequests(result.requests)).toEqual([]);
    expect(debugLog()).toContain(
      "agent1: sampling request (1 messages, maxTokens 200, 1 tools (toolChoice auto), includeContext thisServer ignored)",
    );
  });

  test("RPC: a tool round on each era, approved in the dialog and bounded; toolChoice none and required honoured", async () => {
    const script: ModelReply[] = [
      ask("agent1", "Paris"),
      lookUp("Paris"), // agent1, round 1: the model uses the server's tool
      { text: "Paris: 18°C and partly cloudy.", toolCalls: [call("get_weather", { city: "London" })] }, // round 2, toolChoice none
      ask("agent2", "Tokyo", "required"),
      lookUp("Tokyo"), // agent2, round 1 (required: a tool use is what it asks for)
      "Tokyo: 24°C and clear.", // round 2
      ask("agent2", "London", "required"),
      "It rains, surely.", // round 1 without the tool use the server required
      "Done.",
    ];
    const result = await runRpc({
      extensions: [REPO_ROOT],
      script,
      prompts: ["weather in Paris, Tokyo and London"],
      agentDir: dirs.agentDir,
      cwd: dirs.cwd,
      env: DEBUG_LOG,
      dialogs: (request) => (request.method === "confirm" ? { confirmed: true } : undefined),
    });
    const records = seen(result.toolResults);
    expect(
      result.toolResults.map((record) => [record.toolName, record.isError]),
      records,
    ).toEqual([
      ["agent1__ask_weather", false],
      ["agent2__ask_weather", false],
      ["agent2__ask_weather", true],
    ]);
    const paris = { stopReason: "toolUse", toolUses: [{ name: "get_weather", input: { city: "Paris" } }] };
    // The tool call the model made under toolChoice none is not passed on: its text is the answer.
    expect(result.toolResults[0]!.text).toBe(report("Paris: 18°C and partly cloudy.", paris, { stopReason: "endTurn" }));
    const tokyo = { stopReason: "toolUse", toolUses: [{ name: "get_weather", input: { city: "Tokyo" } }] };
    expect(result.toolResults[1]!.text).toBe(report("Tokyo: 24°C and clear.", tokyo, { stopReason: "endTurn" }));
    expect(result.toolResults[2]!.text).toContain(
      `MCP server "agent2"'s request to use the user's model (sampling) failed: the model answered without using a tool, though the server required one (toolChoice "required")`,
    );

    // What the model was given: the server's tool, then the history with the tool's result; each bounded by the setting.
    const completions = samplingRequests(result.requests);
    expect(completions).toHaveLength(5);
    for (const completion of completions) expect(completion.tools.map((tool) => tool.name)).toEqual(["get_weather"]);
    expect(completions[0]!.tools[0]).toMatchObject({
      description: "Current weather in a city",
      parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    });
    expect(completions[0]!.systemPrompt).toBe("You look the weather up before you answer.");
    const history = completions[1]!.messages;
    expect(history.map((message) => message.role)).toEqual(["user", "assistant", "toolResult"]);
    expect(history[1]!.content).toEqual([expect.objectContaining({ type: "toolCall", name: "get_weather", arguments: { city: "Paris" } })]);
    expect(history[2]).toMatchObject({ toolName: "get_weather", isError: false });
    expect(contentText(history[2]!.content)).toBe("Weather in Paris: 18°C, partly cloudy");
    // toolChoice none reaches the provider where the host's completion takes one (Pi 0.87 and 1.x; 0.73 has none).
    expect(completions.map((completion) => completion.toolChoice)).toEqual(
      host.version === "0.73.1"
        ? [undefined, undefined, undefined, undefined, undefined]
        : [undefined, "none", undefined, "none", undefined],
    );

    const dialogs = (result.rpcLines ?? []).filter((line) => line.type === "extension_ui_request" && line.method === "confirm");
    expect(dialogs.map((line) => line.title)).toEqual([
      ...Array(2).fill('MCP server "agent1" asks to use your model'),
      ...Array(3).fill('MCP server "agent2" asks to use your model'),
    ]);
    const bound = `Model: faux/faux-1, at most ${SAMPLING_MAX_TOKENS} tokens.\nAllow it?`;
    expect(dialogs[0]!.message).toBe(
      [
        "It asks: What is the weather in Paris?",
        "System prompt: You look the weather up before you answer.",
        "Tools for the model: get_weather (it may use them).",
        "It asks for context from this server: none is added.",
        bound,
      ].join("\n"),
    );
    expect(dialogs[1]!.message).toBe(
      [
        "It asks: [tool result: Weather in Paris: 18°C, partly cloudy]",
        "Tools for the model: get_weather (it may not use them).",
        bound,
      ].join("\n"),
    );
    expect(dialogs[2]!.message).toContain("Tools for the model: get_weather (it must use one).");
    expect(debugLog()).toContain("agent2: sampling answered by faux-1 (toolUse)");
    expect(debugLog()).not.toContain("18°C"); // what a request holds is not logged
  });
});

/**
 * MCP 2026-07-28 beside the 2025 era, through the real Pi on this run's host: servers written on the official SDK v2
 * (test/fixtures/servers/v2-server.mjs) over stdio and HTTP, each in its default mode and with `legacy: "reject"`
 * (2026-07-28 only), beside the 2025-era reference server-everything, all in one config with direct tools (the cache
 * is warmed once, so every run offers them from its first request).
 *
 * - Print mode (no UI): every server lists and answers; a sampling request is refused, and the tool's error says
 *   why, from a 2026 server (the call fails) and from a 2025 one (its request got the error).
 * - RPC: a tool that asks for the user's name (elicitation, as `input_required`) gets it over stdio and HTTP, in both
 *   modes; a sampling request approved in the client's dialog is answered by the scripted model, bounded by
 *   `settings.sampling.maxTokens`.
 * - The TUI (tmux): the same elicitation over stdio and HTTP; sampling approved from a 2026 and a 2025 server, the
 *   dialog showing what is asked, the system prompt and the bound; Esc refuses it.
 */
import { existsSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { ModelReply, ModelRequest, ToolResultRecord } from "./helpers/faux-script.ts";
import { contentText } from "./helpers/faux-script.ts";
import type { FauxRecordLine } from "./helpers/faux-provider-extension.ts";
import { type FixtureProcess, startFixtureProcess } from "./helpers/fixture-process.ts";
import { currentHost, REPO_ROOT } from "./helpers/hosts.ts";
import { warmCache } from "./helpers/items-fixture.ts";
import { type McpDirs, mcpDirs, REAL_SERVERS } from "./helpers/mcp-setup.ts";
import { runPrint, runRpc } from "./helpers/pi-print.ts";
import { startPiTui } from "./helpers/pi-tui.ts";
import { processesWithMarker } from "./helpers/processes.ts";

const host = currentHost();
const V2_SERVER = join(REPO_ROOT, "test/fixtures/servers/v2-server.mjs");
/** Below the fixture's own request (100): the setting is what bounds the completion. */
const SAMPLING_MAX_TOKENS = 50;
const SUMMARY = "Ada wrote the first program.";
const TEXT = "Ada Lovelace wrote the first published algorithm for Babbage's Analytical Engine.";
const V2 = ["v2s", "v2r", "v2h", "v2hr"] as const;

let dirs: McpDirs;
const httpServers: FixtureProcess[] = [];

beforeAll(async () => {
  const [stateless, reject] = await Promise.all([
    startFixtureProcess(V2_SERVER, "v2 HTTP server", { V2_TRANSPORT: "http" }),
    startFixtureProcess(V2_SERVER, "v2 HTTP server (reject)", { V2_TRANSPORT: "http", V2_LEGACY: "reject" }),
  ]);
  httpServers.push(stateless, reject);
  const stdio = (env: Record<string, string> = {}) => ({ command: process.execPath, args: [V2_SERVER], env, directTools: true });
  dirs = await mcpDirs({
    mcpServers: {
      v2s: stdio(),
      v2r: stdio({ V2_LEGACY: "reject" }),
      v2h: { url: `${stateless.base}/mcp`, directTools: true },
      v2hr: { url: `${reject.base}/mcp`, directTools: true },
      everything: { ...REAL_SERVERS.everything, directTools: true },
    },
    settings: { sampling: { maxTokens: SAMPLING_MAX_TOKENS } },
  });
  await warmCache(dirs, ...V2, "everything");
}, 120_000);

afterAll(async () => {
  await Promise.all(httpServers.map((server) => server.stop()));
  await dirs?.cleanup();
});

const call = (name: string, args: Record<string, unknown> = {}) => ({ name, arguments: args });
const results = (records: readonly ToolResultRecord[]) => records.map((record) => [record.toolName, record.isError, record.text]);
/** The model requests that were sampling completions: bounded by the setting, which the agent's own requests are not. */
const samplingRequests = (requests: readonly ModelRequest[]) => requests.filter((request) => request.maxTokens === SAMPLING_MAX_TOKENS);
/** The adapter's debug log (`MCP_DEBUG=1`), where each sampling request and its outcome are recorded. */
const DEBUG_LOG = { MCP_DEBUG: "1" };
const debugLog = () => readFileSync(join(dirs.agentDir, "mcp-debug.log"), "utf8");
const NO_UI_REFUSAL = "there is no one to approve it in this mode (no UI); it can be approved in an interactive or RPC session";

describe(`MCP 2026-07-28 and 2025 servers in one session on Pi ${host.version}`, () => {
  test("print mode: every server lists and answers; sampling is refused without a UI, and the tool's error says why", async () => {
    const script: ModelReply[] = [
      {
        toolCalls: [
          ...V2.map((server) => call(`${server}__echo`, { text: `via ${server}` })),
          call("v2hr__add", { a: 2, b: 3 }),
          call("everything__echo", { message: "2025" }),
        ],
      },
      { toolCalls: [call("v2s__summarize", { text: TEXT }), call("everything__trigger-sampling-request", { prompt: TEXT })] },
      "Done.",
    ];
    const result = await runPrint({
      extensions: [REPO_ROOT],
      script,
      prompts: ["use every server"],
      agentDir: dirs.agentDir,
      cwd: dirs.cwd,
      env: DEBUG_LOG,
    });
    // What the run did, for a failure to show.
    const seen = `${JSON.stringify(results(result.toolResults))}\n${result.stderr}`;
    expect(result.exitCode, seen).toBe(0);
    const offered = result.requests[0]!.tools.map((tool) => tool.name);
    for (const server of V2)
      expect(offered, seen).toEqual(expect.arrayContaining([`${server}__echo`, `${server}__greet`, `${server}__summarize`]));
    expect(offered, seen).toContain("everything__trigger-sampling-request"); // offered to clients that declare sampling
    const [calls, sampling] = [result.toolResults.slice(0, 6), result.toolResults.slice(6)];
    expect(results(calls).sort(), seen).toEqual(
      [
        ...V2.map((server) => [`${server}__echo`, false, `via ${server}`]),
        ["v2hr__add", false, '{"sum":5}'],
        ["everything__echo", false, "Echo: 2025"],
      ].sort(),
    );
    const refusals = Object.fromEntries(sampling.map((record) => [record.toolName, record]));
    expect(refusals.v2s__summarize).toMatchObject({ isError: true });
    expect(refusals.v2s__summarize!.text).toContain(
      `MCP tool "summarize" on server "v2s" failed: Pi refused MCP server "v2s"'s request to use the user's model (sampling): ${NO_UI_REFUSAL}.`,
    );
    expect(refusals["everything__trigger-sampling-request"]!.text).toContain(
      `Pi refused MCP server "everything"'s request to use the user's model (sampling): ${NO_UI_REFUSAL}.`,
    );
    expect(samplingRequests(result.requests)).toEqual([]); // the model was never asked
    expect(debugLog(), seen).toContain("v2s: sampling request (1 messages, maxTokens 100)");
    expect(debugLog()).toContain(`v2s: sampling refused or failed: ${NO_UI_REFUSAL}`);
  });

  test("RPC: elicitation over stdio and HTTP in both modes, a dismissed question cancelled; sampling approved in the client's dialog, answered by the model", async () => {
    const script: ModelReply[] = [
      { toolCalls: [...V2.map((server) => call(`${server}__greet`)), call("v2h__summarize", { text: TEXT })] },
      SUMMARY, // the sampling completion
      "Done.",
    ];
    const result = await runRpc({
      extensions: [REPO_ROOT],
      script,
      prompts: ["greet me and summarize"],
      agentDir: dirs.agentDir,
      cwd: dirs.cwd,
      env: DEBUG_LOG,
      dialogs: (request) =>
        request.method === "input"
          ? { value: "Ada" }
          : request.method === "confirm"
            ? { confirmed: true }
            : // The client dismisses v2hr's question (`cancelled: true`): a dismissal, not a refusal.
              String(request.title).startsWith('MCP server "v2hr"')
              ? undefined
              : { value: (request.options as string[]).find((option) => option.startsWith("Answer")) },
    });
    const greeted = (server: string) => (server === "v2hr" ? "the user cancelled" : "hello Ada");
    expect(results(result.toolResults).sort()).toEqual(
      [...V2.map((server) => [`${server}__greet`, false, greeted(server)]), ["v2h__summarize", false, SUMMARY]].sort(),
    );
    const completions = samplingRequests(result.requests);
    expect(completions).toHaveLength(1); // bounded by the setting (50), below the request's own 100
    expect(completions[0]!.messages.map((message) => contentText(message.content))).toEqual([`Summarize in one line: ${TEXT}`]);
    const dialogs = (result.rpcLines ?? []).filter((line) => line.type === "extension_ui_request" && line.method === "confirm");
    const samplingDialog = dialogs.find((line) => line.title === 'MCP server "v2h" asks to use your model');
    expect(samplingDialog?.message).toBe(
      `It asks: Summarize in one line: ${TEXT}\nModel: faux/faux-1, at most ${SAMPLING_MAX_TOKENS} tokens.\nAllow it?`,
    );
    const questions = (result.rpcLines ?? []).filter((line) => line.type === "extension_ui_request" && line.method === "select");
    // The four calls run side by side: their questions come in any order.
    expect(questions.map((line) => String(line.title)).sort()).toEqual(
      V2.map((server) => `MCP server "${server}" asks:\nWhat is your name?`).sort(),
    );
    expect(debugLog()).toContain("v2h: sampling answered by faux-1 (endTurn)");
    expect(debugLog()).not.toContain(TEXT); // what a request asks is not logged
  });

  test("the TUI: elicitation over stdio and HTTP; sampling from a 2026 and a 2025 server approved, Esc refuses it", async () => {
    const steps = join(dirs.cwd, "tui-steps.json");
    const recordFile = join(dirs.cwd, "tui-record.jsonl");
    const script: ModelReply[] = [
      { toolCalls: [call("v2s__greet")] },
      { toolCalls: [call("v2h__greet")] },
      { toolCalls: [call("v2s__summarize", { text: TEXT })] },
      SUMMARY, // the completion v2s asked for
      { toolCalls: [call("everything__trigger-sampling-request", { prompt: "Say hi" })] },
      "Hi from the model.", // the completion everything asked for
      { toolCalls: [call("v2hr__summarize", { text: TEXT })] },
      "Done.",
    ];
    await writeFile(steps, JSON.stringify(script));
    const tui = await startPiTui({
      ...dirs,
      extensions: ["test/helpers/faux-json-script.ts"],
      env: { PI_FAUX_STEPS: steps, PI_FAUX_RECORD: recordFile },
      columns: 200,
      rows: 50,
    });
    try {
      await tui.ready();
      const screen = () => tui.screen();
      const dialog = async (text: string | RegExp) => {
        await expect.poll(screen, { timeout: 30_000 }).toMatch(text);
      };
      tui.keys("greet me twice and summarize", "Enter");
      for (const server of ["v2s", "v2h"]) {
        await dialog(
          new RegExp(`MCP server "${server}" asks:\\s+What is your name\\?( \\(\\d+s\\))?\\s+→ Answer \\(1 question\\)\\s+Decline`),
        );
        tui.keys("Enter"); // Answer
        await dialog(/^\s*name( \(\d+s\))?\s*$/m); // the field, with the dialog's countdown
        tui.keys("Ada", "Enter");
        await expect.poll(() => records(recordFile).toolResults.length, { timeout: 30_000 }).toBeGreaterThan(server === "v2s" ? 0 : 1);
      }
      await dialog('MCP server "v2s" asks to use your model');
      expect(screen()).toContain(`It asks: Summarize in one line: ${TEXT}`);
      expect(screen()).toContain(`Model: faux/faux-1, at most ${SAMPLING_MAX_TOKENS} tokens.`);
      tui.keys("Enter");
      await dialog('MCP server "everything" asks to use your model');
      expect(screen()).toContain("System prompt: You are a helpful test server.");
      tui.keys("Enter");
      await dialog('MCP server "v2hr" asks to use your model');
      tui.keys("Escape");
      await expect.poll(screen, { timeout: 30_000 }).toContain("Done.");

      const { requests, toolResults } = records(recordFile);
      expect(results(toolResults.slice(0, 3))).toEqual([
        ["v2s__greet", false, "hello Ada"],
        ["v2h__greet", false, "hello Ada"],
        ["v2s__summarize", false, SUMMARY],
      ]);
      expect(toolResults[3]).toMatchObject({ toolName: "everything__trigger-sampling-request", isError: false });
      expect(toolResults[3]!.text).toContain('"text": "Hi from the model."');
      expect(toolResults[4]).toMatchObject({ toolName: "v2hr__summarize", isError: true });
      expect(toolResults[4]!.text).toContain(
        `Pi refused MCP server "v2hr"'s request to use the user's model (sampling): the user did not allow it.`,
      );
      const completions = samplingRequests(requests);
      expect(completions.map((request) => request.systemPrompt)).toEqual(["", "You are a helpful test server."]);

      tui.keys("/quit", "Enter");
      await expect.poll(() => processesWithMarker(dirs.agentDir), { timeout: 30_000 }).toEqual([]);
    } finally {
      await tui.close();
    }
  });
});

/** What the faux model's record file holds so far. */
function records(file: string): { requests: ModelRequest[]; toolResults: ToolResultRecord[] } {
  const lines = existsSync(file)
    ? readFileSync(file, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as FauxRecordLine)
    : [];
  return {
    requests: lines.flatMap((line) => ("request" in line ? [line.request] : [])),
    toolResults: lines.flatMap((line) => ("toolResult" in line ? [line.toolResult] : [])),
  };
}

/**
 * A server asks the user mid-call (elicitation): Pi's dialogs ask, the answers reach the server. server-everything
 * offers its `trigger-elicitation-request` tool only to clients that can elicit.
 */
import { afterEach, describe, expect, test } from "vitest";
import { type ModelRequest, offeredToolNames, type ScriptStep } from "./helpers/faux-script.ts";
import { currentHost } from "./helpers/hosts.ts";
import { mcpDirs, REAL_SERVERS } from "./helpers/mcp-setup.ts";
import { type DialogAnswers, startSession } from "./helpers/pi-session.ts";

const ENTRY = "pi-mcp-adapter.ts";
const TOOL = "everything__trigger-elicitation-request";
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function callTool(request: ModelRequest) {
  if (offeredToolNames(request).includes(TOOL)) return { toolCalls: [{ name: TOOL, arguments: {} }] };
  return { toolCalls: [{ name: "McpCall", arguments: { tool: TOOL, arguments: {} } }] };
}

const script: ScriptStep[] = [{ toolCalls: [{ name: "ToolSearch", arguments: { query: `select:${TOOL}` } }] }, callTool, "done"];

/** What server-everything says it received: the JSON object after "Raw result: ". */
function answerReceived(text: string): { action: string; content?: Record<string, unknown> } {
  const start = text.indexOf("{", text.indexOf("Raw result: "));
  if (start < 0) throw new Error(`no raw result in ${text}`);
  let depth = 0;
  for (let end = start; end < text.length; end++) {
    depth += text[end] === "{" ? 1 : text[end] === "}" ? -1 : 0;
    if (depth === 0) return JSON.parse(text.slice(start, end + 1));
  }
  throw new Error(`unterminated raw result in ${text}`);
}

async function run(dialogs: DialogAnswers) {
  const dirs = await mcpDirs({ mcpServers: { everything: REAL_SERVERS.everything } });
  cleanups.push(dirs.cleanup);
  const pi = await startSession({ extensions: [ENTRY], agentDir: dirs.agentDir, cwd: dirs.cwd, script, dialogs });
  cleanups.push(() => pi.dispose());
  await pi.prompt("ask me something");
  const result = pi.toolResults.at(-1)!;
  expect(result.isError).toBe(false);
  return { answer: answerReceived(result.text), dialogs: pi.ui.filter((entry) => entry.kind === "dialog") };
}

/** The first question: the server's message, answered with the form, declined, or dismissed (`undefined`: Esc). */
const FIRST = 'MCP server "everything" asks:\nPlease provide inputs for the following fields:';
const firstQuestion = (pick: (options: string[]) => string | undefined) => (title: string, options: string[]) =>
  title === FIRST ? pick(options) : undefined;

describe(`elicitation on Pi ${currentHost().version}`, () => {
  test("the user's answers reach the server; fields left empty keep their defaults", async () => {
    const offered: string[][] = [];
    const { answer, dialogs } = await run({
      select: (title, options) => {
        if (title === FIRST) offered.push(options);
        return title === FIRST
          ? options[0]
          : title.startsWith("Boolean")
            ? "yes"
            : title.startsWith("Untitled Single")
              ? "Joey"
              : title.startsWith("Titled Single")
                ? "Wonder Woman"
                : options.at(-1);
      },
      input: (title) => (title.startsWith("String:") ? "Ada Lovelace" : title.startsWith("Untitled Multiple") ? "piano, Drums, tuba" : ""),
    });
    expect(dialogs[0]).toMatchObject({ dialog: "select", title: FIRST });
    expect(offered).toEqual([[expect.stringMatching(/^Answer \(\d+ questions\)$/), "Decline"]]);
    expect(answer.action).toBe("accept");
    expect(answer.content).toMatchObject({
      name: "Ada Lovelace",
      check: true,
      untitledSingleSelectEnum: "Joey",
      titledSingleSelectEnum: "hero-3",
      untitledMultipleSelectEnum: ["Piano", "Drums"],
      integer: 42,
      firstLine: "It was a dark and stormy night.",
    });
  });

  test("Decline declines; Esc at the first question or at a field cancels", async () => {
    expect((await run({ select: firstQuestion(() => "Decline") })).answer).toEqual({ action: "decline" });
    expect((await run({ select: firstQuestion(() => undefined) })).answer).toEqual({ action: "cancel" });
    expect((await run({ select: firstQuestion((options) => options[0]), input: () => undefined })).answer).toEqual({ action: "cancel" });
  });
});

/**
 * The session harness on the host of this run (0.73.1 in the Node 20 run, 0.87.1 in the Node 22 run),
 * proven with the toy extension; and the toy's "find and call within one prompt" on that host.
 */
import { afterEach, describe, expect, test } from "vitest";
import { offeredToolNames, toolResultTexts } from "./helpers/faux-script.ts";
import { currentHost } from "./helpers/hosts.ts";
import { type PiSession, type SessionOptions, startSession } from "./helpers/pi-session.ts";
import { ECHO_TEXT, findAndCallSteps } from "./fixtures/faux-scripts/find-and-call-steps.ts";

const TOY = "test/fixtures/extensions/toy.ts";
const host = currentHost();
const sessions: PiSession[] = [];

async function start(options: Partial<SessionOptions> = {}): Promise<PiSession> {
  const pi = await startSession({ extensions: [TOY], ...options });
  sessions.push(pi);
  return pi;
}

afterEach(async () => {
  await Promise.all(sessions.splice(0).map((pi) => pi.dispose()));
});

const notifications = (pi: PiSession) => pi.ui.flatMap((entry) => (entry.kind === "notify" ? [entry.message] : []));

describe(`Pi ${host.version} in-process`, () => {
  test("records the tools offered at each request; a tool activated in execute() joins as the host allows", async () => {
    const pi = await start({
      script: [{ toolCalls: [{ name: "toy_find", arguments: { query: "echo" } }] }, "found it", "next prompt"],
    });
    await pi.prompt("find echo");
    await pi.prompt("and now?");

    const [first, afterFind, nextPrompt] = pi.requests.map(offeredToolNames);
    const proxy = host.refreshesToolsEachTurn ? [] : ["toy_call"];
    expect(first).toEqual(["read", "bash", "edit", "write", "toy_find", ...proxy]);
    expect(afterFind?.includes("toy_echo")).toBe(host.refreshesToolsEachTurn);
    expect(nextPrompt).toContain("toy_echo");
    expect(pi.requests[0]?.tools.find((tool) => tool.name === "toy_find")?.parameters).toMatchObject({
      properties: { query: { type: "string" } },
    });
    expect(pi.requests[0]?.systemPrompt).toContain("pi");
    expect(toolResultTexts(pi.requests[1]!)).toEqual([pi.toolResults[0]?.text]);
    expect(pi.toolResults).toMatchObject([{ toolName: "toy_find", isError: false, details: { loaded: ["toy_echo"] } }]);
    expect(pi.activeToolNames()).toContain("toy_echo");
  });

  test("the model finds a tool and calls it within one prompt; once loaded it is called directly", async () => {
    const pi = await start({ script: [...findAndCallSteps, ...findAndCallSteps] });
    await pi.prompt("echo something");

    expect(pi.requests).toHaveLength(3);
    expect(pi.requests[2]?.messages.filter((message) => message.role === "user")).toHaveLength(1);
    expect(pi.toolResults.map((result) => result.toolName)).toEqual(["toy_find", host.refreshesToolsEachTurn ? "toy_echo" : "toy_call"]);
    expect(pi.toolResults[1]).toMatchObject({ isError: false, text: `echo: ${ECHO_TEXT}` });
    expect(pi.toolResults[0]?.text).toContain(host.refreshesToolsEachTurn ? "call it directly" : "toy_call({");

    await pi.prompt("echo again");
    expect(pi.toolResults.slice(2).map(({ toolName, text }) => ({ toolName, text }))).toEqual([
      { toolName: "toy_find", text: expect.stringContaining("call it directly") },
      { toolName: "toy_echo", text: `echo: ${ECHO_TEXT}` },
    ]);
  });

  test.skipIf(host.refreshesToolsEachTurn)("a proxied call is validated against the tool's own schema", async () => {
    const pi = await start({
      script: [
        { toolCalls: [{ name: "toy_call", arguments: { tool: "toy_echo", arguments: { text: 42 } } }] },
        {
          toolCalls: [{ name: "toy_call", arguments: { tool: "toy_echo", arguments: {} } }],
        },
        "done",
      ],
    });
    await pi.prompt("echo a number");
    expect(pi.toolResults.map(({ isError, text }) => ({ isError, text }))).toEqual([
      { isError: false, text: "echo: 42" },
      { isError: true, text: expect.stringContaining("text") },
    ]);
  });

  test("prompt() returns once the extensions have handled the end of the run", async () => {
    const pi = await start({ script: ["hi"] });
    await pi.prompt("hello");
    expect(notifications(pi)).toEqual(["toy started (startup)", "toy saw the run end"]);
  });

  test("captures what a command shows, and its error", async () => {
    const pi = await start();
    const output = await pi.command("/toy hello");
    expect(output).toEqual({
      ui: [
        { kind: "notify", message: "toy says hello", level: "info" },
        { kind: "status", key: "toy", text: "on" },
      ],
      text: "toy says hello",
      error: undefined,
    });
    expect((await pi.command("/toy fail")).error).toBe("toy failed on purpose");
    await expect(pi.command("/nope")).rejects.toThrow("no extension command /nope");
    expect(pi.requests).toEqual([]);
  });

  test("session_start and session_shutdown fire on start, reload, restart and dispose", async () => {
    const pi = await start();
    await pi.reload();
    await pi.restart();
    await pi.dispose();
    expect(notifications(pi)).toEqual([
      "toy started (startup)",
      "toy shutdown (reload)",
      "toy started (reload)",
      "toy shutdown (quit)",
      "toy started (startup)",
      "toy shutdown (quit)",
    ]);
  });

  test("the scripted model keeps answering after a reload", async () => {
    const pi = await start({ script: ["before"] });
    await pi.prompt("one");
    await pi.reload();
    pi.script(["after"]);
    await pi.prompt("two");
    expect(pi.requests).toHaveLength(2);
    expect(pi.requests[1]?.tools.map((tool) => tool.name)).toContain("toy_find");
  });

  test("a used-up script fails the prompt with a clear message", async () => {
    const pi = await start({ script: [] });
    await expect(pi.prompt("hello")).rejects.toThrow("faux script exhausted: no step left for model request #0");
  });

  test("an extension that cannot load is reported", async () => {
    const pi = await start({ extensions: ["test/fixtures/extensions/does-not-exist.ts"] });
    expect(pi.errors).toEqual([expect.objectContaining({ event: "load", extensionPath: expect.stringContaining("does-not-exist.ts") })]);
  });
});

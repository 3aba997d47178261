/**
 * A tool the model loaded on a branch of the session is loaded there again after `/tree` (moving away and back),
 * after a resume (a new Pi process on the same session file) and in a fork, and only there: on the host of this
 * run, with server-everything and a scripted model. Pi 0.73 keeps no record of the active tools, so there the
 * adapter restores them from the ToolSearch answers on the branch; newer hosts replay their own record too.
 */
import { afterEach, describe, expect, test } from "vitest";
import { offeredToolNames, type ScriptStep } from "./helpers/faux-script.ts";
import { currentHost } from "./helpers/hosts.ts";
import type { HostSessionEntry } from "./helpers/host-sdk.ts";
import { mcpDirs, REAL_SERVERS } from "./helpers/mcp-setup.ts";
import { type PiSession, startSession } from "./helpers/pi-session.ts";

const host = currentHost();
const ECHO = "everything__echo";
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function session(script: ScriptStep[]): Promise<PiSession> {
  const dirs = await mcpDirs({ mcpServers: { everything: REAL_SERVERS.everything } });
  cleanups.push(dirs.cleanup);
  const pi = await startSession({
    extensions: ["pi-mcp-adapter.ts"],
    agentDir: dirs.agentDir,
    cwd: dirs.cwd,
    script,
    persistSession: true,
  });
  cleanups.push(() => pi.dispose());
  return pi;
}

const loadEcho: ScriptStep = { toolCalls: [{ name: "ToolSearch", arguments: { query: `select:${ECHO}` } }] };
/** The id of the last assistant message of the session (any branch) that says `text`. */
const answerId = (pi: PiSession, text: string) => {
  const entry = pi.session.sessionManager
    .getEntries()
    .findLast(
      (candidate: HostSessionEntry) => candidate.message?.role === "assistant" && JSON.stringify(candidate.message.content).includes(text),
    );
  if (!entry) throw new Error(`no answer "${text}" in the session`);
  return entry.id;
};
const lastOffered = (pi: PiSession) => offeredToolNames(pi.requests.at(-1)!);

describe(`Loaded MCP tools follow the session's branches on Pi ${host.version}`, () => {
  test("/tree: gone on a branch that never loaded it, back on the branch that did", async () => {
    const pi = await session(["plain answer", loadEcho, "echo loaded", "other branch", "back on the echo branch"]);
    await pi.prompt("first");
    await pi.prompt("load echo");
    expect(pi.activeToolNames()).toContain(ECHO);

    await pi.navigateTree(answerId(pi, "plain answer"));
    expect(pi.activeToolNames()).not.toContain(ECHO);
    await pi.prompt("something else");
    expect(lastOffered(pi)).not.toContain(ECHO);

    await pi.navigateTree(answerId(pi, "echo loaded"));
    expect(pi.activeToolNames()).toContain(ECHO);
    await pi.prompt("echo again");
    expect(lastOffered(pi)).toContain(ECHO);
  }, 90_000); // the server's first listing: ~5 s alone, past 60 s once with the machine's load average at 30

  test("resume: a new Pi process on the same session file has the tool loaded", async () => {
    const pi = await session([loadEcho, "echo loaded"]);
    await pi.prompt("load echo");
    const file = pi.session.sessionManager.getSessionFile();

    await pi.restart();
    expect(pi.session.sessionManager.getSessionFile()).toBe(file);
    expect(pi.activeToolNames()).toContain(ECHO);
    pi.script(["resumed"]);
    await pi.prompt("still there?");
    expect(lastOffered(pi)).toContain(ECHO);
  }, 90_000);

  test.skipIf(host.refreshesToolsEachTurn)(
    "resume: a tool McpCall activated without a search stays loaded too",
    async () => {
      const call: ScriptStep = { toolCalls: [{ name: "McpCall", arguments: { tool: ECHO, arguments: { message: "hi" } } }] };
      const pi = await session([call, "called"]);
      await pi.prompt("call echo");
      expect(pi.toolResults.map(({ toolName, isError, text }) => ({ toolName, isError, text }))).toEqual([
        { toolName: "McpCall", isError: false, text: "Echo: hi" },
      ]);

      await pi.restart();
      expect(pi.activeToolNames()).toContain(ECHO);
    },
    90_000,
  );

  test("fork: a fork after the load has it, a fork before the load does not", async () => {
    const pi = await session(["plain answer", loadEcho, "echo loaded", "in the fork"]);
    await pi.prompt("first");
    await pi.prompt("load echo");
    const beforeLoad = answerId(pi, "plain answer");
    const afterLoad = answerId(pi, "echo loaded");

    await pi.fork(afterLoad);
    expect(pi.activeToolNames()).toContain(ECHO);
    await pi.prompt("use it");
    expect(lastOffered(pi)).toContain(ECHO);

    await pi.fork(beforeLoad);
    expect(pi.activeToolNames()).not.toContain(ECHO);
  }, 90_000);
});

/**
 * MCP beyond tools, end to end in the real Pi with the fx fixture server: prompts as `/mcp__fx__<prompt>` commands
 * (from a cold start too, registered from the cache), the server's instructions in the ToolSearch answer that first
 * loads one of its tools, and resource templates as tools.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, test, vi } from "vitest";
import { callLoaded, ENTRY, faultHarness, notifications, search, waitForStatus } from "./helpers/fault-setup.ts";
import { contentText } from "./helpers/faux-script.ts";
import { currentHost, REPO_ROOT } from "./helpers/hosts.ts";
import type { McpDirs } from "./helpers/mcp-setup.ts";
import { loadConfig } from "../config.ts";
import { CACHE_VERSION, createCacheEntry, writeServerEntries } from "../metadata-cache.ts";
import { runPrint } from "./helpers/pi-print.ts";
import { type PiSession, startSession } from "./helpers/pi-session.ts";
import { descendantProcesses } from "./helpers/processes.ts";

const host = currentHost();
const harness = faultHarness();
const FX_SERVER = join(REPO_ROOT, "test/fixtures/servers/fx-server.mjs");
const INSTRUCTIONS = "Notes are numbered; ask for note 1 first.";

function fxServer(): Record<string, unknown> {
  return { command: process.execPath, args: [FX_SERVER], env: { FX_INSTRUCTIONS: INSTRUCTIONS, FX_LOG: "${workspaceFolder}/fx.log" } };
}

/** What reached the server, in order. */
function fxRequests(dirs: McpDirs): { method: string; params: Record<string, unknown> }[] {
  const file = join(dirs.cwd, "fx.log");
  return existsSync(file)
    ? readFileSync(file, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line))
    : [];
}

/** A prompt command sends the message on its own: wait for the model request it starts, and for the run's end. */
async function promptCommand(pi: PiSession, line: string): Promise<string> {
  const before = pi.requests.length;
  const output = await pi.command(line);
  expect(output.error).toBeUndefined();
  // The run ends with the scripted text reply.
  await vi.waitFor(
    () => {
      expect(pi.requests.length).toBeGreaterThan(before);
      expect(pi.session.messages.at(-1)?.role).toBe("assistant");
    },
    { timeout: 60_000, interval: 20 },
  );
  return contentText(pi.requests.at(-1)!.messages.at(-1)!.content);
}

describe(`MCP prompts, instructions and resource templates on Pi ${host.version}`, () => {
  test("/mcp__fx__greet Bob from a cold start: the command is registered from the cache, the server starts on use, the prompt's text is the user's message", async () => {
    const dirs = await harness.dirs({ fx: fxServer() });
    const warm = await harness.session(dirs);
    await waitForStatus(warm, /fx: [^\n]*\d+ tools(?! \(from the cache)/);
    await warm.dispose();
    const cache = JSON.parse(readFileSync(join(dirs.agentDir, "mcp-cache.json"), "utf8"));
    expect(cache.version).toBe(CACHE_VERSION);
    expect(cache.servers.fx.prompts.map((prompt: { name: string }) => prompt.name)).toEqual(["greet", "example"]);
    expect(cache.servers.fx.instructions).toBe(INSTRUCTIONS);

    const pi = await startSession({
      extensions: [ENTRY],
      agentDir: dirs.agentDir,
      cwd: dirs.cwd,
      script: ["Hello Bob!", "Hello Ann!", "Hello Zoe!", "Explained."],
      dialogs: { input: (title) => (title.startsWith("greet: name") ? "Zoe" : undefined) },
    });
    harness.onCleanup(() => pi.dispose());
    expect((await pi.command("/mcp status")).text).toMatch(/fx: not started/);
    expect(await descendantProcesses(FX_SERVER)).toEqual([]);
    expect((await pi.command("/mcp prompts")).text).toBe(
      "fx (2 prompts):\n  /mcp__fx__greet <name> [tone] — Greets someone\n  /mcp__fx__example [topic] — A worked example",
    );

    expect(await promptCommand(pi, "/mcp__fx__greet Bob")).toBe("Please greet Bob in a warm tone.");
    expect(await promptCommand(pi, '/mcp__fx__greet tone="very formal" name=Ann')).toBe("Please greet Ann in a very formal tone.");
    expect(await promptCommand(pi, "/mcp__fx__greet")).toBe("Please greet Zoe in a warm tone.");
    expect(await promptCommand(pi, "/mcp__fx__example caching")).toBe(
      "[user]\nExplain caching.\n[assistant]\nGladly.\n[user]\n[Resource: note://1]\nBuy milk",
    );
    expect(
      fxRequests(dirs)
        .filter((entry) => entry.method === "prompts/get")
        .map((entry) => entry.params.arguments),
    ).toEqual([{ name: "Bob" }, { name: "Ann", tone: "very formal" }, { name: "Zoe" }, { topic: "caching" }]);
    expect(pi.requests[0]!.messages.filter((message) => message.role === "user")).toHaveLength(1);
    expect(notifications(pi).filter((notice) => notice.level !== "info")).toEqual([]);
    expect(pi.errors).toEqual([]);
    await pi.dispose();
    expect(await descendantProcesses(FX_SERVER)).toEqual([]);
  }, 180_000);

  test("print mode: a missing argument is reported; a complete command says print mode cannot run prompts (Pi would exit before the answer), and starts no server", async () => {
    const dirs = await harness.dirs({ fx: fxServer() });
    const greet = {
      name: "greet",
      arguments: [
        { name: "name", description: "Who to greet", required: true },
        { name: "tone", description: "How (default: warm)" },
      ],
    };
    // The cache entry written as a session would (no warm-up session: print runs are slow enough on a busy machine).
    const definition = loadConfig({ agentDir: dirs.agentDir, cwd: dirs.cwd }).servers[0]!;
    await writeServerEntries(dirs.agentDir, {
      fx: createCacheEntry(definition, [], [], Date.now(), { resourceTemplates: [], prompts: [greet], instructions: undefined }),
    });
    const result = await runPrint({
      extensions: [ENTRY],
      agentDir: dirs.agentDir,
      cwd: dirs.cwd,
      script: [],
      prompts: ["/mcp__fx__greet Bob"],
    });
    expect(result.exitCode).toBe(0);
    expect(result.requests).toEqual([]);
    expect(result.stdout + result.stderr).toContain(
      "/mcp__fx__greet: print mode ends before the model could answer a prompt; run it in interactive or RPC mode.",
    );
    expect(fxRequests(dirs).filter((entry) => entry.method === "prompts/get")).toEqual([]);

    const missing = await runPrint({
      extensions: [ENTRY],
      agentDir: dirs.agentDir,
      cwd: dirs.cwd,
      script: [],
      prompts: ["/mcp__fx__greet"],
    });
    expect(missing.exitCode).toBe(0);
    expect(missing.requests).toEqual([]);
    expect(missing.stdout + missing.stderr).toContain(
      "/mcp__fx__greet: missing required argument name.\nUsage: /mcp__fx__greet <name> [tone]",
    );
  }, 180_000);

  test("wrong arguments are explained with the prompt's usage; a prompt the server adds later (prompts/list_changed) is a command at once", async () => {
    const dirs = await harness.dirs({ fx: fxServer() });
    const pi = await harness.session(dirs, [
      search("select:fx__add_prompt"),
      callLoaded("fx__add_prompt", { name: "later" }),
      "added",
      "ok",
    ]);
    await waitForStatus(pi, /fx: [^\n]*\d+ tools(?! \(from the cache)/);
    expect((await pi.command('/mcp__fx__greet "Bob')).text).toBe(
      '/mcp__fx__greet: a " quote is not closed.\nUsage: /mcp__fx__greet <name> [tone]   (or name=value; quotes for spaces)\n  name (required): Who to greet\n  tone: How (default: warm)',
    );
    // The user dismisses the question (the harness's input dialog answers nothing by default).
    expect((await pi.command("/mcp__fx__greet")).text).toMatch(/^\/mcp__fx__greet: cancelled \(no name given\)\./);
    expect(pi.session.extensionRunner.getCommand("mcp__fx__later")).toBeUndefined();

    await pi.prompt("add a prompt");
    await vi.waitFor(() => expect(pi.session.extensionRunner.getCommand("mcp__fx__later")).toBeDefined(), {
      timeout: 60_000,
      interval: 20,
    });
    expect(await promptCommand(pi, "/mcp__fx__later")).toBe("later was added");
    expect(pi.errors).toEqual([]);
  });

  test("the server's instructions come with the ToolSearch answer that first loads one of its tools, and not again; note://{id} is a tool that reads the note", async () => {
    const dirs = await harness.dirs({ fx: fxServer() });
    const pi = await harness.session(dirs, [
      search("select:fx__get_note"),
      callLoaded("fx__get_note", { id: "42" }),
      "read",
      search("select:fx__get_tag,fx__shout"),
      callLoaded("fx__get_tag", { path: "home/work" }),
      "tagged",
    ]);
    await waitForStatus(pi, /fx: [^\n]*4 tools(?! \(from the cache)/);
    await pi.prompt("read note 42");
    const [firstSearch, note] = pi.toolResults;
    expect(firstSearch!.text).toContain(`Instructions from MCP server "fx" (shown once):\n${INSTRUCTIONS}`);
    expect(note).toMatchObject({ isError: false, text: "The answer" });
    const offered =
      pi.requests.at(-1)!.tools.find((tool) => tool.name === "fx__get_note") ??
      pi.requests.at(-1)!.tools.find((tool) => tool.name === "McpCall");
    expect(offered).toBeDefined();

    await pi.prompt("read the tag");
    const [secondSearch, tag] = pi.toolResults.slice(2);
    expect(secondSearch!.text).toContain("fx__shout");
    expect(secondSearch!.text).not.toContain(INSTRUCTIONS);
    expect(tag).toMatchObject({ isError: false, text: "read tag://home/work" });
    expect(
      fxRequests(dirs)
        .filter((entry) => entry.method === "resources/read")
        .map((entry) => entry.params.uri),
    ).toEqual(["note://42", "tag://home/work"]);
    // Not in the always-on catalog: the model sees them only once it loads a tool of the server.
    expect(pi.requests[0]!.tools.find((tool) => tool.name === "ToolSearch")!.description).not.toContain(INSTRUCTIONS);
    expect(pi.errors).toEqual([]);
  });
});

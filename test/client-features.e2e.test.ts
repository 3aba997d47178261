/**
 * What the client offers servers, in the real Pi of this run's host, against test/fixtures/servers/
 * client-features-server.mjs: URL-mode elicitation (the page shown, opened in the "browser" only after the user
 * agrees; accept, decline and cancel reach the server), a call refused with -32042 retried once the user is done,
 * and roots answered with Pi's working directory (the real filesystem server, started without a directory, works
 * in it). Print mode, where nobody can be asked: declined, and the model is
 * told which page the user must open.
 */
import { existsSync, readFileSync } from "node:fs";
import { chmod, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, test } from "vitest";
import { offeredToolNames, type ModelRequest, type ScriptStep } from "./helpers/faux-script.ts";
import { currentHost, REPO_ROOT } from "./helpers/hosts.ts";
import { type McpDirs, mcpDirs } from "./helpers/mcp-setup.ts";
import { runPrint } from "./helpers/pi-print.ts";
import { type DialogAnswers, startSession } from "./helpers/pi-session.ts";
import { waitForStatus } from "./helpers/fault-setup.ts";
import { warmCache } from "./helpers/items-fixture.ts";

const host = currentHost();
const ENTRY = "pi-mcp-adapter.ts";
const SERVER = join(REPO_ROOT, "test/fixtures/servers/client-features-server.mjs");
const SIGN_IN_URL = "https://example.com/sign-in?session=42";
const PAY_URL = "https://example.com/pay?order=7";
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Setup {
  dirs: McpDirs;
  /** What the fixture logged. */
  events: () => Record<string, unknown>[];
  /** The URLs the "browser" was asked to open. */
  opened: () => string[];
}

/** The fixture server, and $BROWSER pointed at a script that only records the URL. */
async function setup(extra: Record<string, unknown> = {}): Promise<Setup> {
  const dirs = await mcpDirs({
    mcpServers: {
      features: { command: process.execPath, args: [SERVER], env: { FEATURES_LOG: "${workspaceFolder}/features.log" }, ...extra },
    },
  });
  cleanups.push(dirs.cleanup);
  const browser = join(dirs.cwd, "browser.sh");
  await writeFile(browser, `#!/bin/sh\necho "$1" >> "${join(dirs.cwd, "opened.log")}"\n`);
  await chmod(browser, 0o755);
  const previous = process.env.BROWSER;
  process.env.BROWSER = browser;
  cleanups.push(() => {
    if (previous === undefined) delete process.env.BROWSER;
    else process.env.BROWSER = previous;
  });
  const lines = (file: string) => (existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : []);
  return {
    dirs,
    events: () => lines(join(dirs.cwd, "features.log")).map((line) => JSON.parse(line)),
    opened: () => lines(join(dirs.cwd, "opened.log")),
  };
}

/** A call of a loaded tool: direct, or through McpCall where the host offers it only from the next prompt. */
const callLoaded =
  (name: string, args: Record<string, unknown> = {}) =>
  (request: ModelRequest) =>
    offeredToolNames(request).includes(name)
      ? { toolCalls: [{ name, arguments: args }] }
      : { toolCalls: [{ name: "McpCall", arguments: { tool: name, arguments: args } }] };

/** The model loads the tool, then calls it. */
function callScript(tool: string): ScriptStep[] {
  const name = `features__${tool}`;
  return [{ toolCalls: [{ name: "ToolSearch", arguments: { query: `select:${name}` } }] }, callLoaded(name), "done"];
}

async function run(setupDone: Setup, tool: string, dialogs: DialogAnswers) {
  const pi = await startSession({
    extensions: [ENTRY],
    agentDir: setupDone.dirs.agentDir,
    cwd: setupDone.dirs.cwd,
    script: callScript(tool),
    dialogs,
  });
  cleanups.push(() => pi.dispose());
  await pi.prompt(`run ${tool}`);
  return { result: pi.toolResults.at(-1)!, dialogs: pi.ui.filter((entry) => entry.kind === "dialog"), pi };
}

const pageDialog = (answer: string | undefined) => (title: string) => (title.includes("asks you to open a page") ? answer : undefined);

describe(`URL elicitation and roots on Pi ${host.version}`, () => {
  test("the page is shown with the server's message; Open opens the browser and accepts", async () => {
    const features = await setup();
    const { result, dialogs } = await run(features, "open_page", { select: pageDialog("Open in browser") });
    expect(dialogs[0]).toMatchObject({
      dialog: "select",
      title: `MCP server "features" asks you to open a page: Sign in to Example\n${SIGN_IN_URL}`,
    });
    expect(result).toMatchObject({ isError: false, text: "the user chose: accept" });
    expect(features.events()).toContainEqual({ event: "elicitation", action: "accept" });
    await expect.poll(features.opened).toEqual([SIGN_IN_URL]);
  });

  test("Decline declines and dismissing cancels; neither opens the browser", async () => {
    const features = await setup();
    expect((await run(features, "open_page", { select: pageDialog("Decline") })).result.text).toBe("the user chose: decline");
    expect((await run(features, "open_page", { select: pageDialog(undefined) })).result.text).toBe("the user chose: cancel");
    expect(features.events().filter((event) => event.event === "elicitation")).toEqual([
      { event: "elicitation", action: "decline" },
      { event: "elicitation", action: "cancel" },
    ]);
    expect(features.opened()).toEqual([]);
  });

  test("a call refused with -32042 shows the page, and runs again once the user says it is done", async () => {
    const features = await setup();
    const { result, dialogs } = await run(features, "paid_report", { select: pageDialog("Open in browser"), confirm: () => true });
    expect(dialogs.map((dialog) => dialog.title)).toEqual([
      `MCP server "features" asks you to open a page: Approve the payment of 1 EUR\n${PAY_URL}`,
      'MCP server "features"',
    ]);
    expect(result).toMatchObject({ isError: false, text: "report ready" });
    expect(features.events().filter((event) => event.event === "paid")).toHaveLength(2);
    await expect.poll(features.opened).toEqual([PAY_URL]);
  });

  test("declining the -32042 page: the call is not retried, and the model is told the page", async () => {
    const features = await setup();
    const { result } = await run(features, "paid_report", { select: pageDialog("Decline") });
    expect(result.isError).toBe(true);
    expect(result.text).toContain(
      `MCP server "features" needs the user to open ${PAY_URL} (Approve the payment of 1 EUR) first. The user did not open it`,
    );
    expect(features.events().filter((event) => event.event === "paid")).toHaveLength(1);
  });

  test("roots/list is answered with Pi's working directory; the client offers roots, both elicitation modes, sampling with tools, both as tasks, and MCP Apps", async () => {
    const features = await setup();
    const { result } = await run(features, "list_roots", {});
    const cwdUri = pathToFileURL(features.dirs.cwd).href;
    expect(JSON.parse(result.text)).toEqual([{ uri: cwdUri, name: features.dirs.cwd.split("/").at(-1) }]);
    expect(features.events()[0]).toEqual({
      event: "capabilities",
      capabilities: {
        roots: { listChanged: true },
        elicitation: { form: { applyDefaults: true }, url: {} },
        sampling: { tools: {} },
        // The 2025-11-25 task receiver (ext-tasks' bindTaskReceiver): forms and completions asked for as tasks.
        tasks: { list: {}, cancel: {}, requests: { elicitation: { create: {} }, sampling: { createMessage: {} } } },
        extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } },
      },
    });
  });
});

test(`the real filesystem server, given no directory, works in Pi's working directory (roots) on Pi ${host.version}`, async () => {
  const server = join(REPO_ROOT, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
  // Eager, and connected before the prompt: the server reads its roots after `initialized`, asynchronously, and a
  // call made right after a lazy start can reach it before it has them (it then allows no directory yet).
  const dirs = await mcpDirs({ mcpServers: { fs: { command: process.execPath, args: [server], lifecycle: "eager" } } });
  cleanups.push(dirs.cleanup);
  await writeFile(join(dirs.cwd, "notes.txt"), "from the project");
  const load = { toolCalls: [{ name: "ToolSearch", arguments: { query: "select:fs__list_allowed_directories,fs__read_text_file" } }] };
  const pi = await startSession({ extensions: [ENTRY], agentDir: dirs.agentDir, cwd: dirs.cwd, script: [load, "loaded"] });
  cleanups.push(() => pi.dispose());
  await waitForStatus(pi, /✓ fs: connected/, 60_000);
  await pi.prompt("load the file tools");
  // The server asks for its roots when it likes after `initialized`: under load, a first call can come before.
  await expect
    .poll(
      async () => {
        pi.script([callLoaded("fs__list_allowed_directories"), "listed"]);
        await pi.prompt("where may you read?");
        return pi.toolResults.at(-1)!.text;
      },
      { timeout: 30_000 },
    )
    .toBe(`Allowed directories:\n${dirs.cwd}`);
  pi.script([callLoaded("fs__read_text_file", { path: join(dirs.cwd, "notes.txt") }), "done"]);
  await pi.prompt("read my notes");
  expect(pi.toolResults.at(-1)).toMatchObject({ isError: false, text: "from the project" });
});

describe(`URL elicitation in print mode on Pi ${host.version}`, () => {
  test("declined without a UI; the model is told the page; -32042 likewise; no form elicitation is offered", async () => {
    const features = await setup({ directTools: true });
    await warmCache(features.dirs, "features");
    const calls = (tool: string) => ({ toolCalls: [{ name: `features__${tool}`, arguments: {} }] });
    const result = await runPrint({
      extensions: [REPO_ROOT],
      script: [calls("open_page"), "one", calls("paid_report"), "two"],
      prompts: ["sign in", "get the report"],
      agentDir: features.dirs.agentDir,
      cwd: features.dirs.cwd,
    });
    expect(result.exitCode).toBe(0);
    const [signIn, report] = result.toolResults;
    expect(signIn).toMatchObject({ isError: false });
    expect(signIn!.text).toBe(
      `the user chose: decline\nMCP server "features" asked the user to open ${SIGN_IN_URL} (Sign in to Example). Pi could not ask the user here (no UI), so it declined: tell the user to open it, then try again.`,
    );
    expect(report!.isError).toBe(true);
    expect(report!.text).toContain(
      `needs the user to open ${PAY_URL} (Approve the payment of 1 EUR) first. Pi could not ask the user here (no UI)`,
    );
    expect(features.opened()).toEqual([]);
    expect(
      features
        .events()
        .filter((event) => event.event === "capabilities")
        .at(-1),
    ).toMatchObject({ capabilities: { elicitation: { url: {} } } });
    expect(
      features
        .events()
        .filter((event) => event.event === "capabilities")
        .at(-1),
    ).not.toHaveProperty("capabilities.elicitation.form");
  });
});

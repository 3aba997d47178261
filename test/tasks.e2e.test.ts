/**
 * Tool calls that run as tasks, in the real Pi, with real servers: the everything server (2025-11-25 tasks: its
 * `simulate-research-query`, which requires a task, and the two `*-async` tools it offers a client that takes
 * task-augmented requests) and our 2026-07-28 fixture with the Tasks extension (tasks-server.mjs) over stdio and
 * HTTP. The everything server runs behind a tap (stdio-tap.mjs) that logs what it receives.
 *
 * - One SDK session, shared by the cases that only call: a task waited for is an ordinary result; input a task asks
 *   for is answered in Pi's dialogs, in both eras; Esc sends `tasks/cancel`; the async tools work.
 * - A task handed back (`waitMs: 0`) is delivered into the conversation: in print mode (our fixture's; where the host
 *   waits at the end of the run; on 0.73.1 the call waits for it instead), and the everything server's ambiguous
 *   research in RPC, with the input it asks for answered in the client's dialog, and in the TUI, with the footer
 *   showing it and the dialog answered there.
 * - A session resumed after Pi quit follows a task the HTTP server kept, and delivers its outcome.
 * - Nothing is left running after any of them.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { ENTRY, search } from "./helpers/fault-setup.ts";
import type { FauxRecordLine } from "./helpers/faux-provider-extension.ts";
import { contentText, type ModelReply, type ModelRequest, type ScriptStep } from "./helpers/faux-script.ts";
import { readEvents } from "./helpers/fixture-log.ts";
import { type FixtureProcess, startFixtureProcess } from "./helpers/fixture-process.ts";
import { currentHost, REPO_ROOT } from "./helpers/hosts.ts";
import { type McpDirs, mcpDirs } from "./helpers/mcp-setup.ts";
import { runPrint, runRpc } from "./helpers/pi-print.ts";
import { type PiSession, startSession } from "./helpers/pi-session.ts";
import { startPiTui } from "./helpers/pi-tui.ts";
import { processesWithMarker } from "./helpers/processes.ts";

const host = currentHost();
const SERVERS = join(REPO_ROOT, "test/fixtures/servers");
const TASKS_FIXTURE = join(SERVERS, "tasks-server.mjs");
const EVERYTHING = join(REPO_ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const RESEARCH = "everything__simulate-research-query";

/** The everything server behind the tap: what it receives goes to `<project>/everything.log`. */
const everything = {
  command: process.execPath,
  args: [join(SERVERS, "stdio-tap.mjs"), "${workspaceFolder}/everything.log", process.execPath, EVERYTHING, "stdio"],
};
const tasksStdio = { command: process.execPath, args: [TASKS_FIXTURE], env: { TASKS_LOG: "${workspaceFolder}/tasks.log" } };

/** The requests of `method` a server's log (in the project dir) shows it received. */
const received = (dirs: Pick<McpDirs, "cwd">, server: string, method: string) =>
  readEvents(join(dirs.cwd, `${server}.log`)).filter((entry) => (entry as { method?: string }).method === method).length;

/** The texts of the user-side messages a request shows the model (a delivered outcome among them). */
const userTexts = (request: ModelRequest | undefined) =>
  (request?.messages ?? []).filter((message) => message.role === "user").map((message) => contentText(message.content));

/** Calls the tools (each `[name, args]`) directly where the host offers a tool loaded this prompt, else through McpCall. */
function calls(...tools: [string, Record<string, unknown>][]): ScriptStep {
  return (request) => ({
    toolCalls: tools.map(([name, args]) =>
      request.tools.some((tool) => tool.name === name)
        ? { name, arguments: args }
        : { name: "McpCall", arguments: { tool: name, arguments: args } },
    ),
  });
}

/** The same, for a script the CLI reads from JSON (no functions): decided by the host. */
function callFor(name: string, args: Record<string, unknown>): ModelReply {
  return {
    toolCalls: [host.refreshesToolsEachTurn ? { name, arguments: args } : { name: "McpCall", arguments: { tool: name, arguments: args } }],
  };
}

const HANDED_BACK = /^MCP task [0-9a-f]{8} of tool "simulate-research-query" on server "everything" is still running/;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe(`tasks in a Pi ${host.version} session`, () => {
  let http: FixtureProcess;
  let dirs: McpDirs;
  let pi: PiSession;

  beforeAll(async () => {
    http = await startFixtureProcess(TASKS_FIXTURE, "tasks fixture (HTTP)", { TASKS_TRANSPORT: "http" });
    dirs = await mcpDirs({ mcpServers: { everything, tasks: tasksStdio, remote: { url: `${http.base}/mcp` } } });
    pi = await startSession({
      extensions: [ENTRY],
      agentDir: dirs.agentDir,
      cwd: dirs.cwd,
      dialogs: {
        // The server's use of the model: yes. A choice: to answer the server's questions, the snake, blue, or yes.
        confirm: () => true,
        select: (_title, options) =>
          options.find((option) => option.startsWith("Answer") || /snake/i.test(option) || option === "Blue" || option === "yes"),
        input: (title) => (title.includes("Your Name") ? "Ada" : undefined),
      },
    });
  });

  afterAll(async () => {
    await pi.dispose();
    await http.stop();
    expect(await processesWithMarker(dirs.agentDir)).toEqual([]);
    await dirs.cleanup();
  });

  const lastResult = () => pi.toolResults.at(-1)!;

  test("simulate-research-query (it requires a task): waited for, an ordinary result", async () => {
    pi.script([search(`select:${RESEARCH}`), calls([RESEARCH, { topic: "python" }]), "done"]);
    await pi.prompt("research python");
    expect(lastResult()).toMatchObject({ isError: false });
    expect(lastResult().text).toMatch(/^# Research Report: python\n/);
    // Its result read at its end (its progress polled, or told by the server's status notifications).
    expect(received(dirs, "everything", "tasks/result")).toBeGreaterThan(0);
  });

  test("input a task asks for is answered in Pi's dialogs: a 2025 task, and a 2026 one over stdio and over HTTP", async () => {
    const args = { topic: "python", ambiguous: true };
    pi.script([
      search(`select:${RESEARCH},tasks__research,remote__research`),
      calls([RESEARCH, args], ["tasks__research", args], ["remote__research", args]),
      "done",
    ]);
    await pi.prompt("research python, the ambiguous way");
    const results = pi.toolResults.slice(-3).map((result) => [result.isError, result.text.split("\n")[0]]);
    expect(results.sort()).toEqual([
      [false, "# Research Report: python (snake)"],
      [false, "Report on python (snake)"],
      [false, "Report on python (snake)"],
    ]);
    const asked = pi.ui.flatMap((entry) => (entry.kind === "dialog" && entry.dialog === "select" ? [entry.title] : []));
    expect(asked).toEqual(
      expect.arrayContaining([
        'MCP server "everything" asks:\nThe research query "python" could have multiple interpretations. Please clarify what you\'re looking for:',
        'MCP server "tasks" asks:\nWhich "python" do you mean?',
        'MCP server "remote" asks:\nWhich "python" do you mean?',
      ]),
    );
  });

  test("Esc while a call waits for its task: the server receives tasks/cancel, the call says it was cancelled", async () => {
    const cancels = received(dirs, "everything", "tasks/cancel");
    const statuses = pi.ui.length;
    // No step after the call: an aborted run asks the model nothing more.
    pi.script([search(`select:${RESEARCH}`), calls([RESEARCH, { topic: "cancel me" }])]);
    const prompting = pi.prompt("research, then stop").catch((error: Error) => error);
    // The task exists: the footer counts it.
    const footerCountsIt = () => pi.ui.slice(statuses).some((entry) => entry.kind === "status" && /1 task running/.test(entry.text ?? ""));
    await expect.poll(footerCountsIt, { timeout: 20_000 }).toBe(true);
    await pi.session.abort();
    await prompting;
    await expect.poll(() => received(dirs, "everything", "tasks/cancel"), { timeout: 10_000 }).toBe(cancels + 1);
    expect(lastResult()).toMatchObject({ isError: true });
    expect(lastResult().text).toMatch(/simulate-research-query.*was cancelled/);
  });

  test("the async tools: the server asks for a form and a completion as tasks of the client's, and polls them", async () => {
    const [form, sample] = ["everything__trigger-elicitation-request-async", "everything__trigger-sampling-request-async"];
    pi.script([search(`select:${form},${sample}`), calls([form, {}]), "form done"]);
    await pi.prompt("ask me through a task");
    expect(lastResult().text).toContain("[COMPLETED] User provided the requested information!");
    expect(lastResult().text).toContain("- Name: Ada");
    pi.script([calls([sample, { prompt: "Say hello", maxTokens: 50 }]), "Hello from the model", "sampling done"]);
    await pi.prompt("sample through a task");
    expect(lastResult().text).toContain("[COMPLETED] Async sampling completed!");
    expect(lastResult().text).toContain("Hello from the model");
  });
});

test(`a session resumed, reloaded or forked on Pi ${host.version} follows the tasks the HTTP server kept, and delivers each outcome once`, async () => {
  const logDir = await mkdtemp(join(tmpdir(), "tasks-resume-"));
  cleanups.push(() => rm(logDir, { recursive: true, force: true }));
  const http = await startFixtureProcess(TASKS_FIXTURE, "tasks fixture (HTTP)", {
    TASKS_TRANSPORT: "http",
    TASKS_LOG: join(logDir, "remote.log"),
  });
  cleanups.push(() => http.stop());
  const dirs = await mcpDirs({ mcpServers: { remote: { url: `${http.base}/mcp` } }, settings: { tasks: { waitMs: 0 } } });
  cleanups.push(dirs.cleanup);
  const pi = await startSession({ extensions: [ENTRY], agentDir: dirs.agentDir, cwd: dirs.cwd, persistSession: true });
  cleanups.push(() => pi.dispose());
  /** Hands back a task that waits `ms`, ends the session the way `replace` does, and waits for the outcome. */
  const handBackThen = async (ms: number, replace: () => Promise<void>) => {
    pi.script([calls(["remote__wait", { ms }]), "it runs on"]);
    await pi.prompt(`wait ${ms} ms`);
    expect(pi.toolResults.at(-1)!.text).toMatch(/^MCP task [0-9a-f]{8} of tool "wait" on server "remote" is still running/);
    pi.script([`got the ${ms} ms outcome`]);
    await replace();
    const outcome = new RegExp(`\\(called with \\{"ms":${ms}\\}\\) completed after [\\d.]+ s\\. Its result:\\nwaited ${ms} ms`);
    await expect.poll(() => userTexts(pi.requests.at(-1)).join("\n"), { timeout: 30_000 }).toMatch(outcome);
  };
  pi.script([search("select:remote__wait"), "loaded"]);
  await pi.prompt("load the wait tool");
  await handBackThen(2_000, () => pi.restart()); // Pi quits with the task running, and starts again on the session file
  await handBackThen(1_500, () => pi.reload());
  await handBackThen(1_200, () => pi.fork(pi.session.sessionManager.getBranch().at(-1)!.id));
  expect(received({ cwd: logDir }, "remote", "tasks/cancel")).toBe(0);
  // Each outcome once on the branch the session ended on.
  const delivered = pi.session.sessionManager
    .getBranch()
    .filter((entry) => entry.type === "custom_message" && entry.customType === "mcp-task-outcome");
  expect(delivered).toHaveLength(3);
});

test(`print mode on Pi ${host.version}: a task handed back is waited for at the end of the run, and its outcome answered`, async () => {
  const dirs = await mcpDirs({ mcpServers: { tasks: tasksStdio }, settings: { tasks: { waitMs: 0 } } });
  cleanups.push(dirs.cleanup);
  const result = await runPrint({
    extensions: [ENTRY],
    agentDir: dirs.agentDir,
    cwd: dirs.cwd,
    script: [search("select:tasks__wait") as ModelReply, callFor("tasks__wait", { ms: 1_000 }), "carrying on", "read the outcome"],
    prompts: ["wait a second"],
  });
  expect(result.exitCode, result.stderr).toBe(0);
  const call = result.toolResults[1]!;
  if (host.awaitsAgentEnd) {
    // Handed back at once; the run ended; the outcome started the next run before pi -p exited.
    expect(call.text).toMatch(/^MCP task [0-9a-f]{8} of tool "wait" on server "tasks" is still running/);
    expect(userTexts(result.requests.at(-1)).at(-1)).toMatch(/completed after [\d.]+ s\. Its result:\nwaited 1000 ms$/);
    expect(result.stdout.trim()).toBe("read the outcome");
  } else {
    // Pi 0.73.1 ends the run without waiting at its end: the call waits for its task instead.
    expect(call.text).toBe("waited 1000 ms");
    expect(result.stdout.trim()).toBe("carrying on");
  }
  expect(await processesWithMarker(dirs.agentDir)).toEqual([]);
});

test(`RPC on Pi ${host.version}: a task handed back asks for input in the client's dialog, and its outcome starts a run`, async () => {
  const dirs = await mcpDirs({ mcpServers: { everything }, settings: { tasks: { waitMs: 0 } } });
  cleanups.push(dirs.cleanup);
  const result = await runRpc({
    extensions: [ENTRY],
    agentDir: dirs.agentDir,
    cwd: dirs.cwd,
    script: [
      search(`select:${RESEARCH}`) as ModelReply,
      callFor(RESEARCH, { topic: "python", ambiguous: true }),
      "carrying on",
      "read the report",
    ],
    prompts: ["research python"],
    laterRuns: 1,
    dialogs: (request) =>
      request.method === "confirm"
        ? { confirmed: true }
        : { value: (request.options as string[]).find((option) => option.startsWith("Answer") || /snake/i.test(option)) },
  });
  expect(result.exitCode, result.stderr).toBe(0);
  expect(result.toolResults[1]!.text).toMatch(HANDED_BACK);
  expect(userTexts(result.requests.at(-1)).at(-1)).toMatch(/completed after [\d.]+ s\. Its result:\n# Research Report: python \(snake\)/);
  const asked = result.rpcLines!.filter((line) => line.type === "extension_ui_request" && String(line.title).startsWith("MCP server"));
  expect(asked.map((line) => [line.method, String(line.title).split("\n")[0], line.options])).toEqual([
    ["select", 'MCP server "everything" asks:', ["Answer (1 question)", "Decline"]],
  ]);
  expect(await processesWithMarker(dirs.agentDir)).toEqual([]);
});

test(`the TUI on Pi ${host.version}: a task handed back shows in the footer, asks in the TUI's dialog, and its outcome is answered`, async () => {
  const dirs = await mcpDirs({ mcpServers: { everything }, settings: { tasks: { waitMs: 0 } } });
  cleanups.push(dirs.cleanup);
  const steps = join(dirs.cwd, "steps.json");
  await writeFile(
    steps,
    JSON.stringify([
      search(`select:${RESEARCH}`) as ModelReply,
      callFor(RESEARCH, { topic: "python", ambiguous: true }),
      "Carrying on meanwhile.",
      "Read the snake report.",
    ]),
  );
  const record = join(dirs.agentDir, "record.jsonl");
  const tui = await startPiTui({
    ...dirs,
    extensions: ["test/helpers/faux-json-script.ts"],
    env: { PI_FAUX_STEPS: steps, PI_FAUX_RECORD: record },
    columns: 200,
    rows: 50,
  });
  cleanups.push(() => tui.close());
  await tui.ready();
  tui.keys("research python", "Enter");
  await expect.poll(() => tui.history(), { timeout: 30_000 }).toContain("Carrying on meanwhile.");
  await expect.poll(() => tui.screen(), { timeout: 30_000 }).toMatch(/MCP 1\/1 up · \d+ tools · 1 task running/);
  // The clarification the server asks for mid-task: its question, then the choice.
  await expect.poll(() => tui.screen(), { timeout: 30_000 }).toContain('MCP server "everything" asks');
  tui.keys("Enter");
  await expect.poll(() => tui.screen(), { timeout: 30_000 }).toContain("Python snake species");
  const listed = tui
    .screen()
    .split("\n")
    .filter((line) => /Python programming language|Python snake species|Monty Python/.test(line));
  for (let step = 0; step < listed.findIndex((line) => line.includes("snake")); step++) tui.keys("Down");
  tui.keys("Enter");
  await expect.poll(() => tui.history(), { timeout: 30_000 }).toContain("Read the snake report.");
  const requests = (await readFile(record, "utf8"))
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as FauxRecordLine);
  const last = requests.flatMap((line) => ("request" in line ? [line.request] : [])).at(-1);
  expect(userTexts(last).at(-1)).toMatch(/completed after [\d.]+ s\. Its result:\n# Research Report: python \(snake\)/);
  expect(tui.screen()).not.toContain("task running");
  tui.keys("/quit", "Enter");
  await expect.poll(() => processesWithMarker(dirs.agentDir), { timeout: 30_000 }).toEqual([]);
});

/**
 * What a user sees of their servers, through the real Pi on this run's host, with a 2025-era server that logs and
 * completes (server-everything) and 2026-07-28 ones on the official SDK v2 (v2-server.mjs with V2_OBSERVE=1) over
 * stdio and HTTP:
 * - Logs: each server is asked for its `logLevel`; what it logs is in `/mcp status <server>` and the debug log, and
 *   its first error is told once, briefly.
 * - The protocol trace (`/mcp trace on|off`): a file whose path is shown, holding every traced message's metadata
 *   and none of the secrets planted in the config and the calls: a bearer token, a URL's query, an argument's value,
 *   a result's value, a log message's text.
 * - Completion in the TUI (tmux): a prompt's argument values (the second one's offered from the first's value), long
 *   resource names whole and a resource template's variables in `/mcp-resource` (then read into the editor), and a
 *   server without the capability never asked.
 * The SDK session runs first and leaves the cache the TUI registers its prompt commands from.
 */
import { existsSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { faultHarness, notifications, waitForStatus } from "./helpers/fault-setup.ts";
import { type FixtureProcess, startFixtureProcess } from "./helpers/fixture-process.ts";
import { currentHost, REPO_ROOT } from "./helpers/hosts.ts";
import { warmCache } from "./helpers/items-fixture.ts";
import { type McpDirs, mcpDirs, REAL_SERVERS } from "./helpers/mcp-setup.ts";
import type { PiSession } from "./helpers/pi-session.ts";
import { startPiTui, TUI_STEP_TIMEOUT_MS } from "./helpers/pi-tui.ts";

const host = currentHost();
const harness = faultHarness();
const V2_SERVER = join(REPO_ROOT, "test/fixtures/servers/v2-server.mjs");
const SECRETS = {
  token: "TOKEN-SECRET-7f3a",
  query: "QUERY-SECRET-91c2",
  argument: "ARGUMENT-SECRET-c0de",
  result: "RESULT-SECRET-beef",
  log: "LOG-SECRET-disk-full",
};

let dirs: McpDirs;
let remote: FixtureProcess;

beforeAll(async () => {
  remote = await startFixtureProcess(V2_SERVER, "v2 HTTP server", { V2_TRANSPORT: "http", V2_OBSERVE: "1", V2_RESULT: SECRETS.result });
  const v2 = (env: Record<string, string>, extra: Record<string, unknown> = {}) => ({
    command: process.execPath,
    args: [V2_SERVER],
    env,
    ...extra,
  });
  dirs = await mcpDirs({
    mcpServers: {
      everything: { ...REAL_SERVERS.everything, logLevel: "debug", directTools: ["toggle-simulated-logging"] },
      v2: v2({ V2_OBSERVE: "1" }, { directTools: ["log"] }),
      remote: { url: `${remote.base}/mcp?apikey=${SECRETS.query}`, bearerToken: SECRETS.token, directTools: ["echo", "reveal"] },
      plain: v2({ V2_LOG: "${workspaceFolder}/plain.log" }),
    },
  });
}, 60_000);

afterAll(async () => {
  await remote?.stop();
  await dirs?.cleanup();
});

const call = (name: string, args: Record<string, unknown> = {}) => ({ name, arguments: args });

describe(`server logs, completions and the protocol trace on Pi ${host.version}`, () => {
  test("logs in /mcp status and the debug log, the first error told once; the trace holds every message's metadata and no secret", async () => {
    harness.env("MCP_DEBUG", "1");
    const pi = await harness.session(dirs, [
      {
        toolCalls: [
          call("everything__toggle-simulated-logging"),
          call("v2__log", { level: "error", text: SECRETS.log }),
          call("remote__echo", { text: SECRETS.argument }),
          call("remote__reveal"),
        ],
      },
      { toolCalls: [call("v2__log", { level: "critical", text: "disk gone" }), call("v2__log", { level: "info", text: "quiet" })] },
      "Done.",
    ]);
    for (const server of ["everything", "v2", "remote"])
      await waitForStatus(pi, new RegExp(`${server}: [^\\n]*\\d+ tools(?! \\(from the cache)`), 60_000);

    const on = (await pi.command("/mcp trace on")).text;
    expect(on).toContain("MCP protocol trace: on for every server.");
    const path = /File: (\S+\.jsonl) /.exec(on)?.[1];
    expect(path?.startsWith(join(dirs.agentDir, "mcp-traces"))).toBe(true);

    await pi.prompt("use the servers");
    const results = Object.fromEntries(pi.toolResults.map((record) => [record.toolName, record.text]));
    expect(results.remote__reveal).toBe(SECRETS.result);
    expect(results.remote__echo).toBe(SECRETS.argument);
    // everything logs at once when its simulated logging starts (a random level: every level is kept at debug).
    const logged = /^ {6}\d\d:\d\d:\d\d \w+: \w+[- ]level[- ]message$/m;
    const everything = await waitForServerLog(pi, "everything", logged);
    expect(everything).toMatch(logged);
    expect(everything).toContain("    server log, debug and up");
    const off = (await pi.command("/mcp trace off")).text;
    expect(off).toContain("MCP protocol trace: off.");
    expect(off).toContain(`File: ${path} (`);

    const v2 = (await pi.command("/mcp status v2")).text;
    expect(v2).toMatch(
      new RegExp(
        `server log, warning and up:\\n {6}\\d\\d:\\d\\d:\\d\\d error \\[fixture\\]: ${SECRETS.log}\\n {6}\\d\\d:\\d\\d:\\d\\d critical \\[fixture\\]: disk gone$`,
      ),
    );
    expect(v2).not.toContain("quiet");
    expect((await pi.command("/mcp status")).text).toContain("    server log: 2 log messages (worst: critical); /mcp status v2 shows it");
    const told = notifications(pi).filter((notice) => notice.message.includes('MCP server "v2" logged'));
    expect(told).toEqual([{ message: `MCP server "v2" logged an error: ${SECRETS.log} (/mcp status v2 shows its log)`, level: "warning" }]);
    const debugLog = readFileSync(join(dirs.agentDir, "mcp-debug.log"), "utf8");
    expect(debugLog).toContain(`v2: server log error [fixture]: ${SECRETS.log}`);
    expect(debugLog).toContain("v2: server log critical [fixture]: disk gone");
    expect(pi.errors).toEqual([]);
    await pi.dispose();

    const trace = readFileSync(path!, "utf8");
    for (const secret of Object.values(SECRETS)) expect(trace).not.toContain(secret);
    expect(trace).not.toContain("apikey");
    const events = trace
      .trimEnd()
      .split("\n")
      .slice(1)
      .map((line) => JSON.parse(line));
    const calls = (server: string) => events.filter((event) => event.server === server && event.method === "tools/call");
    for (const server of ["everything", "v2", "remote"]) {
      expect(calls(server).filter((event) => event.dir === "out" && event.type === "request").length).toBeGreaterThan(0);
      expect(
        calls(server)
          .filter((event) => event.dir === "in" && event.type === "result")
          .every((event) => event.ms >= 0),
      ).toBe(true);
    }
    expect(calls("remote")).toHaveLength(4);
    expect(events.filter((event) => event.server === "v2" && event.method === "notifications/message")).toHaveLength(2);
  }, 180_000);

  test("the TUI completes a prompt's values (with the values typed as context) and a template's variables; a server without the capability is never asked", async () => {
    const cache = join(dirs.agentDir, "mcp-cache.json");
    if (!existsSync(cache) || !JSON.parse(readFileSync(cache, "utf8")).servers?.everything?.prompts) {
      await warmCache(dirs, "everything", "v2", "plain");
    }
    // Started with the session, so the list does not wait for a start (a lazy server starts on the first key).
    await writeFile(
      join(dirs.agentDir, "mcp.json"),
      JSON.stringify({
        mcpServers: {
          everything: { ...REAL_SERVERS.everything, lifecycle: "eager" },
          v2: { command: process.execPath, args: [V2_SERVER], env: { V2_OBSERVE: "1" }, lifecycle: "eager" },
          plain: { command: process.execPath, args: [V2_SERVER], env: { V2_LOG: "${workspaceFolder}/plain.log" }, lifecycle: "eager" },
        },
      }),
    );
    const steps = join(dirs.agentDir, "steps.json");
    await writeFile(steps, "[]");
    const tui = await startPiTui({ ...dirs, extensions: ["test/helpers/faux-json-script.ts"], env: { PI_FAUX_STEPS: steps } });
    harness.onCleanup(() => tui.close());
    await tui.ready();
    await expect.poll(tui.screen, { timeout: TUI_STEP_TIMEOUT_MS }).toContain("MCP 3/3 up");
    const list = async (pattern: RegExp) => expect.poll(tui.screen, { timeout: TUI_STEP_TIMEOUT_MS }).toMatch(pattern);
    // The command first, as a person types it: its arguments once the list has offered it (a long name is cut there).
    const type = async (command: string, args: string) => {
      tui.keys(`/${command}`);
      await list(new RegExp(`^ *→ ${command.slice(0, 24)}`, "m"));
      tui.keys(args);
    };
    // Escape closes the list; a key right after it would be read as Alt+key, so the line is cleared once it is closed.
    const clear = async (typed: string) => {
      tui.keys("Escape");
      await expect.poll(tui.screen, { timeout: TUI_STEP_TIMEOUT_MS }).not.toMatch(/^ *→ /m);
      tui.keys("C-u");
      await expect.poll(tui.screen, { timeout: TUI_STEP_TIMEOUT_MS }).not.toContain(typed);
    };

    // plain (v2-server.mjs without V2_OBSERVE) declares no completions: its argument's name is offered, nothing asked.
    await type("mcp__plain__introduce", " s");
    await list(/style= +optional/);
    await clear("/mcp__plain__introduce");
    expect(readFileSync(join(dirs.cwd, "plain.log"), "utf8")).not.toContain("completion/complete");

    // 2025 era: the department, then the members of that department only (the server reads it from the context).
    await type("mcp__everything__completable-prompt", " E");
    await list(/→ Engineering +department/);
    tui.keys("Tab", " A");
    await list(/→ Alice +name/);
    expect(tui.screen()).toContain("/mcp__everything__completable-prompt Engineering A");
    await clear("/mcp__everything__completable-prompt");

    // /mcp-resource names each resource whole, though Pi's list cuts a label with a description at 30 characters.
    await type("mcp-resource", " everything__get_dyn");
    await list(/^ *(→ )?everything__get_dynamic_text_resource +demo:\/\/resource\/dynamic\/text\/\{resourceId\}/m);
    expect(tui.screen()).toMatch(/^ *(→ )?everything__get_dynamic_blob_resource +demo:\/\/resource\/dynamic\/blob\/\{resourceId\}/m);
    await clear("/mcp-resource");

    // 2026-07-28: a template's variables in /mcp-resource, the note offered from the project typed; then it is read.
    await type("mcp-resource", " v2__get_project_note a");
    await list(/→ alpha +project/);
    tui.keys("Tab", " t");
    await list(/→ todo +note/);
    tui.keys("Tab");
    await list(/\/mcp-resource v2__get_project_note alpha todo/);
    tui.keys("Enter");
    await list(/\[Resource: notes:\/\/alpha\/todo\]/);
    expect(tui.screen()).toContain("Note todo of alpha.");
  }, 180_000);
});

/** Polls `/mcp status <server>` until it matches (or 30 s passed): its last answer. */
async function waitForServerLog(pi: PiSession, server: string, pattern: RegExp): Promise<string> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { text } = await pi.command(`/mcp status ${server}`);
    if (pattern.test(text) || Date.now() > deadline) return text;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

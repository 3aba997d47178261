/**
 * Server faults through the whole extension in the real Pi: what the model receives, what the user is told, what
 * `/mcp status` says and what is left in the process table, while the other servers keep working.
 */
import { statSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { describe, expect, test, vi } from "vitest";
import { MAX_TEXT_BYTES } from "../calls/content.ts";
import { currentHost } from "./helpers/hosts.ts";
import {
  cachedToolNames,
  callLoaded,
  faultHarness,
  faulty,
  notifications,
  search,
  startedPids,
  stdioFixture,
  waitForStatus,
} from "./helpers/fault-setup.ts";
import { readEvents } from "./helpers/fixture-log.ts";
import { processesWithMarker } from "./helpers/processes.ts";
import { isValidToolName } from "./helpers/tool-names.ts";
import type { PiSession } from "./helpers/pi-session.ts";
import { isRunning, waitFor } from "./server-manager-helpers.ts";

const host = currentHost();
const harness = faultHarness();

const sortedNotifications = (pi: PiSession) => notifications(pi).sort((a, b) => (a.message < b.message ? -1 : 1));
const results = (pi: PiSession) => pi.toolResults.map((result) => [result.toolName, result.isError, result.text]);
const proxied = (name: string) => (host.refreshesToolsEachTurn ? name : "McpCall");

describe(`server faults on Pi ${host.version}`, () => {
  test("a server that exits at startup and one that hangs in initialize are reported with their stderr; one writing garbage to stdout works", async () => {
    const stuckMarker = `stuck-server-${process.pid}-${Date.now()}`;
    const dirs = await harness.dirs({
      good: faulty({ FAULT_GARBAGE: "1" }),
      broken: stdioFixture({ FIXTURE_MODE: "exit-at-start" }, { lifecycle: "eager" }),
      stuck: stdioFixture({ FIXTURE_MODE: "hang", STUCK_MARKER: stuckMarker }, { lifecycle: "eager", startupTimeoutMs: 3_000 }),
    });
    const pi = await harness.session(dirs, [search("echo the text back"), callLoaded("good__echo", { text: "still here" }), "done"]);
    await pi.prompt("echo something"); // ToolSearch waits for the startup connections

    expect(results(pi)).toEqual([
      ["ToolSearch", false, expect.stringContaining("- good__echo: Echoes the text back")],
      [proxied("good__echo"), false, "still here"],
    ]);
    expect(sortedNotifications(pi)).toEqual([
      {
        level: "error",
        message: expect.stringMatching(
          /^MCP server "broken" failed to connect: the server process exited before it was ready\nLast stderr lines:\n(.*\n)*  Error: API_KEY is not set\n/,
        ),
      },
      {
        level: "error",
        message: expect.stringMatching(
          /^MCP server "stuck" failed to connect: did not finish starting within 3 s \(start, initialize, list tools\)/,
        ),
      },
    ]);
    const status = (await pi.command("/mcp status")).text;
    expect(status).toMatch(/✓ good: connected · lazy · stdio · MCP 2025-11-25 · 6 tools · pid \d+\n/);
    expect(status).toMatch(
      /✗ broken: failed · eager · stdio · tools not known yet\n    command: .*\n.*\n    last error: MCP server "broken" failed to connect: the server process exited before it was ready \(next attempt in \d+ s\)/,
    );
    expect(status).toMatch(
      /✗ stuck: failed · eager · stdio · tools not known yet\n    command: .*\n.*\n    last error: MCP server "stuck" failed to connect: did not finish starting within 3 s/,
    );
    // Found by its environment, not by a pid it logs: on a loaded machine it may be ended before Node has started it.
    expect(await processesWithMarker(stuckMarker)).toEqual([]);
  });

  test("a server that crashes during a call: the model is told why, the next call starts a new process; while it cannot start, ToolSearch answers from the cache", async () => {
    const dirs = await harness.dirs({
      flaky: faulty({ FAULT_LOG: "flaky.log", FAULT_EXIT_IF_EXISTS: "down" }, { cwd: "." }),
      other: faulty(),
    });
    const log = join(dirs.cwd, "flaky.log");
    const first = await harness.session(dirs, [
      search("select:flaky__crash,flaky__echo"),
      callLoaded("flaky__crash"),
      callLoaded("flaky__echo", { text: "back again" }),
      "done",
    ]);
    await first.prompt("crash it");
    expect(results(first).slice(1)).toEqual([
      [
        proxied("flaky__crash"),
        true,
        'MCP tool "crash" on server "flaky": the server closed the connection during the call (the server process exited (exit code 1)). ' +
          "The next call starts it again.\nLast server output:\nfatal: out of cheese",
      ],
      [proxied("flaky__echo"), false, "back again"],
    ]);
    const pids = startedPids(log);
    const calls = readEvents(log).filter((entry) => entry.event === "call");
    // Learning its tools (started, then closed: it is lazy), the crash, the call after it.
    expect(pids).toHaveLength(3);
    expect(calls.map((entry) => [entry.name, pids.indexOf(entry.pid!)])).toEqual([
      ["crash", 1],
      ["echo", 2],
    ]);
    await first.dispose();

    await writeFile(join(dirs.cwd, "down"), "");
    const second = await harness.session(dirs, [
      search("select:flaky__echo,other__echo"),
      callLoaded("flaky__echo", { text: "anyone?" }),
      callLoaded("other__echo", { text: "still working" }),
      "done",
    ]);
    await second.prompt("try again");
    expect(results(second)).toEqual([
      ["ToolSearch", false, expect.stringMatching(/- flaky__echo: Echoes the text back\n(.*\n)*- other__echo: Echoes the text back/)],
      [
        proxied("flaky__echo"),
        true,
        expect.stringMatching(
          /^MCP server "flaky" failed to connect: the server process exited before it was ready\nLast stderr lines:\n  cannot reach the backend/,
        ),
      ],
      [proxied("other__echo"), false, "still working"],
    ]);
    expect((await second.command("/mcp status")).text).toMatch(
      /✗ flaky: failed · lazy · stdio · MCP 2025-11-25 last time · 6 tools \(from the cache, listed just now\)/,
    );
  });

  test("a call that hangs: Pi's abort cancels it, the server gets notifications/cancelled, the model reads that it was cancelled", async () => {
    const dirs = await harness.dirs({ slow: faulty({ FAULT_LOG: "slow.log" }, { cwd: "." }) });
    const log = join(dirs.cwd, "slow.log");
    const pi = await harness.session(dirs, [search("select:slow__hang"), callLoaded("slow__hang"), "unreachable"]);
    const running = pi.prompt("wait forever");
    await waitFor(() => readEvents(log).some((entry) => entry.event === "call"));
    // What Escape does in Pi's UI (both hosts' AgentSession have it; the harness's interface does not list it).
    await (pi.session as unknown as { abort(): Promise<void> }).abort();
    await expect(running).rejects.toThrow(/aborted/);

    await waitFor(() => readEvents(log).some((entry) => entry.event === "cancelled"));
    expect(readEvents(log).filter((entry) => entry.event === "cancelled")).toEqual([{ event: "cancelled", requestId: expect.any(Number) }]);
    expect(results(pi).at(-1)).toEqual([proxied("slow__hang"), true, 'MCP tool "hang" on server "slow" was cancelled.']);
    // The server itself is fine: cancelling a call does not end it.
    expect((await pi.command("/mcp status")).text).toMatch(/✓ slow: connected/);
  });

  test("a 20 MB result reaches the model cut to Pi's output limit, with a note naming the file that holds all of it", async () => {
    const dirs = await harness.dirs({ big: faulty() });
    const pi = await harness.session(dirs, [search("select:big__huge"), callLoaded("big__huge"), "done"]);
    await pi.prompt("get everything");

    const result = pi.toolResults.at(-1)!;
    expect(result.isError).toBe(false);
    expect(Buffer.byteLength(result.text)).toBeLessThan(MAX_TEXT_BYTES + 300);
    expect(result.text).toMatch(/^(y{99}\n)+/);
    const note =
      /\n\[Output truncated: showing \d+ of 209716 lines \(\d+\.\dKB of 20\.0MB\)\. The whole result \(20\.0MB\) is in (\S+): read it .*\]$/.exec(
        result.text,
      );
    expect(statSync(note![1]!).size).toBe(20 * 1024 * 1024);
    expect(result.details).toMatchObject({ server: "big", tool: "huge", truncated: true });
    expect((await pi.command("/mcp status")).text).toMatch(/✓ big: connected/);
    // 20 MB crosses stdio and JSON twice (server → SDK → file): minutes on a loaded 2-core machine.
  }, 180_000);

  test("tools with invalid, 200-character and duplicate names, recursive $ref schemas or no schema; a tool list that changes mid-session", async () => {
    const dirs = await harness.dirs({ odd: faulty({ FAULT_ODD_TOOLS: "1" }, { lifecycle: "keep-alive" }) });
    const pi = await harness.session(dirs, [
      search("select:dots.and/slashes here,odd__tree,odd__no_schema,twice,odd__change_tools"),
      callLoaded("odd__dots_and_slashes_here"),
      callLoaded("odd__change_tools"),
      "first done",
    ]);
    await pi.prompt("load the odd tools");

    // Every name the adapter gives (/mcp tools lists them all) is one providers accept; Pi has those it loaded.
    const named = [...(await pi.command("/mcp tools")).text.matchAll(/^  (\S+)/gm)].map((match) => match[1]!);
    expect(named.every(isValidToolName)).toBe(true);
    expect(named).toEqual(
      expect.arrayContaining([
        "odd__dots_and_slashes_here",
        "odd__twice",
        "odd__no_schema",
        "odd__tree",
        expect.stringMatching(/^odd__long_x+_[0-9a-f]{8}$/),
      ]),
    );
    expect(named.filter((name) => name === "odd__twice")).toHaveLength(1);
    const odd = pi.session.getAllTools().filter((tool) => tool.name.startsWith("odd__"));
    expect(odd.map((tool) => tool.name).sort()).toEqual([
      "odd__change_tools",
      "odd__dots_and_slashes_here",
      "odd__no_schema",
      "odd__tree",
      "odd__twice",
    ]);
    expect(pi.toolResults[0]!.details).toMatchObject({
      loaded: ["odd__dots_and_slashes_here", "odd__tree", "odd__no_schema", "odd__twice", "odd__change_tools"],
    });
    expect(results(pi)).toEqual([
      ["ToolSearch", false, expect.stringContaining("- odd__twice: First of two tools named twice")],
      [proxied("odd__dots_and_slashes_here"), false, "dots.and/slashes here called"],
      [proxied("odd__change_tools"), false, "tools changed"],
    ]);

    // list_changed: the new tool is in the cache and found by search; Pi gets it when it is loaded (not before).
    await waitFor(() => cachedToolNames(dirs.agentDir, "odd").includes("late_tool"));
    expect(pi.session.getAllTools().map((tool) => tool.name)).not.toContain("odd__late_tool");
    pi.script([search("appeared mid-session"), "second done"]);
    await pi.prompt("find the new tool");
    expect(pi.toolResults.at(-1)!.details).toMatchObject({ loaded: ["odd__late_tool"] });
    expect(pi.activeToolNames()).toContain("odd__late_tool");

    // What the model is offered: provider-safe schemas only.
    const offered = new Map(pi.requests.at(-1)!.tools.map((tool) => [tool.name, tool.parameters]));
    expect(offered.get("odd__no_schema")).toEqual({ type: "object", properties: {} });
    const tree = JSON.stringify(offered.get("odd__tree"));
    expect(tree).not.toMatch(/"\$ref"|"\$defs"/);
    expect(tree).toContain("Recursive structure");
    const status = (await pi.command("/mcp status")).text;
    expect(status).toMatch(/✓ odd: connected · keep-alive · stdio · MCP 2025-11-25 · 12 tools · pid \d+\n/);
    expect(status).toContain('    tools/list names "twice" twice; kept the first');
  });

  test("a keep-alive server killed again and again is revived each time, after a growing delay", async () => {
    const dirs = await harness.dirs({ phoenix: faulty({ FAULT_LOG: "phoenix.log" }, { lifecycle: "keep-alive", cwd: "." }) });
    const log = join(dirs.cwd, "phoenix.log");
    const pi = await harness.session(dirs, [search("echo"), ...Array.from({ length: 8 }, (_, i) => `turn ${i}`)]);
    await pi.prompt("start"); // ToolSearch waits for the startup connection
    // Revivals happen at the end of each turn (and on the 30 s health check); the clock decides when they are due. It
    // stands still but for the test's jumps: however slow the machine, no delay runs out before the test says so.
    vi.useFakeTimers({ toFake: ["Date"], shouldAdvanceTime: false });
    harness.onCleanup(() => void vi.useRealTimers());
    const killAndTurn = async () => {
      const pid = startedPids(log).at(-1)!;
      process.kill(pid, "SIGKILL");
      await waitFor(() => !isRunning(pid));
      await pi.prompt("a turn");
    };

    await killAndTurn(); // first revival: at once
    await waitForStatus(pi, /✓ phoenix: connected/);
    expect(startedPids(log)).toHaveLength(2);

    await killAndTurn(); // second: not before 5 s
    expect((await pi.command("/mcp status")).text).toMatch(
      /○ phoenix: stopped .*\n    command: .*\n.*\n    last error: Connection lost: the server process exited/,
    );
    vi.setSystemTime(Date.now() + 5_000);
    await pi.prompt("a turn 5 s later");
    await waitForStatus(pi, /✓ phoenix: connected/);
    expect(startedPids(log)).toHaveLength(3);

    await killAndTurn(); // third: not before 10 s
    vi.setSystemTime(Date.now() + 5_000);
    await pi.prompt("a turn 5 s later");
    expect(startedPids(log)).toHaveLength(3);
    vi.setSystemTime(Date.now() + 5_000);
    await pi.prompt("a turn 10 s later");
    await waitForStatus(pi, /✓ phoenix: connected/);

    const pids = startedPids(log);
    expect(pids).toHaveLength(4);
    expect(pids.filter(isRunning)).toEqual([pids.at(-1)]);
    // Nothing to tell the user: the revivals worked.
    expect(notifications(pi).filter((notice) => notice.level !== "info")).toEqual([]);
  });

  test("HTTP servers answering 401, 404, 500 or an HTML page are reported by name; the others keep working", async () => {
    const http = await startStatusServer();
    harness.onCleanup(() => new Promise<void>((resolve) => http.server.close(() => resolve())));
    const dirs = await harness.dirs({
      good: faulty(),
      locked: { url: http.url("/401"), lifecycle: "eager" },
      missing: { url: http.url("/404"), lifecycle: "eager" },
      failing: { url: http.url("/500"), lifecycle: "eager" },
      webpage: { url: http.url("/login"), lifecycle: "eager" },
      gateway: { url: http.url("/502"), lifecycle: "eager" },
    });
    const pi = await harness.session(dirs, [search("echo the text back"), callLoaded("good__echo", { text: "unaffected" }), "done"]);
    await pi.prompt("echo");

    expect(results(pi).at(-1)).toEqual([proxied("good__echo"), false, "unaffected"]);
    const base = http.url("");
    expect(sortedNotifications(pi)).toEqual([
      {
        level: "error",
        message: `MCP server "failing" failed to connect: ${base}/500 answered HTTP 500: boom`,
      },
      // A proxy's error page: one line, the page by its title.
      {
        level: "error",
        message: `MCP server "gateway" failed to connect: ${base}/502 answered HTTP 502: 502 Bad Gateway (an HTML page)`,
      },
      {
        level: "warning",
        message:
          `MCP server "locked" needs authentication: ${base}/401 answered 401 Unauthorized and publishes no OAuth metadata. ` +
          `Give it a token in its config ("bearerToken", "bearerTokenEnv" or an "Authorization" header); if it signs in with ` +
          `OAuth all the same, set "auth": "oauth" in its config and run /mcp-auth locked.`,
      },
      {
        level: "error",
        message:
          'MCP server "missing" failed to connect: Streamable HTTP was refused (HTTP 404) and the legacy SSE transport failed too: SSE error: Non-200 status code (404)',
      },
      {
        level: "error",
        message: `MCP server "webpage" failed to connect: ${base}/login did not answer as an MCP server (Unexpected content type: text/html); check the URL`,
      },
    ]);
    const status = (await pi.command("/mcp status")).text;
    expect(status).toMatch(/✗ locked: needs-auth · eager · tools not known yet/);
    for (const name of ["missing", "failing", "webpage", "gateway"])
      expect(status).toMatch(new RegExp(`✗ ${name}: failed · eager · tools not known yet`));
  });
});

const NGINX_502_PAGE = [
  "<html>",
  "<head><title>502 Bad Gateway</title></head>",
  "<body>",
  "<center><h1>502 Bad Gateway</h1></center>",
  "<hr><center>nginx/1.27.0</center>",
  "</body>",
  "</html>",
  "",
].join("\r\n");

/** A plain HTTP server on loopback: /401, /404 (anything unknown), /500, /502 (a proxy's HTML error page), /login (an HTML page with status 200). */
async function startStatusServer(): Promise<{ server: Server; url: (path: string) => string }> {
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname;
    if (path === "/401") return res.writeHead(401, { "www-authenticate": 'Bearer realm="faults"' }).end("unauthorized");
    if (path === "/500") return res.writeHead(500).end("boom");
    if (path === "/502") return res.writeHead(502, { "content-type": "text/html" }).end(NGINX_502_PAGE);
    if (path === "/login") return res.writeHead(200, { "content-type": "text/html" }).end("<html><body>Please sign in</body></html>");
    res.writeHead(404).end("not found");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: (path) => `http://127.0.0.1:${port}${path}` };
}

describe(`a resources/list that never answers, on Pi ${host.version}`, () => {
  test("costs only the resources: with exposeResources false it is never sent, with true the resources are left out with a note; the tools work either way", async () => {
    const hanging = (log: string, extra: Record<string, unknown>) =>
      faulty({ FAULT_RESOURCES: "hang", FAULT_LOG: log }, { lifecycle: "eager", cwd: ".", ...extra });
    // `noted` waits for its resources until the deadline: short, yet room for a loaded machine to start it.
    const dirs = await harness.dirs({
      quiet: hanging("quiet.log", { exposeResources: false }),
      noted: hanging("noted.log", { startupTimeoutMs: 8_000 }),
    });
    const pi = await harness.session(dirs, [
      search("select:quiet__echo,noted__echo"),
      callLoaded("quiet__echo", { text: "from quiet" }),
      callLoaded("noted__echo", { text: "from noted" }),
      "done",
    ]);
    await pi.prompt("echo twice"); // ToolSearch waits for the eager servers
    expect(results(pi).slice(1)).toEqual([
      [proxied("quiet__echo"), false, "from quiet"],
      [proxied("noted__echo"), false, "from noted"],
    ]);
    const status = (await pi.command("/mcp status")).text;
    expect(status).toMatch(/✓ quiet: connected · eager · stdio · MCP 2025-11-25 · 6 tools/);
    expect(status).toMatch(
      /✓ noted: connected · eager · stdio · MCP 2025-11-25 · 6 tools[\s\S]*resources\/list did not answer before the startup deadline; its resources are left out \(its tools are not affected\)/,
    );
    const listings = (log: string) => readEvents(join(dirs.cwd, log)).filter((entry) => entry.event === "list-resources");
    expect(listings("quiet.log")).toEqual([]);
    expect(listings("noted.log")).toHaveLength(1);
  });
});

describe(`answers the protocol does not allow, and calls cut by the session's end, on Pi ${host.version}`, () => {
  test("a result that is a string or null, of the wrong shape, or over 32 MB fails its call at once with one short line naming the server", async () => {
    const tools = ["string_result", "null_result", "shapeless", "oversized"];
    const dirs = await harness.dirs({ odd: faulty({ FAULT_BAD_ANSWERS: "1" }) });
    const pi = await harness.session(dirs, [
      search(`select:${tools.map((tool) => `odd__${tool}`).join(",")}`),
      ...tools.map((tool) => callLoaded(`odd__${tool}`)),
      "done",
    ]);
    await pi.prompt("call them");
    const label = (tool: string) => `MCP tool "${tool}" on server "odd"`;
    expect(results(pi).slice(1)).toEqual([
      [
        proxied("odd__string_result"),
        true,
        `${label("string_result")} failed: its answer was not a valid MCP result ("result" is a string, not an object)`,
      ],
      [
        proxied("odd__null_result"),
        true,
        `${label("null_result")} failed: its answer was not a valid MCP result ("result" is null, not an object)`,
      ],
      [
        proxied("odd__shapeless"),
        true,
        expect.stringMatching(
          new RegExp(`^${escapeRegExp(label("shapeless"))} failed: its answer was not a valid MCP result: content: [^\\n]+$`),
        ),
      ],
      [
        proxied("odd__oversized"),
        true,
        `${label("oversized")} failed: the server sent a message larger than 32 MB, the most one message may be; the connection was closed`,
      ],
    ]);
    expect(pi.toolResults[3]!.text.length).toBeLessThan(300);
  });

  // Pi 1.x refuses /reload while a response streams, and aborts the run before it quits: there the call is cancelled
  // by Pi's abort before the session ends (the run ends "aborted").
  const abortsRunFirst = host.version.startsWith("1.");
  const ends = abortsRunFirst ? (["quit"] as const) : (["reload", "quit"] as const);
  test.each(ends)("a call still running at %s is told it was stopped, not that the server failed", async (end) => {
    const dirs = await harness.dirs({ slow: faulty({ FAULT_LOG: "slow.log" }, { cwd: "." }) });
    const pi = await harness.session(dirs, [search("select:slow__hang"), callLoaded("slow__hang"), "done"]);
    const prompt = pi.prompt("wait for it").catch(() => {});
    await waitFor(() => readEvents(join(dirs.cwd, "slow.log")).some((entry) => entry.event === "call"));
    await (end === "reload" ? pi.reload() : pi.dispose());
    await prompt;
    const why = end === "reload" ? "the MCP adapter is reloading (/reload)" : "the Pi session ended";
    const told = abortsRunFirst ? "was cancelled." : `was stopped before it answered: ${why}. The server did not fail.`;
    expect(results(pi).slice(1)).toEqual([[proxied("slow__hang"), true, `MCP tool "hang" on server "slow" ${told}`]]);
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

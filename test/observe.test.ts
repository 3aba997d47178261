/**
 * What the adapter lets a user see of a server, without Pi (end to end: observe.e2e.test.ts): its log messages
 * (connection/server-log.ts, through the manager against real servers of both eras), the values it suggests for an
 * argument (`completion/complete`, asked only of a server with the capability; calls/command-arguments.ts makes them
 * Pi's autocomplete items), and the protocol trace (connection/protocol-trace.ts: what each message is, never what it
 * says; bounded).
 */
import { readdirSync, readFileSync, readlinkSync, realpathSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { completeArguments, lastWord, type ValueSuggestions } from "../calls/command-arguments.ts";
import { ProtocolTrace } from "../connection/protocol-trace.ts";
import { atLeast, MAX_LOG_ENTRIES, MAX_LOG_TEXT_CHARS, ServerLog } from "../connection/server-log.ts";
import { loadConfig } from "../config.ts";
import { McpServerManager, type ServerLogEntry } from "../server-manager.ts";
import { type FixtureProcess, startFixtureProcess } from "./helpers/fixture-process.ts";
import { everythingStdioDef, FIXTURES, serverDef, tempDir, waitFor } from "./server-manager-helpers.ts";

const V2_SERVER = join(FIXTURES, "v2-server.mjs");
const v2Def = (name: string, env: Record<string, string> = {}, extra = {}) =>
  serverDef(name, { command: process.execPath, args: [V2_SERVER], env: { V2_OBSERVE: "1", ...env }, ...extra });

describe("a server's log", () => {
  it("keeps the messages at the threshold and up, the last MAX_LOG_ENTRIES, each cut; the first error or worse is told once", () => {
    const log = new ServerLog();
    expect(log.add({ level: "info", data: "chatter" }, "warning")).toBeUndefined();
    expect(log.add({ level: "bogus", data: "?" }, "debug")).toBeUndefined();
    expect(log.add({ level: "warning", data: { disk: "90%" }, logger: "db" }, "warning")).toMatchObject({
      entry: { level: "warning", logger: "db", text: '{"disk":"90%"}' },
      firstSevere: false,
    });
    expect(log.add({ level: "critical", data: "x".repeat(5000) }, "warning")).toMatchObject({ firstSevere: true });
    expect(log.entries().at(-1)!.text).toHaveLength(MAX_LOG_TEXT_CHARS);
    expect(log.add({ level: "error", data: "again" }, "warning")?.firstSevere).toBe(false);
    for (let index = 0; index < MAX_LOG_ENTRIES; index++) log.add({ level: "error", data: `n${index}` }, "warning");
    expect(log.entries()).toHaveLength(MAX_LOG_ENTRIES);
    expect(log.entries()[0]!.text).toBe("n0");
    expect(log.count).toBe(MAX_LOG_ENTRIES + 3);
    expect(atLeast("emergency", "off")).toBe(false);
    expect(atLeast("debug", "debug")).toBe(true);
  });

  it("logLevel in a config: one of the levels or off; another value is a warning naming file, server and field, and the default applies", () => {
    const dir = tempDir();
    try {
      const file = join(dir.path, "mcp.json");
      writeFileSync(
        file,
        JSON.stringify({ mcpServers: { quiet: { command: "x", logLevel: "off" }, loud: { command: "x", logLevel: "verbose" } } }),
      );
      const config = loadConfig({ agentDir: dir.path, cwd: dir.path });
      expect(config.servers.find((server) => server.name === "quiet")?.logLevel).toBe("off");
      expect(config.servers.find((server) => server.name === "loud")?.logLevel).toBeUndefined();
      expect(config.problems.map((problem) => problem.message)).toContainEqual(
        expect.stringMatching(
          /mcp\.json.*"loud".*logLevel.*must be one of "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency", "off" \(got "verbose"\); using the default \("warning"\)/,
        ),
      );
    } finally {
      dir.remove();
    }
  });
});

describe("servers' logs, completions and the trace, through the manager", () => {
  let dir: ReturnType<typeof tempDir>;
  let manager: McpServerManager;
  let logged: [string, ServerLogEntry, boolean][];
  let trace: ProtocolTrace;
  let http: FixtureProcess | undefined;

  beforeEach(() => {
    dir = tempDir();
    logged = [];
    trace = new ProtocolTrace(dir.path);
    manager = new McpServerManager({
      agentDir: dir.path,
      trace,
      onServerLog: (name, entry, firstSevere) => logged.push([name, entry, firstSevere]),
    });
  });

  afterEach(async () => {
    await manager.closeAll();
    await http?.stop();
    http = undefined;
    dir.remove();
  });

  const levels = (name: string) =>
    manager
      .serverLog(name)
      ?.entries()
      .map((entry) => `${entry.level} ${entry.text}`);

  it("a 2026 server (stdio) and a 2025 one (the same server, legacy) are asked for their logLevel; what they log at it and up is kept", async () => {
    await manager.connect(v2Def("modern", {}, { logLevel: "error" }));
    await manager.connect(v2Def("legacy", { V2_LEGACY: "serve" }, { logLevel: "info" }));
    expect(manager.getConnection("modern")!.protocol.era).toBe("modern");
    for (const name of ["modern", "legacy"]) {
      for (const level of ["debug", "info", "error"]) await manager.callTool(name, "log", { level, text: `${level} from ${name}` });
    }
    await waitFor(() => (levels("legacy")?.length ?? 0) >= 2);
    expect(levels("modern")).toEqual(["error error from modern"]);
    expect(levels("legacy")).toEqual(["info info from legacy", "error error from legacy"]);
    expect(logged.map(([name, entry, first]) => `${name} ${entry.level} ${first}`)).toEqual([
      "modern error true",
      "legacy info false",
      "legacy error true",
    ]);
    expect(manager.serverLog("modern")!.entries()[0]!.logger).toBe("fixture");
  });

  it("logLevel off: nothing is kept, and a 2026 server is not asked to log", async () => {
    await manager.connect(v2Def("off", {}, { logLevel: "off" }));
    await manager.callTool("off", "log", { level: "emergency", text: "never" });
    expect(manager.serverLog("off")!.count).toBe(0);
  });

  it("completions: values with the context; a server without the capability is never asked", async () => {
    await manager.connect(v2Def("v2"));
    await manager.connect(v2Def("plain", { V2_OBSERVE: "0", V2_LOG: join(dir.path, "plain.log") }));
    const prompt = { type: "ref/prompt", name: "team" } as const;
    expect(await manager.complete("v2", { ref: prompt, argument: { name: "department", value: "S" } })).toEqual(["Sales", "Support"]);
    expect(
      await manager.complete("v2", { ref: prompt, argument: { name: "member", value: "" }, context: { department: "Engineering" } }),
    ).toEqual(["Alice", "Bob"]);
    const template = { type: "ref/resource", uri: "notes://{project}/{note}" } as const;
    expect(await manager.complete("v2", { ref: template, argument: { name: "note", value: "" }, context: { project: "alpha" } })).toEqual([
      "todo",
      "ideas",
    ]);
    expect(
      await manager.complete("plain", { ref: { type: "ref/prompt", name: "introduce" }, argument: { name: "style", value: "" } }),
    ).toEqual([]);
    expect(readFileSync(join(dir.path, "plain.log"), "utf8")).not.toContain("completion/complete");
  });

  it("the trace: each message's direction, method, id, size, time and error code, never its content; only the servers traced", async () => {
    http = await startFixtureProcess(V2_SERVER, "v2 HTTP server", { V2_TRANSPORT: "http", V2_OBSERVE: "1", V2_RESULT: "RESULT-SECRET" });
    const remote = serverDef("remote", { url: `${http.base}/mcp?apikey=QUERY-SECRET`, bearerToken: "TOKEN-SECRET" });
    trace.on("remote");
    await manager.connect(remote);
    await manager.connect(everythingStdioDef("everything"));
    await manager.callTool("remote", "echo", { text: "ARGUMENT-SECRET" });
    await manager.callTool("remote", "reveal", {});
    await manager.callTool("remote", "no_such_tool", {}).catch(() => undefined);
    await manager.callTool("everything", "echo", { message: "untraced" });
    await trace.off();
    const text = readFileSync(trace.path!, "utf8");
    for (const secret of ["ARGUMENT-SECRET", "RESULT-SECRET", "QUERY-SECRET", "TOKEN-SECRET", "apikey", "127.0.0.1"])
      expect(text).not.toContain(secret);
    const [header, ...events] = text
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(header).toMatchObject({ trace: "pi-mcp-adapter MCP protocol trace", version: 1 });
    expect(new Set(events.map((event) => event.server))).toEqual(new Set(["remote"]));
    const calls = events.filter((event) => event.method === "tools/call");
    expect(calls.map((event) => [event.dir, event.type])).toEqual([
      ["out", "request"],
      ["in", "result"],
      ["out", "request"],
      ["in", "result"],
      ["out", "request"],
      ["in", expect.stringMatching(/^(result|error)$/)],
    ]);
    for (const event of calls) expect(event).toMatchObject({ id: expect.any(Number), bytes: expect.any(Number), t: expect.any(String) });
    expect(calls[1].ms).toBeGreaterThan(0);
    expect(calls[1].id).toBe(calls[0].id);
    expect(Object.keys(calls[0]).sort()).toEqual(["bytes", "dir", "id", "method", "server", "t", "type"]);
    expect(statSync(trace.path!).mode & 0o777).toBe(0o600);
  });
});

describe("the trace file's bound", () => {
  it("stops at its limit with a last line that says so", async () => {
    const dir = tempDir();
    try {
      const trace = new ProtocolTrace(dir.path, 2_000);
      trace.on();
      for (let id = 0; id < 100; id++) trace.record("s", "out", { jsonrpc: "2.0", id, method: "tools/call", params: {} });
      await trace.flush();
      const lines = readFileSync(trace.path!, "utf8").trimEnd().split("\n");
      expect(statSync(trace.path!).size).toBeLessThanOrEqual(2_000);
      expect(JSON.parse(lines.at(-1)!).stopped).toBe("the trace reached its limit of 2000 bytes");
      expect(trace.stopped).toBe(true);
      // A full file is written no more: it is closed at once, not held open until tracing stops.
      await waitFor(() => descriptorsOpenOn(trace.path!) === 0, 2_000);
      expect(trace.targets).toEqual({ every: true, except: [] });
      trace.record("s", "in", { jsonrpc: "2.0", id: "server's own id", method: "roots/list" });
      await trace.off("s");
      expect(trace.traces("s")).toBe(false);
      expect(trace.traces("t")).toBe(true);
      expect(readFileSync(trace.path!, "utf8").split("\n")).toHaveLength(lines.length + 1);
    } finally {
      dir.remove();
    }
  });
});

describe("the trace file's descriptor", () => {
  it("is closed by off(), and a send that fails afterwards does not open the file again", async () => {
    const dir = tempDir();
    try {
      const trace = new ProtocolTrace(dir.path);
      trace.on("s");
      const request = { jsonrpc: "2.0" as const, id: 1, method: "tools/call", params: {} };
      trace.record("s", "out", request);
      await trace.flush();
      expect(descriptorsOpenOn(trace.path!)).toBe(1);
      await trace.off();
      expect(descriptorsOpenOn(trace.path!)).toBe(0);
      const written = readFileSync(trace.path!, "utf8");
      // The request was on its way when tracing stopped; its send fails now (a server stopped with the session).
      trace.sendFailed("s", request, new Error("Connection closed"));
      await trace.flush();
      await new Promise((resolve) => setTimeout(resolve, 300)); // past the batch's delay
      expect(descriptorsOpenOn(trace.path!)).toBe(0);
      expect(readFileSync(trace.path!, "utf8")).toBe(written);
    } finally {
      dir.remove();
    }
  });
});

/** How many of this process's file descriptors are open on `file` (Linux: /proc/self/fd). */
function descriptorsOpenOn(file: string): number {
  const target = realpathSync(file);
  return readdirSync("/proc/self/fd").filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === target;
    } catch {
      return false; // closed meanwhile (the listing's own descriptor)
    }
  }).length;
}

describe("completing a command's arguments", () => {
  const args = [
    { name: "department", required: true, description: "Which one" },
    { name: "member", required: false },
  ];
  const asked: [string, string, Record<string, string>][] = [];
  const suggest: ValueSuggestions = async (argument, value, context) => {
    asked.push([argument, value, context]);
    return argument === "department" ? ["Engineering", "Customer Care"].filter((name) => name.startsWith(value)) : ["Alice"];
  };

  it("suggests values for the positional or named argument being typed, with what was typed before as context, then names", async () => {
    asked.length = 0;
    expect(await completeArguments(args, "E", suggest)).toEqual([
      { value: "Engineering", label: "Engineering", description: "department" },
    ]);
    expect(await completeArguments(args, "", suggest)).toEqual([
      { value: "Engineering", label: "Engineering", description: "department" },
      { value: '"Customer Care"', label: "Customer Care", description: "department" },
      { value: "department=", label: "department=", description: "required: Which one" },
      { value: "member=", label: "member=", description: "optional" },
    ]);
    expect(await completeArguments(args, "Engineering A", suggest)).toEqual([
      { value: "Engineering Alice", label: "Alice", description: "member" },
    ]);
    expect(await completeArguments(args, 'member=A department="Cus', suggest)).toEqual([
      { value: 'member=A department="Customer Care"', label: "Customer Care", description: "department" },
    ]);
    expect(asked.at(-1)).toEqual(["department", "Cus", { member: "A" }]);
    expect(asked[2]).toEqual(["member", "A", { department: "Engineering" }]);
    expect(await completeArguments([], "x", suggest)).toBeNull();
  });

  it("reads the word being typed: after a space it is empty, an open quote keeps spaces", () => {
    expect(lastWord("a b")).toEqual({ before: "a ", word: "b" });
    expect(lastWord("a ")).toEqual({ before: "a ", word: "" });
    expect(lastWord('a "b c')).toEqual({ before: "a ", word: "b c" });
    expect(lastWord('x="b \\" c"')).toEqual({ before: "", word: 'x=b " c' });
  });
});

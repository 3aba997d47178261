import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { NeedsAuthError } from "../connection/session.ts";
import { McpServerManager, ShuttingDownError } from "../server-manager.ts";
import {
  everythingStdioDef,
  failure,
  fixtureDef,
  isRunning,
  killLeftovers,
  pidsOf,
  serverDef,
  startHttpFixture,
  tempDir,
  waitFor,
  type HttpFixture,
} from "./server-manager-helpers.ts";
import { readEvents } from "./helpers/fixture-log.ts";
import { searchablePath } from "./helpers/searchable-path.ts";

let dir: ReturnType<typeof tempDir>;
let manager: McpServerManager;
let metadataChanged: string[];

beforeEach(() => {
  dir = tempDir();
  metadataChanged = [];
  manager = new McpServerManager({ agentDir: dir.path, onMetadataChanged: (name) => metadataChanged.push(name) });
});

afterEach(async () => {
  await manager.closeAll();
  killLeftovers(dir.path);
  dir.remove();
});

function logFile(): string {
  return join(dir.path, "events.log");
}

function textOf(result: { content: unknown[] }): string {
  return (result.content as { type: string; text?: string }[]).map((block) => block.text ?? "").join("");
}

describe("stdio", () => {
  it("connects to server-everything, lists its tools and resources, calls a tool and ends the process", async () => {
    const connection = await manager.connect(everythingStdioDef("everything"));
    expect(connection.transport).toBe("stdio");
    expect(connection.tools.map((tool) => tool.name)).toContain("echo");
    expect(connection.resources.length).toBeGreaterThan(0);
    expect(isRunning(connection.pid!)).toBe(true);
    expect(manager.getState("everything")).toMatchObject({ status: "connected", transport: "stdio", pid: connection.pid });

    const result = await manager.callTool("everything", "echo", { message: "hello" });
    expect(textOf(result)).toContain("hello");

    await manager.close("everything");
    expect(isRunning(connection.pid!)).toBe(false);
    expect(manager.getConnection("everything")).toBeUndefined();
    expect(manager.getState("everything").status).toBe("closed");
  });

  it("gives the server the whole parent environment with its own env on top", async () => {
    process.env.PI_MCP_TEST_PARENT_VAR = "from-parent";
    try {
      await manager.connect(everythingStdioDef("everything", { env: { PI_MCP_TEST_OWN_VAR: "from-config" } }));
      const env = JSON.parse(textOf(await manager.callTool("everything", "get-env", {}))) as Record<string, string>;
      expect(env.PI_MCP_TEST_PARENT_VAR).toBe("from-parent");
      expect(env.PI_MCP_TEST_OWN_VAR).toBe("from-config");
    } finally {
      delete process.env.PI_MCP_TEST_PARENT_VAR;
    }
  });

  it("reuses a healthy connection and shares one attempt between concurrent connects (one process)", async () => {
    const def = fixtureDef("slow", { FIXTURE_LOG: logFile(), FIXTURE_START_DELAY_MS: "300" });
    const connections = await Promise.all(Array.from({ length: 10 }, () => manager.connect(def)));
    expect(new Set(connections).size).toBe(1);
    expect(await manager.connect(def)).toBe(connections[0]);
    expect(pidsOf(logFile(), "start")).toEqual([connections[0]!.pid]);
  });

  it("puts the last stderr lines of a server that exits at startup into the error and the state", async () => {
    const error = await failure(manager.connect(fixtureDef("broken", { FIXTURE_MODE: "exit-at-start" })));
    expect(error.message).toMatch(/MCP server "broken" failed to connect: the server process exited before it was ready/);
    expect(error.message).toContain("Error: API_KEY is not set");
    const state = manager.getState("broken");
    expect(state.status).toBe("failed");
    expect(state.lastError).toContain("exited before it was ready");
    expect(state.stderrTail).toContain("Error: API_KEY is not set");
  });

  it("kills a server that does not finish starting within startupTimeoutMs", async () => {
    const def = fixtureDef("hangs", { FIXTURE_MODE: "hang", FIXTURE_LOG: logFile() }, { startupTimeoutMs: 1_000 });
    const error = await failure(manager.connect(def));
    expect(error.message).toMatch(/"hangs" failed to connect: did not finish starting within 1 s/);
    const [pid] = pidsOf(logFile(), "start");
    expect(pid).toBeDefined();
    expect(isRunning(pid!)).toBe(false);
    expect(manager.getState("hangs").status).toBe("failed");
  });

  it("names a command that does not exist and a working directory that does not exist", async () => {
    const missing = await failure(
      manager.connect(serverDef("nope", { command: "pi-mcp-no-such-command", env: { PATH: searchablePath() } })),
    );
    expect(missing.message).toContain("command not found: pi-mcp-no-such-command");
    const notExecutable = join(dir.path, "server.sh");
    writeFileSync(notExecutable, "#!/bin/sh\n", { mode: 0o644 });
    const denied = await failure(manager.connect(serverDef("denied", { command: notExecutable })));
    expect(denied.message).toBe(
      `MCP server "denied" failed to connect: cannot run ${notExecutable}: permission denied (a file that is not executable, or a command not found with a directory on PATH this user cannot search)`,
    );
    const badCwd = await failure(manager.connect(everythingStdioDef("cwd", { cwd: join(dir.path, "absent") })));
    expect(badCwd.message).toContain(`the working directory "cwd" (${join(dir.path, "absent")}) does not exist`);
  });

  it("passes server stderr through only with debug: true", async () => {
    const write = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    try {
      await manager.connect(fixtureDef("quiet", {}));
      const quiet = await manager.connect(fixtureDef("loud", {}, { debug: true }));
      const written = write.mock.calls.map(([chunk]) => String(chunk)).join("");
      expect(written).toContain(`fixture server ${quiet.pid} starting`);
      expect(written.match(/fixture server \d+ starting/g)).toHaveLength(1);
    } finally {
      write.mockRestore();
    }
  });
});

describe("tools and resources", () => {
  it("follows tools/list pages and drops only the malformed entry", async () => {
    const connection = await manager.connect(fixtureDef("paged", { FIXTURE_PAGE_SIZE: "2", FIXTURE_FILLER_TOOLS: "5" }));
    const names = connection.tools.map((tool) => tool.name);
    expect(names).toEqual([
      "echo",
      "no_type_schema",
      "wait",
      "crash",
      "add_tool",
      "filler_1",
      "filler_2",
      "filler_3",
      "filler_4",
      "filler_5",
    ]);
    // Passed on as sent: making schemas provider-safe is tools/json-schema.ts's job.
    expect(connection.tools[1]!.inputSchema).toEqual({ properties: { q: { type: "string" } } });
    expect(connection.problems).toEqual(["tools/list entry #3 has no name; dropped"]);
  });

  it("does not ask a server without the resources capability, and survives a failing resources/list", async () => {
    const none = await manager.connect(fixtureDef("none", { FIXTURE_RESOURCES: "none" }));
    expect(none.resources).toEqual([]);
    const ok = await manager.connect(fixtureDef("ok", { FIXTURE_RESOURCES: "ok" }));
    expect(ok.resources.map((resource) => resource.uri)).toEqual(["fixture://one", "fixture://two"]);
    const failing = await manager.connect(fixtureDef("failing", { FIXTURE_RESOURCES: "fail" }));
    expect(failing.resources).toEqual([]);
    expect(failing.tools.length).toBeGreaterThan(0);
    expect(failing.problems).toContainEqual(expect.stringMatching(/^resources\/list failed: .*resource backend unavailable/));
    const read = await manager.readResource("ok", "fixture://one");
    expect(read.contents[0]).toMatchObject({ uri: "fixture://one", text: "content of fixture://one" });
  });

  it("refreshes the tools on tools/list_changed and reports it", async () => {
    const connection = await manager.connect(fixtureDef("changing", {}));
    expect(connection.tools.map((tool) => tool.name)).not.toContain("added_tool");
    await manager.callTool("changing", "add_tool", {});
    await waitFor(() => metadataChanged.length > 0);
    expect(metadataChanged).toEqual(["changing"]);
    expect(manager.getConnection("changing")!.tools.map((tool) => tool.name)).toContain("added_tool");
  });

  it("merges a storm of 300 tools/list_changed into at most one refresh in flight and one pending; the newest list wins", async () => {
    await manager.connect(fixtureDef("stormy", {}));
    await manager.callTool("stormy", "storm", { count: 300 });
    await waitFor(() => manager.getConnection("stormy")!.tools.some((tool) => tool.name === "storm_v_300"));
    // The server counts the listings it served; asking again (one more storm of 1) reads the count.
    const counted = await manager.callTool("stormy", "storm", { count: 1 });
    const listings = Number((counted.content[0] as { text: string }).text);
    expect(listings).toBeLessThanOrEqual(3); // the listing at connect, one refresh in flight, one pending
    await waitFor(() => manager.getConnection("stormy")!.tools.some((tool) => tool.name === "storm_v_1"));
    expect(
      manager
        .getConnection("stormy")!
        .tools.filter((tool) => tool.name.startsWith("storm_v_"))
        .map((tool) => tool.name),
    ).toEqual(["storm_v_1"]);
  });
});

describe("calls", () => {
  it("streams progress and sends notifications/cancelled when the call is aborted", async () => {
    await manager.connect(fixtureDef("waits", { FIXTURE_LOG: logFile() }));
    const abort = new AbortController();
    const progress: number[] = [];
    const call = manager.callTool(
      "waits",
      "wait",
      {},
      {
        signal: abort.signal,
        onProgress: (update) => {
          progress.push(update.progress);
          if (progress.length === 2) abort.abort(new Error("user pressed escape"));
        },
      },
    );
    await expect(call).rejects.toThrow("user pressed escape");
    expect(progress).toEqual([1, 2]);
    await waitFor(() => readEvents(logFile()).some((entry) => entry.event === "cancelled"));
    const cancelled = readEvents(logFile()).filter((entry) => entry.event === "cancelled");
    expect(cancelled).toHaveLength(1);
    expect(typeof cancelled[0]!.requestId).toBe("number");
    expect(manager.isIdle("waits", 0)).toBe(true);
  });

  it("sees a server that crashed during a call as not connected, and the next connect starts a new process", async () => {
    const def = fixtureDef("crashy", { FIXTURE_LOG: logFile() });
    const first = await manager.connect(def);
    await expect(manager.callTool("crashy", "crash", {})).rejects.toThrow("the server process exited (exit code 1)");
    await waitFor(() => manager.getConnection("crashy") === undefined);
    expect(manager.getState("crashy")).toMatchObject({
      status: "closed",
      lastError: "Connection lost: the server process exited (exit code 1)",
    });
    await expect(manager.callTool("crashy", "echo", { text: "x" })).rejects.toThrow('MCP server "crashy" is not connected');
    const second = await manager.connect(def);
    expect(second.pid).not.toBe(first.pid);
    expect(pidsOf(logFile(), "start")).toEqual([first.pid, second.pid]);
  });

  it("tracks in-flight calls and last use", async () => {
    await manager.connect(fixtureDef("tracked", {}));
    const abort = new AbortController();
    const call = manager.callTool("tracked", "wait", {}, { signal: abort.signal });
    expect(manager.isIdle("tracked", 0)).toBe(false);
    abort.abort();
    await call.catch(() => {});
    expect(manager.isIdle("tracked", 0)).toBe(true);
    expect(manager.isIdle("tracked", 60_000)).toBe(false);
    expect(manager.isIdle("never-connected", 0)).toBe(false);
  });
});

describe("process trees", () => {
  it("ends the server and its grandchild, even when both ignore SIGTERM", async () => {
    const def = fixtureDef("tree", { FIXTURE_LOG: logFile(), FIXTURE_GRANDCHILD: "1", FIXTURE_IGNORE_SIGTERM: "1" });
    const connection = await manager.connect(def);
    const [grandchild] = pidsOf(logFile(), "grandchild");
    expect(isRunning(connection.pid!)).toBe(true);
    expect(isRunning(grandchild!)).toBe(true);
    await manager.closeAll();
    expect(isRunning(connection.pid!)).toBe(false);
    expect(isRunning(grandchild!)).toBe(false);
  });

  it("ends a server started through sh -c: the shell, the server and its grandchild", async () => {
    const script = `"${process.execPath}" "${fixtureDef("x", {}).args![0]}"; echo done`;
    const def = serverDef("shell", { command: "sh", args: ["-c", script], env: { FIXTURE_LOG: logFile(), FIXTURE_GRANDCHILD: "1" } });
    const connection = await manager.connect(def);
    const pids = [connection.pid!, ...pidsOf(logFile(), "start"), ...pidsOf(logFile(), "grandchild")];
    expect(pids).toHaveLength(3);
    expect(pids.every(isRunning)).toBe(true);
    await manager.closeAll();
    expect(pids.filter(isRunning)).toEqual([]);
  });

  it("a server that crashes mid-call while its helper shares its stdout: the call fails at once, naming the exit; the helper is ended", async () => {
    const def = fixtureDef("shared", { FIXTURE_LOG: logFile(), FIXTURE_GRANDCHILD: "shared" });
    await manager.connect(def);
    const [helper] = pidsOf(logFile(), "grandchild");
    await expect(manager.callTool("shared", "crash", {})).rejects.toThrow("the server process exited (exit code 1)");
    expect(manager.getState("shared")).toMatchObject({
      status: "closed",
      lastError: "Connection lost: the server process exited (exit code 1)",
    });
    await waitFor(() => !isRunning(helper!));
  });

  it("a helper the server starts while it is being stopped is ended with it (its process group)", async () => {
    // The server starts its helper only after the stop began: the tree read at the start of the stop cannot list it.
    const def = fixtureDef("late-helper", { FIXTURE_LOG: logFile(), FIXTURE_GRANDCHILD_ON_STDIN_END: "1" });
    await manager.connect(def);
    await manager.closeAll();
    const helpers = pidsOf(logFile(), "grandchild");
    expect(helpers).toHaveLength(1);
    expect(helpers.filter(isRunning)).toEqual([]);
  });

  it("a server connected again while its old process is still being stopped: closeAll ends the new process too", async () => {
    // Ignoring its stdin's end and SIGTERM, the old process takes seconds to stop: the new one comes up meanwhile.
    const def = fixtureDef("again", { FIXTURE_LOG: logFile(), FIXTURE_GRANDCHILD: "1", FIXTURE_IGNORE_SIGTERM: "1" });
    const first = await manager.connect(def);
    const closingFirst = manager.close("again");
    const second = await manager.connect(def);
    expect(isRunning(first.pid!)).toBe(true);
    await manager.closeAll();
    expect(isRunning(second.pid!)).toBe(false);
    await closingFirst;
    expect([first.pid!, second.pid!, ...pidsOf(logFile(), "grandchild")].filter(isRunning)).toEqual([]);
  });

  it("closeAll cancels a connect in flight, kills its process, and can be called twice", async () => {
    const def = fixtureDef("late", { FIXTURE_LOG: logFile(), FIXTURE_START_DELAY_MS: "5000" });
    const connecting = manager.connect(def);
    await waitFor(() => pidsOf(logFile(), "start").length === 1);
    await Promise.all([manager.closeAll(), manager.closeAll()]);
    await expect(connecting).rejects.toThrow('MCP server "late" was closed while it was still connecting');
    expect(isRunning(pidsOf(logFile(), "start")[0]!)).toBe(false);
    expect(manager.getConnection("late")).toBeUndefined();
    expect(manager.getState("late").status).toBe("closed");
    await manager.closeAll();
  });
});

describe("connectAll", () => {
  it("connects in parallel and reports each server's connection or error, in the order given", async () => {
    const defs = [fixtureDef("a", {}), fixtureDef("b", { FIXTURE_MODE: "exit-at-start" }), fixtureDef("c", {})];
    const results = await manager.connectAll(defs, 2);
    expect([...results.keys()]).toEqual(["a", "b", "c"]);
    expect(results.get("a")).toBe(manager.getConnection("a"));
    expect(results.get("b")).toBeInstanceOf(Error);
    expect(results.get("c")).toBe(manager.getConnection("c"));
  });

  it("shutdown() while the workers run: the servers not yet taken are never started, later connects are refused", async () => {
    const defs = ["a", "b", "c", "d"].map((name) => fixtureDef(name, { FIXTURE_LOG: logFile(), FIXTURE_START_DELAY_MS: "5000" }));
    const all = manager.connectAll(defs, 2);
    await waitFor(() => pidsOf(logFile(), "start").length === 2);
    await manager.shutdown();
    const results = await all;
    expect([...results.values()].map((result) => (result as Error).message)).toEqual([
      'MCP server "a" was closed while it was still connecting',
      'MCP server "b" was closed while it was still connecting',
      'MCP server "c" was not started: the session is shutting down',
      'MCP server "d" was not started: the session is shutting down',
    ]);
    await expect(manager.connect(defs[0]!)).rejects.toThrow(ShuttingDownError);
    expect(pidsOf(logFile(), "start")).toHaveLength(2);
    expect(pidsOf(logFile(), "start").filter(isRunning)).toEqual([]);
  });
});

describe("HTTP", () => {
  let http: HttpFixture;
  beforeAll(async () => {
    http = await startHttpFixture({ FIXTURE_TOKEN: "s3cret-token" });
  });
  afterAll(async () => {
    await http.stop();
  });

  async function requestsSince(before: number): Promise<string[]> {
    return (await http.requests()).slice(before);
  }

  it("uses Streamable HTTP and ends the session on close", async () => {
    const before = (await http.requests()).length;
    const connection = await manager.connect(serverDef("remote", { url: http.url("/mcp") }));
    expect(connection.transport).toBe("http");
    expect(connection.tools.map((tool) => tool.name)).toContain("echo");
    expect(textOf(await manager.callTool("remote", "echo", { message: "over http" }))).toContain("over http");
    expect(manager.getState("remote")).toMatchObject({ status: "connected", transport: "http" });
    await manager.close("remote");
    expect(await requestsSince(before)).toContain("DELETE /mcp");
  });

  it("uses legacy SSE directly when the config says transport: sse", async () => {
    const before = (await http.requests()).length;
    const connection = await manager.connect(serverDef("legacy", { url: http.url("/sse"), transport: "sse" }));
    expect(connection.transport).toBe("sse");
    expect(textOf(await manager.callTool("legacy", "echo", { message: "over sse" }))).toContain("over sse");
    expect((await requestsSince(before))[0]).toBe("GET /sse");
  });

  it("falls back to SSE when the endpoint refuses Streamable HTTP (405)", async () => {
    const before = (await http.requests()).length;
    const connection = await manager.connect(serverDef("fallback", { url: http.url("/sse") }));
    expect(connection.transport).toBe("sse");
    // The server/discover probe and the 2025 initialize are both refused before the SSE stream is opened.
    expect((await requestsSince(before)).slice(0, 3)).toEqual(["POST /sse", "POST /sse", "GET /sse"]);
  });

  it("does not fall back when the config says transport: http", async () => {
    const before = (await http.requests()).length;
    const error = await failure(manager.connect(serverDef("strict", { url: http.url("/sse"), transport: "http" })));
    expect(error.message).toMatch(/"strict" failed to connect: http:\/\/127\.0\.0\.1:\d+\/sse answered HTTP 405/);
    // The probe and the initialize, both refused; no GET for SSE.
    expect(await requestsSince(before)).toEqual(["POST /sse", "POST /sse"]);
  });

  it("does not fall back on a 500", async () => {
    const before = (await http.requests()).length;
    const error = await failure(manager.connect(serverDef("broken", { url: http.url("/status/500") })));
    expect(error.message).toMatch(/answered HTTP 500/);
    expect(manager.getState("broken").status).toBe("failed");
    expect(await requestsSince(before)).toEqual(["POST /status/500"]);
  });

  it("does not fall back on a 401: the server needs auth, and the message says what to configure", async () => {
    const before = (await http.requests()).length;
    const error = await failure(manager.connect(serverDef("locked", { url: http.url("/auth/mcp?key=hidden") })));
    expect(error).toBeInstanceOf(NeedsAuthError);
    expect(error.message).toContain('publishes no OAuth metadata. Give it a token in its config ("bearerToken", "bearerTokenEnv"');
    expect(error.message).not.toContain("hidden");
    expect(manager.getState("locked")).toMatchObject({ status: "needs-auth", lastError: error.message });
    // One POST (no SSE fallback), then the looks for OAuth metadata (RFC 9728, RFC 8414, OpenID), which has none.
    expect(await requestsSince(before)).toEqual([
      "POST /auth/mcp",
      "GET /.well-known/oauth-protected-resource/auth/mcp",
      "GET /.well-known/oauth-protected-resource",
      "GET /.well-known/oauth-authorization-server",
      "GET /.well-known/openid-configuration",
    ]);
  });

  it("sends the bearer token from bearerTokenEnv, and never repeats a rejected token", async () => {
    process.env.PI_MCP_TEST_TOKEN = "s3cret-token";
    try {
      const connection = await manager.connect(serverDef("authed", { url: http.url("/auth/mcp"), bearerTokenEnv: "PI_MCP_TEST_TOKEN" }));
      expect(connection.transport).toBe("http");
    } finally {
      delete process.env.PI_MCP_TEST_TOKEN;
    }
    const wrong = await failure(manager.connect(serverDef("wrong", { url: http.url("/auth/mcp"), bearerToken: "not-the-token" })));
    expect(wrong).toBeInstanceOf(NeedsAuthError);
    expect(wrong.message).toContain('to the token from "bearerToken". Check that it is valid.');
    expect(wrong.message).not.toContain("not-the-token");
    const unset = await failure(manager.connect(serverDef("unset", { url: http.url("/auth/mcp"), bearerTokenEnv: "PI_MCP_TEST_UNSET" })));
    expect(unset).toBeInstanceOf(NeedsAuthError);
    expect(unset.message).toContain("PI_MCP_TEST_UNSET, which is not set");
  });

  it("sees a Streamable HTTP or SSE server that went away as not connected", async () => {
    const doomed = await startHttpFixture();
    try {
      await manager.connect(serverDef("streamable", { url: doomed.url("/mcp") }));
      await manager.connect(serverDef("legacy", { url: doomed.url("/sse"), transport: "sse" }));
      await doomed.stop();
      await waitFor(() => manager.getConnection("legacy") === undefined);
      expect(manager.getState("legacy").lastError).toMatch(/^Connection lost: the SSE stream broke/);
      await expect(manager.callTool("streamable", "echo", { message: "anyone?" })).rejects.toThrow("fetch failed");
      expect(manager.getConnection("streamable")).toBeUndefined();
      expect(manager.getState("streamable")).toMatchObject({ status: "closed", lastError: "Connection lost: fetch failed" });
    } finally {
      await doomed.stop();
    }
  });

  it("says why an address cannot be reached: the system's code, or the port fetch refuses", async () => {
    const gone = await startHttpFixture();
    const url = gone.url("/mcp");
    await gone.stop();
    const refused = await failure(manager.connect(serverDef("refused", { url })));
    expect(refused.message).toBe(`MCP server "refused" failed to connect: cannot reach ${url} (ECONNREFUSED)`);
    // Over SSE the SDK reports it as an SSE error with no HTTP status: nothing answered, so it is not "answered HTTP".
    const sse = await failure(manager.connect(serverDef("refused-sse", { url, transport: "sse" })));
    expect(sse.message).toBe(`MCP server "refused-sse" failed to connect: cannot reach ${url} (ECONNREFUSED)`);
    // Port 1 is one of the Fetch standard's blocked ports: fetch says only "bad port", with no code.
    const blocked = await failure(manager.connect(serverDef("blocked", { url: "http://127.0.0.1:1/mcp" })));
    expect(blocked.message).toBe(
      `MCP server "blocked" failed to connect: cannot reach http://127.0.0.1:1/mcp (fetch never connects to port 1)`,
    );
    const blockedSse = await failure(manager.connect(serverDef("blocked-sse", { url: "http://127.0.0.1:1/sse", transport: "sse" })));
    expect(blockedSse.message).toBe(
      `MCP server "blocked-sse" failed to connect: cannot reach http://127.0.0.1:1/sse (fetch never connects to port 1)`,
    );
  });

  it("sends headers from the config", async () => {
    const connection = await manager.connect(
      serverDef("header", { url: http.url("/auth/mcp"), headers: { Authorization: "Bearer s3cret-token" } }),
    );
    expect(connection.transport).toBe("http");
  });
});

import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { join } from "node:path";
import { ConnectBackoffError, FAILURE_BACKOFF_MS, McpLifecycleManager } from "../lifecycle.ts";
import { IncompatibleServerError, NeedsAuthError } from "../connection/session.ts";
import { FAULTY_SERVER } from "./helpers/fault-setup.ts";
import { McpServerManager } from "../server-manager.ts";
import type { ServerDefinition } from "../types.ts";
import { failure, fixtureDef, isRunning, killLeftovers, pidsOf, serverDef, tempDir, waitFor } from "./server-manager-helpers.ts";

let dir: ReturnType<typeof tempDir>;
let manager: McpServerManager;
let lifecycle: McpLifecycleManager;
let events: string[];

beforeEach(() => {
  dir = tempDir();
  events = [];
  manager = new McpServerManager({ agentDir: dir.path });
  lifecycle = new McpLifecycleManager(manager, {
    onReconnect: (name) => events.push(`reconnect ${name}`),
    onIdleShutdown: (name) => events.push(`idle ${name}`),
    onConnectFailed: (name) => events.push(`failed ${name}`),
  });
});

afterEach(async () => {
  vi.useRealTimers();
  await lifecycle.stop();
  killLeftovers(dir.path);
  dir.remove();
});

function log(name: string): string {
  return join(dir.path, `${name}.log`);
}

/** A fixture server that logs its starts to its own file. */
function server(name: string, extra: Partial<ServerDefinition> = {}, env: Record<string, string> = {}): ServerDefinition {
  return fixtureDef(name, { FIXTURE_LOG: log(name), ...env }, extra);
}

/** Only Date is faked: processes, pipes and the SDK's own timers keep running in real time. */
function fakeClock(): void {
  vi.useFakeTimers({ toFake: ["Date"] });
}

function advanceClock(ms: number): void {
  vi.setSystemTime(Date.now() + ms);
}

async function killServer(name: string): Promise<void> {
  process.kill(manager.getConnection(name)!.pid!, "SIGKILL");
  await waitFor(() => manager.getConnection(name) === undefined);
}

describe("modes", () => {
  it("connects eager and keep-alive servers at startup, lazy ones on first use, and announces each connect once", async () => {
    lifecycle.registerServers([
      server("lazy"),
      server("eager", { lifecycle: "eager" }),
      server("kept", { lifecycle: "keep-alive" }),
      server("off", { lifecycle: "eager", enabled: false }),
    ]);
    const results = await lifecycle.connectStartupServers();
    expect([...results.keys()]).toEqual(["eager", "kept"]);
    expect(pidsOf(log("lazy"), "start")).toEqual([]);
    expect(pidsOf(log("off"), "start")).toEqual([]);
    expect(events.sort()).toEqual(["reconnect eager", "reconnect kept"]);

    const connections = await Promise.all(Array.from({ length: 5 }, () => lifecycle.ensureConnected("lazy")));
    expect(new Set(connections).size).toBe(1);
    expect(events.filter((event) => event === "reconnect lazy")).toHaveLength(1);
    expect(pidsOf(log("lazy"), "start")).toHaveLength(1);
    await expect(lifecycle.ensureConnected("off")).rejects.toThrow('MCP server "off" is not configured (or is disabled)');
  });

  it("reports startup failures in the results without throwing", async () => {
    lifecycle.registerServers([
      server("good", { lifecycle: "eager" }),
      server("bad", { lifecycle: "eager" }, { FIXTURE_MODE: "exit-at-start" }),
    ]);
    const results = await lifecycle.connectStartupServers();
    expect(results.get("good")).toBe(manager.getConnection("good"));
    expect(results.get("bad")).toBeInstanceOf(ConnectBackoffError);
    expect(events).toContain("failed bad");
    expect(lifecycle.backoffRemainingMs("bad")).toBeGreaterThan(0);
  });

  it("works out idle timeouts: per server, global, default 10 min, eager and keep-alive never", () => {
    lifecycle.registerServers(
      [
        server("default"),
        server("own", { idleTimeout: 2 }),
        server("disabled", { idleTimeout: 0 }),
        server("eager", { lifecycle: "eager" }),
        server("eager-own", { lifecycle: "eager", idleTimeout: 3 }),
        server("kept", { lifecycle: "keep-alive", idleTimeout: 3 }),
      ],
      { idleTimeout: 5 },
    );
    expect(lifecycle.getIdleTimeoutMs("default")).toBe(5 * 60_000);
    expect(lifecycle.getIdleTimeoutMs("own")).toBe(2 * 60_000);
    expect(lifecycle.getIdleTimeoutMs("disabled")).toBe(0);
    expect(lifecycle.getIdleTimeoutMs("eager")).toBe(0);
    expect(lifecycle.getIdleTimeoutMs("eager-own")).toBe(3 * 60_000);
    expect(lifecycle.getIdleTimeoutMs("kept")).toBe(0);
    lifecycle.registerServers([server("default")]);
    expect(lifecycle.getIdleTimeoutMs("default")).toBe(10 * 60_000);
  });
});

describe("failure backoff", () => {
  it("does not retry a failed server for a minute, says when it will, then retries", async () => {
    fakeClock();
    lifecycle.registerServers([server("bad", {}, { FIXTURE_MODE: "exit-at-start" })]);
    const first = await failure(lifecycle.ensureConnected("bad"));
    expect(first).toBeInstanceOf(ConnectBackoffError);
    expect(first.message).toMatch(/API_KEY is not set[\s\S]*\(no new attempt for 60 s\)$/);

    advanceClock(20_000);
    const blocked = await failure(lifecycle.ensureConnected("bad"));
    expect(blocked.message).toMatch(/\(failed 20 s ago; next attempt in 40 s\)$/);
    // An attempt starts the server twice: it exits on the protocol probe, so it is started again for `initialize`.
    expect(pidsOf(log("bad"), "start")).toHaveLength(2);

    advanceClock(FAILURE_BACKOFF_MS);
    await expect(lifecycle.ensureConnected("bad")).rejects.toThrow(ConnectBackoffError);
    expect(pidsOf(log("bad"), "start")).toHaveLength(4);
    expect(events).toEqual(["failed bad", "failed bad"]);
  });

  it("a server with no protocol version in common is not tried again while its config stays (its own error, no backoff note)", async () => {
    const alien = (versions: string) =>
      serverDef("alien", { command: process.execPath, args: [FAULTY_SERVER], env: { FAULT_LOG: log("alien"), FAULT_VERSIONS: versions } });
    const def = alien("2030-01-01");
    lifecycle.registerServers([def]);
    const first = await failure(lifecycle.ensureConnected("alien"));
    expect(first).toBeInstanceOf(IncompatibleServerError);
    fakeClock();
    advanceClock(10 * FAILURE_BACKOFF_MS);
    expect(await failure(lifecycle.ensureConnected("alien"))).toBe(first);
    expect(lifecycle.backoffRemainingMs("alien")).toBe(Number.POSITIVE_INFINITY);
    expect(pidsOf(log("alien"), "start")).toHaveLength(1);
    // The config changed (the user pointed it at a server that speaks ours): tried at once.
    lifecycle.registerServers([alien("2025-11-25")]);
    await expect(lifecycle.ensureConnected("alien")).resolves.toBeDefined();
  });

  it("reconnect() clears the backoff", async () => {
    lifecycle.registerServers([server("flaky", {}, { FIXTURE_MODE: "exit-at-start" })]);
    await expect(lifecycle.ensureConnected("flaky")).rejects.toThrow(ConnectBackoffError);
    lifecycle.registerServers([server("flaky")]);
    await expect(lifecycle.ensureConnected("flaky")).rejects.toThrow(/next attempt in/);
    const connection = await lifecycle.reconnect("flaky");
    expect(connection).toBe(manager.getConnection("flaky"));
    expect(lifecycle.backoffRemainingMs("flaky")).toBe(0);
    expect(events).toEqual(["failed flaky", "reconnect flaky"]);
  });

  it("a connect that reconnect() cancels is not a failure: no report, no backoff", async () => {
    // The startup settles its servers once all of them are done: "slower" keeps it going past the reconnect.
    lifecycle.registerServers([
      server("slow", { lifecycle: "eager" }, { FIXTURE_START_DELAY_MS: "300" }),
      server("slower", { lifecycle: "eager" }, { FIXTURE_START_DELAY_MS: "1500" }),
    ]);
    const startup = lifecycle.connectStartupServers();
    await waitFor(() => manager.getState("slow").status === "connecting");
    const connection = await lifecycle.reconnect("slow");
    expect((await startup).get("slow")).toBeInstanceOf(Error);
    expect(connection).toBe(manager.getConnection("slow"));
    expect(lifecycle.backoffRemainingMs("slow")).toBe(0);
    expect(events.sort()).toEqual(["reconnect slow", "reconnect slower"]);
  });
});

describe("idle shutdown", () => {
  it("closes a server unused for its idle timeout, never one with a call in flight", async () => {
    fakeClock();
    lifecycle.registerServers([server("idle", { idleTimeout: 1 })]);
    const connection = await lifecycle.ensureConnected("idle");
    const abort = new AbortController();
    const call = manager.callTool("idle", "wait", {}, { signal: abort.signal });

    advanceClock(61_000);
    await lifecycle.runHealthCheck();
    expect(manager.getConnection("idle")).toBe(connection);

    abort.abort();
    await call.catch(() => {});
    await lifecycle.runHealthCheck();
    expect(manager.getConnection("idle")).toBe(connection);

    advanceClock(61_000);
    await lifecycle.runHealthCheck();
    expect(manager.getConnection("idle")).toBeUndefined();
    expect(isRunning(connection.pid!)).toBe(false);
    expect(events).toEqual(["reconnect idle", "idle idle"]);
  });

  it("leaves keep-alive and eager servers alone however long they idle", async () => {
    fakeClock();
    lifecycle.registerServers([server("kept", { lifecycle: "keep-alive" }), server("eager", { lifecycle: "eager" })]);
    await lifecycle.connectStartupServers();
    advanceClock(24 * 60 * 60_000);
    await lifecycle.runHealthCheck();
    expect(manager.getConnection("kept")).toBeDefined();
    expect(manager.getConnection("eager")).toBeDefined();
  });
});

describe("revival", () => {
  it("revives a killed keep-alive server on each health check, with a growing delay between revivals", async () => {
    fakeClock();
    lifecycle.registerServers([server("kept", { lifecycle: "keep-alive" })]);
    await lifecycle.connectStartupServers();

    await killServer("kept");
    await lifecycle.runHealthCheck();
    expect(manager.getConnection("kept")).toBeDefined();

    await killServer("kept");
    await lifecycle.runHealthCheck();
    expect(manager.getConnection("kept")).toBeUndefined();
    advanceClock(5_000);
    await lifecycle.runHealthCheck();
    expect(manager.getConnection("kept")).toBeDefined();

    await killServer("kept");
    advanceClock(5_000);
    await lifecycle.runHealthCheck();
    expect(manager.getConnection("kept")).toBeUndefined();
    advanceClock(5_000);
    await lifecycle.runHealthCheck();
    expect(manager.getConnection("kept")).toBeDefined();

    expect(pidsOf(log("kept"), "start")).toHaveLength(4);
    expect(events).toEqual(Array(4).fill("reconnect kept"));
  });

  it("on turn_end brings back dropped eager servers, but not lazy ones or those closed for idling", async () => {
    fakeClock();
    lifecycle.registerServers([
      server("eager", { lifecycle: "eager" }),
      server("sleepy", { lifecycle: "eager", idleTimeout: 1 }),
      server("lazy"),
    ]);
    await lifecycle.connectStartupServers();
    await lifecycle.ensureConnected("lazy");
    await killServer("eager");
    await killServer("lazy");
    advanceClock(61_000);
    await lifecycle.runHealthCheck();
    expect(events).toContain("idle sleepy");

    await lifecycle.reviveDropped();
    expect(manager.getConnection("eager")).toBeDefined();
    expect(manager.getConnection("sleepy")).toBeUndefined();
    expect(manager.getConnection("lazy")).toBeUndefined();
    await lifecycle.ensureConnected("sleepy");
    expect(manager.getConnection("sleepy")).toBeDefined();
  });

  it("lazy-keep-alive: not started with the session; once used, never idle-closed and revived when it dies; a bootstrap listing is no use", async () => {
    fakeClock();
    lifecycle.registerServers([
      server("resident", { lifecycle: "lazy-keep-alive", idleTimeout: 1 }),
      server("listed", { lifecycle: "lazy-keep-alive" }),
    ]);
    expect([...(await lifecycle.connectStartupServers()).keys()]).toEqual([]);
    expect(pidsOf(log("resident"), "start")).toEqual([]);
    expect(lifecycle.getIdleTimeoutMs("resident")).toBe(0);

    await lifecycle.ensureConnected("resident");
    advanceClock(24 * 60 * 60_000);
    await lifecycle.runHealthCheck();
    expect(manager.getConnection("resident")).toBeDefined();
    await killServer("resident");
    await lifecycle.runHealthCheck();
    expect(manager.getConnection("resident")).toBeDefined();
    await killServer("resident");
    advanceClock(5_000);
    await lifecycle.reviveDropped();
    expect(manager.getConnection("resident")).toBeDefined();
    expect(pidsOf(log("resident"), "start")).toHaveLength(3);

    await lifecycle.connectForListing("listed");
    await lifecycle.closeAfterListing("listed");
    await lifecycle.runHealthCheck();
    await lifecycle.reviveDropped();
    expect(manager.getConnection("listed")).toBeUndefined();
    expect(pidsOf(log("listed"), "start")).toHaveLength(1);
  });

  it("does not keep retrying a keep-alive server that needs auth", async () => {
    fakeClock();
    const def = serverDef("locked", { url: "http://127.0.0.1:9/mcp", bearerTokenEnv: "PI_MCP_TEST_NEVER_SET", lifecycle: "keep-alive" });
    lifecycle.registerServers([def]);
    const results = await lifecycle.connectStartupServers();
    expect((results.get("locked") as Error).cause).toBeInstanceOf(NeedsAuthError);
    advanceClock(FAILURE_BACKOFF_MS + 1);
    await lifecycle.runHealthCheck();
    expect(events).toEqual(["failed locked"]);
    expect(manager.getState("locked").status).toBe("needs-auth");
  });
});

describe("timers and stop", () => {
  it("runs the health check on an unref'd interval, and stop() clears it, ends every server and silences callbacks", async () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    lifecycle.registerServers([server("lazy")]);
    const connection = await lifecycle.ensureConnected("lazy");
    const healthCheck = vi.spyOn(lifecycle, "runHealthCheck");
    lifecycle.startHealthChecks(30_000);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(60_000);
    expect(healthCheck).toHaveBeenCalledTimes(2);

    const closing = manager.connect(server("late", {}, { FIXTURE_START_DELAY_MS: "5000" }));
    await lifecycle.stop();
    expect(vi.getTimerCount()).toBe(0);
    expect(isRunning(connection.pid!)).toBe(false);
    await expect(closing).rejects.toThrow("closed while it was still connecting");
    await expect(lifecycle.ensureConnected("lazy")).rejects.toThrow("the adapter is shutting down");
    lifecycle.startHealthChecks(30_000);
    expect(vi.getTimerCount()).toBe(0);
    expect(events).toEqual(["reconnect lazy"]);
  });
});

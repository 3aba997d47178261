/**
 * The opt-in debug log (util/debug-log.ts): off unless MCP_DEBUG is set; a failure the adapter swallows, and a
 * background connect failure of a real stdio server, reach it; the config's secrets (an env value the server printed
 * to stderr before it died, a bearer token) never do.
 */
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hideConfigSecretsInDebugLog } from "../config.ts";
import { McpLifecycleManager } from "../lifecycle.ts";
import { McpServerManager } from "../server-manager.ts";
import type { LoadedConfig, ServerDefinition } from "../types.ts";
import { abortable } from "../util/abort.ts";
import { DEBUG_LOG_FILE, debugLog, debugLogPath, openDebugLog } from "../util/debug-log.ts";
import { serverDef, tempDir } from "./server-manager-helpers.ts";

const SECRET = "s3cr3t-value-from-env";
const TOKEN = "tok_4f9a2c1d";

let dir: ReturnType<typeof tempDir>;
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => {
  openDebugLog(dir.path, {});
  dir.remove();
});

const logText = () => readFileSync(join(dir.path, DEBUG_LOG_FILE), "utf8");

function config(servers: ServerDefinition[]): LoadedConfig {
  return { servers, settings: {}, problems: [], userFile: join(dir.path, "mcp.json") } as unknown as LoadedConfig;
}

describe("debug log", () => {
  it("is off unless MCP_DEBUG is set (and not 0 or false); on, it is <agent dir>/mcp-debug.log", () => {
    expect(debugLogPath("/a", {})).toBeUndefined();
    expect(debugLogPath("/a", { MCP_DEBUG: "0" })).toBeUndefined();
    expect(debugLogPath("/a", { MCP_DEBUG: "false" })).toBeUndefined();
    expect(debugLogPath("/a", { MCP_DEBUG: "1" })).toBe(join("/a", "mcp-debug.log"));
    openDebugLog(dir.path, {});
    debugLog("not written");
    expect(() => statSync(join(dir.path, DEBUG_LOG_FILE))).toThrow();
  });

  it("a swallowed failure shows in it (0600)", async () => {
    openDebugLog(dir.path, { MCP_DEBUG: "1" });
    const aborted = AbortSignal.abort(new Error("gave up"));
    let fail!: (error: Error) => void;
    const work = new Promise<void>((_, reject) => (fail = reject));
    await expect(abortable(work, aborted)).rejects.toThrow("gave up");
    fail(new Error("the late failure nobody waits for"));
    await new Promise((resolve) => setImmediate(resolve));
    expect(logText()).toMatch(/^\S+Z work whose wait was aborted: the late failure nobody waits for$/m);
    expect(statSync(join(dir.path, DEBUG_LOG_FILE)).mode & 0o777).toBe(0o600);
  });

  it("a background connect failure of a real server is logged, without the config's secrets", async () => {
    openDebugLog(dir.path, { MCP_DEBUG: "1" });
    // The server prints its secret to stderr and dies: the connect error carries its stderr.
    const leaky = serverDef("leaky", {
      command: process.execPath,
      args: ["-e", "console.error('starting with key ' + process.env.SECRET_KEY + ' and Bearer abc.def'); process.exit(3)"],
      env: { SECRET_KEY: SECRET },
      lifecycle: "eager",
    });
    const remote = serverDef("remote", { url: "http://127.0.0.1:1/mcp", bearerToken: TOKEN, lifecycle: "eager" });
    hideConfigSecretsInDebugLog(config([leaky, remote]));
    const manager = new McpServerManager({ agentDir: dir.path });
    const failed: string[] = [];
    const lifecycle = new McpLifecycleManager(manager, { onConnectFailed: (name) => failed.push(name) });
    lifecycle.registerServers([leaky], {});
    try {
      await lifecycle.connectStartupServers();
    } finally {
      await lifecycle.stop();
    }
    expect(failed).toEqual(["leaky"]);
    // What the user was told has the secret (it is the server's own output); the log has it hidden.
    expect(manager.getState("leaky").lastError).toContain(SECRET);
    const text = logText();
    expect(text).toMatch(/leaky: connect failed: .*starting with key \*\*\* and Bearer \*\*\*/s);
    expect(text).not.toContain(SECRET);
    debugLog("a line naming the token", `Authorization failed for ${TOKEN}`);
    expect(logText()).toContain("a line naming the token: Authorization failed for ***");
    expect(logText()).not.toContain(TOKEN);
  });
});

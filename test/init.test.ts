/**
 * The adapter's life in a session without Pi: McpAdapter over a fake of Pi's extension API (which, like Pi, activates
 * a tool the first time it is registered) with a config and a metadata cache in a temp agent dir, and the stdio
 * fixture as the server. What is registered at module scope, what the session starts with active (tools loaded
 * before a reload come back), and that a shutdown leaves nothing running. In the real Pi: adapter.e2e.test.ts,
 * shutdown.e2e.test.ts.
 */
import type { ExtensionAPI, ExtensionContext, ToolDefinition } from "@mariozechner/pi-coding-agent";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { McpAdapter } from "../init.ts";
import { createCacheEntry } from "../metadata-cache.ts";
import { MetadataCacheWriter } from "../tools/cache-writer.ts";
import { MCP_CALL_NAME, TOOL_SEARCH_NAME } from "../types.ts";
import { isRunning, killLeftovers, STDIO_FIXTURE, tempDir } from "./server-manager-helpers.ts";

const FIXTURE_TOOLS = ["fx__echo", "fx__wait", "fx__crash", "fx__add_tool"];

let dir: ReturnType<typeof tempDir>;

beforeEach(async () => {
  dir = tempDir();
  vi.stubEnv("PI_CODING_AGENT_DIR", dir.path);
  const fx = { command: process.execPath, args: [STDIO_FIXTURE] };
  writeFileSync(join(dir.path, "mcp.json"), JSON.stringify({ mcpServers: { fx } }));
  // The fixture's tools, as an earlier session listed them.
  const tools = ["echo", "wait", "crash", "add_tool"].map((name) => ({ name, description: `${name} it`, inputSchema: { type: "object" } }));
  const writer = new MetadataCacheWriter(dir.path, () => {});
  writer.queue("fx", createCacheEntry(fx, tools, []));
  await writer.flush();
});

afterEach(() => {
  vi.unstubAllEnvs();
  killLeftovers(dir.path);
  dir.remove();
});

/** Pi's extension API as far as the adapter uses it; like Pi, a tool is activated when first registered. */
function fakePi(builtins: string[] = ["read", "bash"]) {
  const registered = new Map<string, ToolDefinition>();
  let active = [...builtins];
  const api = {
    registerTool: (tool: ToolDefinition) => {
      if (!registered.has(tool.name)) active.push(tool.name);
      registered.set(tool.name, tool);
    },
    registerCommand: () => {},
    getActiveTools: () => [...active],
    getAllTools: () => [...registered.values()].map(({ name }) => ({ name })),
    setActiveTools: (names: string[]) => void (active = [...names]),
    getFlag: () => undefined,
    appendEntry: () => {},
  };
  return { api: api as unknown as ExtensionAPI, registered, active: () => active };
}

/** A session whose branch holds ToolSearch answers that loaded `loaded`. */
function sessionContext(loaded: string[] = []): ExtensionContext {
  const answer = { type: "message", message: { role: "toolResult", toolName: TOOL_SEARCH_NAME, details: { query: "q", loaded } } };
  return {
    cwd: dir.path,
    hasUI: false,
    sessionManager: { getBranch: () => (loaded.length > 0 ? [answer] : []) },
  } as unknown as ExtensionContext;
}

describe("McpAdapter", () => {
  it("registers every cached tool at module scope, with ToolSearch and McpCall, without starting a server", () => {
    const pi = fakePi();
    new McpAdapter(pi.api).registerEarly();
    expect([...pi.registered.keys()].sort()).toEqual([...FIXTURE_TOOLS, MCP_CALL_NAME, TOOL_SEARCH_NAME].sort());
  });

  it("starts the session with the builtins, ToolSearch, McpCall and the tools loaded before a reload active", async () => {
    const pi = fakePi();
    const adapter = new McpAdapter(pi.api);
    adapter.registerEarly();
    await adapter.start(sessionContext(["fx__echo", "gone__tool"]));
    expect(pi.active().sort()).toEqual(["bash", "read", TOOL_SEARCH_NAME, MCP_CALL_NAME, "fx__echo"].sort());
    expect(adapter.current()?.tools.byName.size).toBe(FIXTURE_TOOLS.length);
    await adapter.shutdown("quit");
  });

  it("runs a registered tool through its server, and after the shutdown neither the server nor the state is left", async () => {
    const pi = fakePi();
    const adapter = new McpAdapter(pi.api);
    adapter.registerEarly();
    const ctx = sessionContext();
    await adapter.start(ctx);
    const echo = pi.registered.get("fx__echo")!;
    const result = await echo.execute("call-1", { text: "hi" }, undefined, undefined, ctx);
    expect(result.content).toEqual([{ type: "text", text: "hi" }]);
    const pid = adapter.current()!.manager.getState("fx").pid!;
    expect(isRunning(pid)).toBe(true);

    await adapter.shutdown("quit");
    expect(isRunning(pid)).toBe(false);
    expect(adapter.current()).toBeUndefined();
    await expect(async () => echo.execute("call-2", { text: "again" }, undefined, undefined, ctx)).rejects.toThrow(
      "The MCP adapter is not running (the session is starting or ending).",
    );
  });
});

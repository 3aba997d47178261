/**
 * The server manager loads the SDK half of the connection code (connection/sdk-session.ts) on the first connect. If that
 * load fails (the SDK missing or broken), connects fail naming the server, and a later connect tries the load again.
 * The failure is simulated: the real module cannot be made to fail to load here.
 */
import { afterEach, expect, it, vi } from "vitest";
import { searchablePath } from "./helpers/searchable-path.ts";
import { serverDef, tempDir } from "./server-manager-helpers.ts";

afterEach(() => {
  vi.doUnmock("../connection/sdk-session.ts");
  vi.resetModules();
});

it("a failed load of the SDK half fails the connect by server name, and the next connect loads it", async () => {
  let loads = 0;
  vi.doMock("../connection/sdk-session.ts", async (importOriginal) => {
    loads++;
    if (loads === 1) throw new Error("Cannot find package '@modelcontextprotocol/client'");
    return importOriginal();
  });
  vi.resetModules();
  const { McpServerManager } = await import("../server-manager.ts");
  const dir = tempDir();
  const manager = new McpServerManager({ agentDir: dir.path, resolveNpx: false });
  const missing = serverDef("missing", { command: "pi-mcp-no-such-command", env: { PATH: searchablePath() } });
  try {
    // (vitest words the factory's error its own way)
    await expect(manager.connect(missing)).rejects.toThrow(/^MCP server "missing" failed to connect: /);
    expect(loads).toBe(1);
    expect(manager.getState("missing").status).toBe("failed");
    // Loaded now: the failure is the server's own, told the way the SDK half tells it.
    await expect(manager.connect(missing)).rejects.toThrow(
      'MCP server "missing" failed to connect: command not found: pi-mcp-no-such-command',
    );
    expect(loads).toBe(2);
  } finally {
    await manager.closeAll();
    dir.remove();
  }
});

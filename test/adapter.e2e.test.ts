/**
 * The adapter in the real Pi (the host of this vitest run), with real MCP servers and a scripted model.
 */
import { afterEach, describe, expect, test } from "vitest";
import { type ModelRequest, offeredToolNames } from "./helpers/faux-script.ts";
import { currentHost } from "./helpers/hosts.ts";
import { type McpDirs, mcpDirs, REAL_SERVERS } from "./helpers/mcp-setup.ts";
import { type PiSession, startSession } from "./helpers/pi-session.ts";

const ENTRY = "pi-mcp-adapter.ts";
const host = currentHost();
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function session(dirs: McpDirs, script: Parameters<typeof startSession>[0]["script"]): Promise<PiSession> {
  const pi = await startSession({ extensions: [ENTRY], agentDir: dirs.agentDir, cwd: dirs.cwd, script });
  cleanups.push(() => pi.dispose());
  return pi;
}

async function dirsWith(servers: Record<string, unknown>): Promise<McpDirs> {
  const dirs = await mcpDirs({ mcpServers: servers });
  cleanups.push(dirs.cleanup);
  return dirs;
}

const ECHO = "everything__echo";

function callEcho(request: ModelRequest) {
  const offered = offeredToolNames(request);
  const args = { message: "hello from the model" };
  if (offered.includes(ECHO)) return { toolCalls: [{ name: ECHO, arguments: args }] };
  return { toolCalls: [{ name: "McpCall", arguments: { tool: ECHO, arguments: args } }] };
}

describe(`adapter on Pi ${host.version}`, () => {
  test("first request: builtins + ToolSearch, no MCP tool; ToolSearch then the tool within one prompt", async () => {
    const dirs = await dirsWith({ everything: REAL_SERVERS.everything });
    const pi = await session(dirs, [{ toolCalls: [{ name: "ToolSearch", arguments: { query: "echo" } }] }, callEcho, "done"]);
    await pi.prompt("echo something");

    const first = offeredToolNames(pi.requests[0]!);
    expect(first).toEqual(["read", "bash", "edit", "write", "ToolSearch", ...(host.refreshesToolsEachTurn ? [] : ["McpCall"])]);
    expect(pi.toolResults.map((result) => [result.toolName, result.isError])).toEqual([
      ["ToolSearch", false],
      [host.refreshesToolsEachTurn ? ECHO : "McpCall", false],
    ]);
    expect(pi.toolResults[1]!.text).toContain("hello from the model");
  });
});

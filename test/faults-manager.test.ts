/**
 * Faults at the connection level that the extension cannot provoke on demand: a call outliving its request
 * timeout (10 minutes in the extension), and a connect cancelled before its process started.
 */
import { join } from "node:path";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, expect, it } from "vitest";
import { McpServerManager } from "../server-manager.ts";
import { FAULTY_SERVER } from "./helpers/fault-setup.ts";
import { readEvents } from "./helpers/fixture-log.ts";
import { failure, killLeftovers, serverDef, tempDir, waitFor } from "./server-manager-helpers.ts";

let dir: ReturnType<typeof tempDir>;
let manager: McpServerManager;

beforeEach(() => {
  dir = tempDir();
});

afterEach(async () => {
  await manager.closeAll();
  killLeftovers(dir.path);
  dir.remove();
});

const logFile = () => join(dir.path, "faulty.log");
const faultyDef = (name: string) =>
  serverDef(name, { command: process.execPath, args: [FAULTY_SERVER], env: { FAULT_LOG: logFile() }, cwd: dir.path });

it("a call that hangs past the request timeout fails with RequestTimeout, the server is sent notifications/cancelled and stays usable", async () => {
  manager = new McpServerManager({ agentDir: dir.path, requestTimeoutMs: 300 });
  await manager.connect(faultyDef("slow"));
  const error = await failure(manager.callTool("slow", "hang", {}));
  expect(error).toBeInstanceOf(McpError);
  expect((error as McpError).code).toBe(ErrorCode.RequestTimeout);
  await waitFor(() => readEvents(logFile()).some((entry) => entry.event === "cancelled"));
  expect(readEvents(logFile()).filter((entry) => entry.event === "cancelled")).toHaveLength(1);
  const echoed = await manager.callTool("slow", "echo", { text: "still answering" });
  expect(echoed.content).toEqual([{ type: "text", text: "still answering" }]);
  expect(manager.isIdle("slow", 0)).toBe(true);
});

it("a connect closed before its process started starts none, and leaves no unhandled rejection", async () => {
  // Without npx resolution the first thing a connect waits for is the check of `cwd`: close() lands there.
  manager = new McpServerManager({ agentDir: dir.path, resolveNpx: false });
  const connecting = manager.connect(faultyDef("late"));
  await manager.close("late");
  await expect(connecting).rejects.toThrow('MCP server "late" was closed while it was still connecting');
  expect(manager.getState("late").status).toBe("closed");
  // close() waits until a started process has exited, and the fixture logs its start first thing.
  expect(readEvents(logFile())).toEqual([]);
});

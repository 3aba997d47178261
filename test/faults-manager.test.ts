/**
 * Faults at the connection level that the extension cannot provoke on demand: a call outliving its request
 * timeout (10 minutes in the extension), a connect cancelled before its process started; and answers the protocol
 * does not allow (a result that is no object, the wrong shape, over the message limit), each of which must fail its
 * request at once, saying what was wrong (a hang here is bounded by the test's timeout).
 */
import { join } from "node:path";
import { SdkError, SdkErrorCode } from "@modelcontextprotocol/client";
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
const faultyDef = (name: string, env: Record<string, string> = {}) =>
  serverDef(name, { command: process.execPath, args: [FAULTY_SERVER], env: { FAULT_LOG: logFile(), ...env }, cwd: dir.path });

it("a call that hangs past the request timeout fails with RequestTimeout, the server is sent notifications/cancelled and stays usable", async () => {
  manager = new McpServerManager({ agentDir: dir.path, requestTimeoutMs: 300 });
  await manager.connect(faultyDef("slow"));
  const error = await failure(manager.callTool("slow", "hang", {}));
  expect(error).toBeInstanceOf(SdkError);
  expect((error as SdkError).code).toBe(SdkErrorCode.RequestTimeout);
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

it.each([
  ["a string", "string_result"],
  ["null", "null_result"],
])(
  "an answer whose result is %s fails the call at once, saying its result is not valid, and the server stays usable",
  async (what, tool) => {
    manager = new McpServerManager({ agentDir: dir.path });
    await manager.connect(faultyDef("odd", { FAULT_BAD_ANSWERS: "1" }));
    const error = await failure(manager.callTool("odd", tool, {}));
    expect(error.message).toContain(`its answer was not a valid MCP result ("result" is ${what}, not an object)`);
    const echoed = await manager.callTool("odd", "echo", { text: "still answering" });
    expect(echoed.content).toEqual([{ type: "text", text: "still answering" }]);
  },
);

it("an answer of the wrong shape fails with a one-line summary, not the schema library's dump", async () => {
  manager = new McpServerManager({ agentDir: dir.path });
  await manager.connect(faultyDef("odd", { FAULT_BAD_ANSWERS: "1" }));
  const error = await failure(manager.callTool("odd", "shapeless", {}));
  expect(error.message).toMatch(/^its answer was not a valid MCP result: content: .+/);
  expect(error.message).not.toContain("\n");
  expect(error.message.length).toBeLessThan(300);
});

it("an answer over the 32 MB message limit fails the call naming the limit, and the next call starts the server again", async () => {
  manager = new McpServerManager({ agentDir: dir.path });
  await manager.connect(faultyDef("big", { FAULT_BAD_ANSWERS: "1" }));
  const error = await failure(manager.callTool("big", "oversized", {}));
  expect(error.message).toBe("the server sent a message larger than 32 MB, the most one message may be; the connection was closed");
  await waitFor(() => manager.getState("big").status === "closed");
  expect(manager.getState("big").lastError).toBe(`Connection lost: ${error.message}`);
  await manager.connect(faultyDef("big", { FAULT_BAD_ANSWERS: "1" }));
  expect((await manager.callTool("big", "echo", { text: "back" })).content).toEqual([{ type: "text", text: "back" }]);
});

it("40 MB on stdout without a newline fails the connect naming the message limit, not the startup deadline", async () => {
  manager = new McpServerManager({ agentDir: dir.path });
  const error = await failure(manager.connect(faultyDef("flood", { FAULT_UNTERMINATED_MB: "40" })));
  expect(error.message).toBe(
    'MCP server "flood" failed to connect: the server sent a message larger than 32 MB, the most one message may be; the connection was closed',
  );
});

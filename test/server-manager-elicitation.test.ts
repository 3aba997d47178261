/**
 * McpServerManager's `elicitation` option against server-everything, which offers its `trigger-elicitation-request`
 * tool only to clients that declare elicitation, and reports the answer it got back ("Raw result: {...}").
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ElicitRequestFormParams } from "@modelcontextprotocol/client";
import { acceptElicitationDefaults } from "./helpers/elicitation.ts";
import { McpServerManager, type McpServerManagerOptions } from "../server-manager.ts";
import { everythingStdioDef, tempDir } from "./server-manager-helpers.ts";

const ELICITING_TOOL = "trigger-elicitation-request";

let dir: ReturnType<typeof tempDir>;
let manager: McpServerManager | undefined;

beforeEach(() => {
  dir = tempDir();
});

afterEach(async () => {
  await manager?.closeAll();
  manager = undefined;
  dir.remove();
});

function managerWith(options: Partial<McpServerManagerOptions>): McpServerManager {
  manager = new McpServerManager({ agentDir: dir.path, ...options });
  return manager;
}

/** The elicitation result server-everything received, as it echoes it back. */
function answerReceived(result: { content: unknown[] }): { action: string; content?: Record<string, unknown> } {
  const texts = (result.content as { text?: string }[]).map((block) => block.text ?? "");
  const raw = texts.find((text) => text.includes("Raw result: "));
  if (!raw) throw new Error(`no raw result in ${JSON.stringify(texts)}`);
  return JSON.parse(raw.slice(raw.indexOf("Raw result: ") + "Raw result: ".length));
}

describe("elicitation", () => {
  it("is not offered without a handler, so servers do not ask", async () => {
    const connection = await managerWith({}).connect(everythingStdioDef("everything"));
    expect(connection.tools.map((tool) => tool.name)).toContain("echo");
    expect(connection.tools.map((tool) => tool.name)).not.toContain(ELICITING_TOOL);
  });

  it("acceptElicitationDefaults accepts, and the form's defaults fill the answer", async () => {
    const manager = managerWith({ elicitation: acceptElicitationDefaults });
    const connection = await manager.connect(everythingStdioDef("everything"));
    expect(connection.tools.map((tool) => tool.name)).toContain(ELICITING_TOOL);

    const answer = answerReceived(await manager.callTool("everything", ELICITING_TOOL, {}));
    expect(answer.action).toBe("accept");
    expect(answer.content).toMatchObject({
      firstLine: "It was a dark and stormy night.",
      integer: 42,
      number: 3.14,
      untitledSingleSelectEnum: "Monica",
      untitledMultipleSelectEnum: ["Guitar"],
    });
    // No default, so nothing is made up.
    expect(answer.content).not.toHaveProperty("name");
  });

  it("passes the server name and the form to the handler, and its answer to the server", async () => {
    const asked: { serverName: string; request: ElicitRequestFormParams }[] = [];
    const manager = managerWith({
      elicitation: async (serverName, request) => {
        asked.push({ serverName, request });
        return { action: "accept", content: { name: "Ada", integer: 7 } };
      },
    });
    await manager.connect(everythingStdioDef("everything"));

    const answer = answerReceived(await manager.callTool("everything", ELICITING_TOOL, {}));
    expect(asked).toHaveLength(1);
    expect(asked[0]!.serverName).toBe("everything");
    expect(asked[0]!.request.requestedSchema.required).toEqual(["name"]);
    // What the user gave wins over a default; what they left out gets its default.
    expect(answer.content).toMatchObject({ name: "Ada", integer: 7, number: 3.14 });
  });

  it("a declined form reaches the server as declined", async () => {
    const manager = managerWith({ elicitation: async () => ({ action: "decline" }) });
    await manager.connect(everythingStdioDef("everything"));
    expect(answerReceived(await manager.callTool("everything", ELICITING_TOOL, {}))).toEqual({ action: "decline" });
  });
});

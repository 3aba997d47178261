/**
 * The MCP Apps extension as a real server sees it (test/fixtures/servers/views-server.mjs, on the official SDK v2),
 * in both protocol eras: declared to a server whose views may open, with the MIME type we render; not declared to a
 * server whose views are off. The listing keeps each tool's view and visibility.
 */
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { McpServerManager } from "../server-manager.ts";
import { REPO_ROOT } from "./helpers/hosts.ts";
import { serverDef, tempDir } from "./server-manager-helpers.ts";

const VIEWS_SERVER = join(REPO_ROOT, "test/fixtures/servers/views-server.mjs");
const dir = tempDir();
let manager: McpServerManager | undefined;
afterEach(async () => {
  await manager?.closeAll();
  manager = undefined;
});
afterAll(() => dir.remove());

async function capabilitiesSeen(era: "legacy" | "modern", viewsOn: boolean): Promise<unknown> {
  // The fixture speaks both: a 2025 verdict kept from "an earlier connect" makes it a 2025 connection.
  const legacy = { era: "legacy", version: "2025-11-25", checkedAt: Date.now() } as const;
  const known = () => ({ protocol: era === "legacy" ? legacy : undefined, fresh: {} });
  manager = new McpServerManager({ agentDir: dir.path, resolveNpx: false, viewsOffered: () => viewsOn, known });
  const env: Record<string, string> = era === "modern" ? { VIEWS_LEGACY: "reject" } : {};
  const connection = await manager.connect(serverDef("views", { command: process.execPath, args: [VIEWS_SERVER], env }));
  expect(connection.protocol.era).toBe(era);
  const result = await manager.callTool("views", "client_caps", {});
  const [block] = result.content as { text: string }[];
  return JSON.parse(block!.text);
}

describe("the MCP Apps extension, declared to servers", () => {
  it.each(["legacy", "modern"] as const)("%s era: declared with the MIME type we render; not when views are off", async (era) => {
    expect(await capabilitiesSeen(era, true)).toMatchObject({
      extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } },
    });
    await manager?.closeAll();
    expect(await capabilitiesSeen(era, false)).not.toHaveProperty("extensions");
  });

  it("the listing keeps each tool's view and visibility", async () => {
    manager = new McpServerManager({ agentDir: dir.path, resolveNpx: false, viewsOffered: () => true });
    const connection = await manager.connect(serverDef("views", { command: process.execPath, args: [VIEWS_SERVER] }));
    const views = Object.fromEntries(connection.tools.map((tool) => [tool.name, tool.ui]));
    expect(views).toMatchObject({
      client_caps: undefined,
      wild_csp: { resourceUri: "ui://views/wild" },
      app_only: { resourceUri: "ui://views/wild", visibility: ["app"] },
      model_only: { resourceUri: "ui://views/wild", visibility: ["model"] },
    });
  });
});

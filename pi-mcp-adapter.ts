/**
 * pi-mcp-adapter: MCP servers for Pi without burning the context window.
 *
 * Nothing here may throw: a throw in an extension factory makes Pi exit. Event handlers never wait for servers.
 */
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { registerCommands } from "./commands.ts";
import { claimSession, secondCopyWarning } from "./host/extension-copies.ts";
import { CONFIG_FLAG, McpAdapter } from "./init.ts";
import { createUi } from "./ui.ts";

const LOCATION = dirname(fileURLToPath(import.meta.url));

export default function piMcpAdapter(pi: ExtensionAPI): void {
  const claim = claimSession(pi, LOCATION);
  const { otherCopy } = claim;
  if (otherCopy !== undefined) {
    // Registering anything more would conflict with the copy in use, and Pi would not start.
    pi.on("session_start", (_event, ctx) => createUi(ctx, () => false).notify(secondCopyWarning(otherCopy, LOCATION), "warning"));
    return;
  }
  const adapter = new McpAdapter(pi);
  pi.registerFlag(CONFIG_FLAG, { description: "Path of the MCP config file to use instead of ~/.pi/agent/mcp.json", type: "string" });
  adapter.registerEarly();
  registerCommands(pi, () => adapter.current());
  pi.on("session_start", (_event, ctx) => adapter.start(ctx));
  pi.on("session_shutdown", (event) => {
    claim.release();
    return adapter.shutdown(event.reason);
  });
  pi.on("session_tree", (_event, ctx) => adapter.onTreeNavigated(ctx));
  pi.on("tool_call", (event) => adapter.beforeToolCall(event.toolName, event.input));
  pi.on("agent_start", () => adapter.onAgentStart());
  pi.on("turn_end", () => adapter.onTurnEnd());
}

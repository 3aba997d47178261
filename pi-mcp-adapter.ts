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
import { hostHasOwnMcp, TRUST_FLAG } from "./host.ts";
import { McpAdapter } from "./init.ts";
import { RUNTIME_REGISTER_EVENT } from "./config.ts";
import { registerSkillEvents } from "./skills/pi-events.ts";
import { CONFIG_FLAG } from "./config/session-config.ts";
import { createUi } from "./ui.ts";
import { flagFromArgv } from "./util/argv.ts";

const LOCATION = dirname(fileURLToPath(import.meta.url));
/** Pi 1.x's own switch for its MCP support; we register it where Pi does not know it, and honour it everywhere. */
const NO_MCP_FLAG = "no-mcp";

export default function piMcpAdapter(pi: ExtensionAPI): void {
  const claim = claimSession(pi, LOCATION);
  const { otherCopy } = claim;
  if (otherCopy !== undefined) {
    // Registering anything more would conflict with the copy in use, and Pi would not start.
    pi.on("session_start", (_event, ctx) => createUi(ctx, () => false).notify(secondCopyWarning(otherCopy, LOCATION), "warning"));
    return;
  }
  pi.registerFlag(CONFIG_FLAG, { description: "Path of the MCP config file to use instead of ~/.pi/agent/mcp.json", type: "string" });
  pi.registerFlag(TRUST_FLAG, {
    description: "Use this project's MCP servers (.pi/mcp.json, .mcp.json) without asking, for this run",
    type: "boolean",
  });
  if (!hostHasOwnMcp(pi))
    pi.registerFlag(NO_MCP_FLAG, { description: "Turn MCP off for this run: no server listed or started, no MCP tool", type: "boolean" });
  // Read from the command line: Pi 1.x keeps --no-mcp for itself (it never reaches pi.getFlag), and tools are
  // registered below, before Pi hands extensions their flags.
  if (flagFromArgv(process.argv, NO_MCP_FLAG) !== undefined) {
    registerCommands(pi, () => undefined, "MCP is off for this run (--no-mcp): no server is started and no MCP tool is offered.");
    return;
  }
  const adapter = new McpAdapter(pi);
  adapter.registerEarly();
  registerCommands(pi, () => adapter.current());
  // Upstream's event, which other extensions emit to add a server for the session. The bus outlives a /reload: the
  // copy being replaced stops answering, or it would answer before the new one (the first answer wins).
  const stopListening = pi.events.on(RUNTIME_REGISTER_EVENT, (request) => adapter.onRuntimeRegister(request));
  pi.on("session_start", (_event, ctx) => adapter.start(ctx));
  pi.on("session_shutdown", (event) => {
    claim.release();
    if (event.reason === "reload" || event.reason === "quit") stopListening();
    return adapter.shutdown(event.reason);
  });
  pi.on("session_tree", (_event, ctx) => adapter.onTreeNavigated(ctx));
  pi.on("tool_call", (event) => adapter.beforeToolCall(event.toolName, event.input));
  registerSkillEvents(pi, () => adapter.current()?.skills);
  pi.on("agent_start", () => adapter.onAgentStart());
  pi.on("agent_end", () => adapter.onAgentEnd());
  pi.on("before_agent_start", () => adapter.beforeAgentStart());
  pi.on("turn_end", () => adapter.onTurnEnd());
  // Handling this event is what tells Pi 1.x that this extension connects the servers other extensions register.
  // (An event the older hosts' types do not name.)
  const on = pi.on as unknown as (event: string, handler: () => void) => void;
  if (hostHasOwnMcp(pi)) on.call(pi, "mcp_servers_change", () => adapter.onMcpServersChange());
}

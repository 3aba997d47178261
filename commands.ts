/**
 * `/mcp status | tools [server] | reconnect [name]` and `/mcp-auth <server>`: what the user can see and do.
 */
import type { ExtensionAPI, ExtensionCommandContext } from "@mariozechner/pi-coding-agent";
import { updateStatus } from "./init.ts";
import { safeUrl } from "./server-manager.ts";
import type { McpExtensionState } from "./state.ts";
import type { ToolCallStats } from "./stats.ts";
import type { ServerDefinition } from "./types.ts";
import { showText } from "./ui.ts";

const SUBCOMMANDS = ["status", "tools", "reconnect"] as const;

export function registerCommands(pi: ExtensionAPI, currentState: () => McpExtensionState | undefined): void {
  pi.registerCommand("mcp", {
    description: "MCP servers: /mcp status | tools [server] | reconnect [name]",
    getArgumentCompletions: (prefix) => {
      const items = SUBCOMMANDS.filter((name) => name.startsWith(prefix)).map((name) => ({ value: name, label: name }));
      return items.length > 0 ? items : null;
    },
    handler: async (args, ctx) => {
      const state = currentState();
      if (!state) return showText(ctx, "MCP adapter: not running (no session yet).");
      const [subcommand = "status", ...rest] = args.trim().split(/\s+/).filter(Boolean);
      const argument = rest.join(" ") || undefined;
      if (subcommand === "status") return showText(ctx, statusReport(state));
      if (subcommand === "tools") return showText(ctx, toolsReport(pi, state, argument));
      if (subcommand === "reconnect") return reconnect(ctx, state, argument);
      showText(ctx, `Unknown subcommand "${subcommand}". Usage: /mcp status | tools [server] | reconnect [name]`);
    },
  });

  pi.registerCommand("mcp-auth", {
    description: "How to authenticate an MCP server: /mcp-auth <server>",
    handler: async (args, ctx) => {
      const state = currentState();
      const name = args.trim();
      const server = state?.servers.get(name);
      if (!state || !server) return showText(ctx, `Usage: /mcp-auth <server>. Servers: ${[...(state?.servers.keys() ?? [])].join(", ") || "none"}`);
      showText(ctx, authHelp(state, server));
    },
  });
}

export function statusReport(state: McpExtensionState): string {
  const servers = [...state.servers.values()];
  if (servers.length === 0) return "MCP: no servers configured. Add them to ~/.pi/agent/mcp.json (see the README).";
  const enabled = servers.filter((server) => server.enabled !== false).length;
  const lines = [`MCP servers: ${enabled} enabled${servers.length > enabled ? `, ${servers.length - enabled} disabled` : ""}`];
  for (const server of servers) lines.push(...serverStatus(state, server));
  const problems = state.config.problems.filter((problem) => problem.level === "error");
  if (problems.length > 0) lines.push("Config errors (these servers were skipped):", ...problems.map((problem) => `  ${problem.message}`));
  return lines.join("\n");
}

function serverStatus(state: McpExtensionState, server: ServerDefinition): string[] {
  const source = `source: ${server.source.path} (${server.source.kind})`;
  if (server.enabled === false) return [`- ${server.name}: disabled · ${source}`];
  const live = state.manager.getState(server.name);
  const catalog = state.catalogs.get(server.name);
  const toolCount = state.tools.byServer.get(server.name)?.length ?? 0;
  const tools = catalog ? `${toolCount} tools (${catalog.origin === "live" ? "live" : `cached ${ago(catalog.listedAt)}`})` : "tools not known yet";
  const facts = [
    describeStatus(live.status),
    server.lifecycle ?? "lazy",
    live.transport,
    tools,
    live.pid ? `pid ${live.pid}` : undefined,
  ].filter(Boolean);
  const lines = [`${marker(live.status)} ${server.name}: ${facts.join(" · ")}`, `    ${source}`];
  // What its tools/list or resources/list answer had that could not be used (dropped entries, endless pages).
  for (const problem of state.manager.getConnection(server.name)?.problems ?? []) lines.push(`    ${problem}`);
  const calls = state.stats ? callSummary([...state.stats.sessionStats(server.name).values()]) : undefined;
  if (calls) lines.push(`    ${calls}`);
  const retryIn = state.lifecycle.backoffRemainingMs(server.name);
  if (live.lastError && live.status !== "connected") {
    lines.push(`    last error: ${firstLine(live.lastError)}${retryIn > 0 ? ` (next attempt in ${Math.ceil(retryIn / 1000)} s)` : ""}`);
  }
  return lines;
}

function callSummary(stats: readonly ToolCallStats[]): string | undefined {
  const calls = stats.reduce((sum, item) => sum + item.calls, 0);
  if (calls === 0) return undefined;
  const errors = stats.reduce((sum, item) => sum + item.errors, 0);
  const averageMs = stats.reduce((sum, item) => sum + item.totalMs, 0) / calls;
  return `calls this session: ${calls}${errors > 0 ? ` (${errors} failed)` : ""}, ${Math.round(averageMs)} ms on average`;
}

function describeStatus(status: string): string {
  return status === "idle" ? "not started" : status === "closed" ? "stopped" : status;
}

function marker(status: string): string {
  return status === "connected" ? "✓" : status === "failed" || status === "needs-auth" ? "✗" : "○";
}

function toolsReport(pi: ExtensionAPI, state: McpExtensionState, serverName: string | undefined): string {
  if (serverName && !state.servers.has(serverName)) return `No MCP server named "${serverName}". Servers: ${[...state.servers.keys()].join(", ")}`;
  const active = new Set(pi.getActiveTools());
  const lines: string[] = [];
  for (const [server, tools] of state.tools.byServer) {
    if (serverName && server !== serverName) continue;
    lines.push(`${server} (${tools.length} tools):`);
    for (const tool of tools) {
      const flag = state.directToolNames.has(tool.name) ? " [direct]" : active.has(tool.name) ? " [loaded]" : "";
      lines.push(`  ${tool.name}${flag} — ${firstLine(tool.description)}`);
    }
  }
  return lines.length > 0 ? lines.join("\n") : "No MCP tools known yet.";
}

async function reconnect(ctx: ExtensionCommandContext, state: McpExtensionState, name: string | undefined): Promise<void> {
  if (name && !state.servers.has(name)) return showText(ctx, `No MCP server named "${name}".`);
  const targets = name ? [name] : [...state.servers.values()].filter((server) => server.enabled !== false).map((server) => server.name);
  const results = await Promise.all(
    targets.map((target) =>
      state.lifecycle.reconnect(target).then(
        (connection) => `✓ ${target}: connected (${connection.tools.length} tools)`,
        (error: unknown) => `✗ ${target}: ${firstLine(error instanceof Error ? error.message : String(error))}`,
      ),
    ),
  );
  if (!state.shutDown) updateStatus(state);
  showText(ctx, results.join("\n") || "No MCP servers to reconnect.");
}

function authHelp(state: McpExtensionState, server: ServerDefinition): string {
  const live = state.manager.getState(server.name);
  const where = server.url ? safeUrl(server.url) : (server.command ?? "?");
  const lines = [`MCP server "${server.name}" (${where}): ${describeStatus(live.status)}`];
  if (!server.url) {
    lines.push("It runs as a local process: give it credentials through `env` in its config entry.");
  } else {
    lines.push(
      "Give it a bearer token in its config entry (file: " + server.source.path + "), one of:",
      '  "bearerTokenEnv": "MY_TOKEN_VARIABLE"      (the token is read from that environment variable)',
      '  "headers": { "Authorization": "Bearer ${MY_TOKEN_VARIABLE}" }',
      '  "bearerToken": "…"                          (stored in the file as plain text)',
      "then run /mcp reconnect " + server.name + ".",
    );
    if (server.auth === "oauth") lines.push("OAuth sign-in is not supported by this adapter yet: use a token from the service's settings.");
  }
  if (live.lastError) lines.push(`Last error: ${firstLine(live.lastError)}`);
  return lines.join("\n");
}

function ago(timestamp: number): string {
  const minutes = Math.max(0, Math.round((Date.now() - timestamp) / 60_000));
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  return hours < 48 ? `${hours} h ago` : `${Math.round(hours / 24)} days ago`;
}

function firstLine(text: string): string {
  return text.split("\n")[0];
}

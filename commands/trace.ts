/**
 * `/mcp trace [on|off] [server]`: turns the protocol trace (connection/protocol-trace.ts) on or off for every server
 * or one, and says where the file is and what it holds.
 */
import { formatSize } from "@mariozechner/pi-coding-agent";
import type { McpExtensionState } from "../state.ts";
import { noServerNamed } from "./status-report.ts";

export const TRACE_USAGE = "/mcp trace [on|off] [server]";

/** The answer to `/mcp trace <words>`; turning it off waits until what was traced is in the file. */
export async function traceCommand(state: Pick<McpExtensionState, "trace" | "servers">, words: readonly string[]): Promise<string> {
  const [action, server, ...rest] = words;
  if (action === undefined) return describeTrace(state);
  if ((action !== "on" && action !== "off") || rest.length > 0) return `Usage: ${TRACE_USAGE}`;
  if (server !== undefined && !state.servers.has(server)) return noServerNamed(server, state.servers);
  if (action === "on") state.trace.on(server);
  else await state.trace.off(server);
  return describeTrace(state);
}

function describeTrace({ trace }: Pick<McpExtensionState, "trace">): string {
  const { targets, path } = trace;
  const traced = targets.every
    ? `on for every server${targets.except.length > 0 ? ` but ${targets.except.join(", ")}` : ""}`
    : targets.only.length > 0
      ? `on for ${targets.only.join(", ")}`
      : "off";
  const lines = [`MCP protocol trace: ${traced}.`];
  if (path) {
    const stopped = trace.stopped ? "; it is full, nothing more is written" : "";
    lines.push(`File: ${path} (${formatSize(trace.size)} of at most ${formatSize(trace.limit)}${stopped})`);
  }
  lines.push(
    "It holds what each message is (direction, method, id, size, time to answer, error code), never what it says: no arguments, results, tokens, headers or addresses.",
  );
  if (!trace.active) lines.push(`${TRACE_USAGE}: on for every server, or the one named.`);
  return lines.join("\n");
}

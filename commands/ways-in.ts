/**
 * The three ways to a first server, which `/mcp status` and the `/mcp` panel offer while none is configured: import
 * what other tools on this machine configure, search the MCP Registry, or add one by command or URL.
 */
import { findImportableHosts, type ImportableHost } from "../config.ts";
import { describeRegistry, registryUrl } from "../registry.ts";
import type { McpExtensionState } from "../state.ts";
import { IMPORT_KINDS, type McpSettings } from "../types.ts";
import { firstItems } from "../util/text.ts";

/** Other tools' configs on this machine with servers the session does not import (read only when it has no server). */
export function importableHosts(state: Pick<McpExtensionState, "agentDir" | "cwd" | "config">): ImportableHost[] {
  const { agentDir, cwd, config } = state;
  return findImportableHosts({ agentDir, cwd, projectTrusted: config.project?.trusted === true }, config.imports);
}

/** `/mcp import cursor` (servers: a, b). */
export function describeImportable(host: ImportableHost): string {
  return `/mcp import ${host.kind} (${host.servers.length === 1 ? "server" : "servers"}: ${firstItems(host.servers, 5)})`;
}

/** The lines under "no servers configured". */
export function waysInLines(userFile: string, settings: McpSettings, importable: readonly ImportableHost[]): string[] {
  const found =
    importable.length > 0
      ? `Import what was found on this machine: ${importable.map(describeImportable).join(", ")}`
      : `Import from another tool: none of ${IMPORT_KINDS.join(", ")} configures a server here`;
  const registry = registryUrl(settings);
  const search = registry
    ? `Search ${describeRegistry(registry)}: /mcp search <words>, then /mcp add <registry name>`
    : `Search the MCP Registry: off ("settings": { "registry": false })`;
  const byHand = `Add by command or URL: /mcp add <name> <command> [args…] or /mcp add <name> <url> (or edit ${userFile})`;
  return [`  1. ${found}`, `  2. ${search}`, `  3. ${byHand}`];
}

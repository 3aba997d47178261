/**
 * What the running Pi can do, found out by looking (feature detection), never from its version number where the
 * feature itself can be seen: tools activated during a run (Pi 0.80.3, its CHANGELOG, issue #6162, was the first to
 * offer them from the run's next turn; older hosts only from the user's next prompt), a trust model for projects
 * (host/project-trust.ts), its own MCP support and servers other extensions register (Pi 1.x), and how it completes
 * with a model (host/model-completion.ts).
 */
import type { ExtensionServer } from "./config.ts";

export {
  BUILTIN_TOOL_SEARCH,
  duplicateToolSearch,
  type ExposedToolInfo,
  reachNames,
  scriptIdentifier,
  serverNamespace,
  type ToolExposure,
  type ToolExposureFields,
  type ToolReach,
} from "./host/exposure.ts";

/** What the running host can do with tools activated during a run. */
export interface HostCapabilities {
  version: string;
  /** Pi ≥ 0.80.3 offers a tool activated during a run from the run's next turn; older hosts from the next prompt. */
  refreshesToolsEachTurn: boolean;
  /** Pi 1.x has its own `codemode` (scripts that call tools); elsewhere the adapter offers one (script-tool.ts). */
  hasCodemode: boolean;
  /**
   * Pi waits for `agent_end` handlers before a run settles, and a follow-up message sent from one starts the next
   * run: print mode then waits there for the tasks handed back (tasks.ts). 0.87.1 does (0.73.1 ends the run first).
   * Nothing a host exports shows it, so its release says.
   */
  awaitsAgentEnd: boolean;
}

const FIRST_REFRESHING_RELEASE = [0, 80, 3] as const;
/** The first release seen to wait for `agent_end` handlers (tested: 0.87.1 and 1.x do, 0.73.1 does not). */
const FIRST_AWAITING_AGENT_END_RELEASE = [0, 87, 1] as const;

/** `hostExports`: the host's `@mariozechner/pi-coding-agent` module, whose exports say what it has. */
export function detectHost(version: string, hostExports: object): HostCapabilities {
  return {
    version,
    refreshesToolsEachTurn: hostRefreshesToolsEachTurn(version),
    hasCodemode: hostHasCodemode(hostExports),
    awaitsAgentEnd: isReleaseAtLeast(version, FIRST_AWAITING_AGENT_END_RELEASE),
  };
}

/** Feature detection, not a version: a host with codemode exports the factory of its codemode extension. */
export function hostHasCodemode(hostExports: object): boolean {
  return typeof (hostExports as { createCodemodeExtension?: unknown }).createCodemodeExtension === "function";
}

/**
 * Compared by hand rather than with `semver`, which costs ~25 ms to load at every Pi start. Anything but a plain
 * release (`1.2.3`) counts as an older host: its workaround (McpCall) works on every host, so a wrong "no" costs a
 * few tokens where a wrong "yes" would break calling.
 */
export function hostRefreshesToolsEachTurn(version: string): boolean {
  return isReleaseAtLeast(version, FIRST_REFRESHING_RELEASE);
}

/** Whether `version` is a plain release (`1.2.3`) at or after `release` (anything else counts as older). */
function isReleaseAtLeast(version: string, release: readonly [number, number, number]): boolean {
  const match = /^(\d+)\.(\d+)\.(\d+)$/.exec(version.trim());
  if (!match) return false;
  const parts = match.slice(1).map(Number);
  for (let index = 0; index < parts.length; index++) {
    if (parts[index] !== release[index]) return parts[index]! > release[index]!;
  }
  return true;
}

export { callToolResultSchema } from "./host/call-result-schema.ts";
export { type CompletionOptions, completeWithModel } from "./host/model-completion.ts";
export { hostProjectTrust, ProjectTrust, TRUST_FLAG, type TrustQuestion, type TrustVerdict } from "./host/project-trust.ts";

/** Servers other extensions registered with `pi.registerMcpServer()` (Pi 1.x); none on a host without that API. */
export function hostMcpServers(pi: object): ExtensionServer[] {
  const getMcpServers = (pi as { getMcpServers?: unknown }).getMcpServers;
  if (typeof getMcpServers !== "function") return [];
  const servers: unknown = getMcpServers.call(pi);
  return Array.isArray(servers) ? (servers as ExtensionServer[]) : [];
}

/** Pi has its own MCP support (1.x): `pi.registerMcpServer`, `mcp_servers_change`, and its `--no-mcp` flag. */
export function hostHasOwnMcp(pi: object): boolean {
  return typeof (pi as { getMcpServers?: unknown }).getMcpServers === "function";
}

/**
 * A tool's exposure as Pi 1.x's built-in MCP reads `exposure` and `toolExposure` (its docs/mcp.md, "Control tool
 * exposure"): a `toolExposure` key that is the tool's exact name wins, then the first key (in the order written) whose
 * `*` pattern matches, then the server's `exposure`. Keys are matched against the name the server knows the tool by.
 * What an exposure means here: `hidden` is filtered out like `excludeTools` (tools/filters.ts), `direct` is a direct
 * tool like `directTools` (direct-tools.ts), `codemode` and `deferred` are found through ToolSearch.
 */
import { globMatches, isGlob } from "./filters.ts";
import type { ServerEntry, ToolExposure } from "../types.ts";

export type ExposureRules = Pick<ServerEntry, "exposure" | "toolExposure">;

/** Undefined when the config names no exposure for the tool: our own fields decide (`directTools`, ToolSearch). */
export function configuredExposure(rules: ExposureRules, toolName: string): ToolExposure | undefined {
  const byTool = rules.toolExposure;
  if (byTool) {
    if (Object.hasOwn(byTool, toolName)) return byTool[toolName];
    for (const [pattern, exposure] of Object.entries(byTool)) {
      if (isGlob(pattern) && globMatches(pattern, toolName)) return exposure;
    }
  }
  return rules.exposure;
}

/** Whether the config makes some tool of the server direct (then it is worth listing at startup). */
export function namesDirectExposure(rules: ExposureRules): boolean {
  return rules.exposure === "direct" || Object.values(rules.toolExposure ?? {}).includes("direct");
}

/**
 * The client the MCP conformance suite tests: `conformance client --command "<node> conformance/driver.ts"` runs it
 * once per scenario, with the scenario's test server URL as the last argument and its name in
 * MCP_CONFORMANCE_SCENARIO. It goes through our own McpServerManager (Streamable HTTP with SSE fallback, needs-auth
 * detection, elicitation), connects, lists tools and calls the scenario's tool. Nobody is there to answer an
 * elicitation, so it accepts the form's defaults. Exit code 0 only if every step worked.
 */
import { tmpdir } from "node:os";
import { acceptElicitationDefaults, McpServerManager } from "../server-manager.ts";
import type { ServerDefinition } from "../types.ts";

/** The tool each scenario's server expects to be called; `null`: connecting (initialize) is the whole test. */
const SCENARIO_TOOLS: Record<string, { tool: string; args: Record<string, unknown> } | null> = {
  initialize: null,
  tools_call: { tool: "add_numbers", args: { a: 5, b: 3 } },
  "elicitation-sep1034-client-defaults": { tool: "test_client_elicitation_defaults", args: {} },
  "sse-retry": { tool: "test_reconnection", args: {} },
};
const AUTH_SCENARIO_TOOL = { tool: "test-tool", args: {} };

async function main(): Promise<void> {
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";
  const url = process.argv.at(-1) ?? "";
  const step = scenario.startsWith("auth/") ? AUTH_SCENARIO_TOOL : SCENARIO_TOOLS[scenario];
  if (step === undefined) throw new Error(`unknown scenario "${scenario}" (MCP_CONFORMANCE_SCENARIO)`);
  if (!URL.canParse(url)) throw new Error(`the last argument must be the test server URL, got "${url}"`);

  const server: ServerDefinition = { name: "conformance", url, source: { kind: "user", path: "conformance/driver.ts" } };
  const manager = new McpServerManager({ agentDir: tmpdir(), resolveNpx: false, elicitation: acceptElicitationDefaults });
  try {
    const connection = await manager.connect(server);
    console.log(`connected over ${connection.transport}; tools: ${connection.tools.map((tool) => tool.name).join(", ") || "(none)"}`);
    if (!step) return;
    const result = await manager.callTool(server.name, step.tool, step.args);
    console.log(`${step.tool}: ${JSON.stringify(result.content)}`);
    if (result.isError) throw new Error(`${step.tool} returned an error result`);
  } finally {
    await manager.closeAll();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
});

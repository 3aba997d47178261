/**
 * `codemode` on hosts that have none (Pi 0.73, 0.87): the model writes one short script that calls MCP tools,
 * filters their results and returns only what matters, instead of reading every result itself. The script API is
 * Pi 1.x codemode's (`tools.<name>(args)`, `searchTools`, `describeTool`, `describeNamespace`, `ALL_TOOLS`, `text`,
 * `console`, the return value), so the same script runs on every host; on Pi 1.x the host's own codemode reaches our
 * tools and this tool is not registered (host.ts tells them apart).
 *
 * Off by default: once on (`settings.script`), the tool goes with every request (123 tokens, bench/script-task.ts),
 * and the adapter's always-on budget (Pi 1.x's +641 over Pi alone) has no room for it; a user whose tasks read
 * large results turns it on.
 *
 * Behind it, `script/`: `prelude.ts` (the API inside the VM), `engine-worker.mjs` (the QuickJS thread),
 * `sandbox.ts` (limits, the thread's life, the relay), `api.ts` (the host side of each call), `report.ts` (results
 * and errors as the model reads them).
 */
import { defineTool, type ExtensionContext } from "@mariozechner/pi-coding-agent";
import { Type } from "typebox";
import { scriptCatalog, scriptHostCalls, type ScriptApiContext } from "./script/api.ts";
import { failureText, successText } from "./script/report.ts";
import { runInSandbox, type SandboxLimits } from "./script/sandbox.ts";
import type { McpSettings, ScriptSettings } from "./types.ts";

export const SCRIPT_TOOL_NAME = "codemode";
export const DEFAULT_SCRIPT_TIMEOUT_MS = 60_000;
export const DEFAULT_SCRIPT_MEMORY_MB = 64;

/** Kept short: it is sent with every request once active (see the module comment). */
const DESCRIPTION =
  "Run JavaScript (an async function body; no Node, files, network or timers) that calls MCP tools: " +
  "`await tools.<server>__<tool>(args)` resolves to its MCP result {content, structuredContent, isError}. Also searchTools(query), " +
  "describeTool(name), describeNamespace(server), ALL_TOOLS, text(value), console.log. Only what the script prints " +
  "or returns reaches you: filter and summarise large results inside it.";

/** Plain JSON Schema, the same input as Pi 1.x codemode's. */
const PARAMETERS = Type.Unsafe<{ code: string }>({
  type: "object",
  properties: { code: { type: "string", description: "Raw JavaScript source." } },
  required: ["code"],
});

/** `settings.script` with its defaults: off unless `true` or an object (its limits) without `"enabled": false`. */
export function scriptSettings(settings: McpSettings): Required<ScriptSettings> {
  const given = settings.script;
  const object = typeof given === "object" ? given : {};
  return {
    enabled: given === true || (typeof given === "object" && object.enabled !== false),
    timeoutMs: object.timeoutMs ?? DEFAULT_SCRIPT_TIMEOUT_MS,
    memoryMb: object.memoryMb ?? DEFAULT_SCRIPT_MEMORY_MB,
  };
}

export function scriptToolDefinition(session: () => ScriptApiContext) {
  return defineTool({
    name: SCRIPT_TOOL_NAME,
    label: "MCP script",
    description: DESCRIPTION,
    parameters: PARAMETERS,
    async execute(_toolCallId, { code }, signal, _onUpdate, ctx: ExtensionContext) {
      const state = session();
      const settings = scriptSettings(state.config.settings);
      const limits: SandboxLimits = { timeoutMs: settings.timeoutMs, memoryBytes: settings.memoryMb * 2 ** 20 };
      const run = await runInSandbox(String(code ?? ""), scriptCatalog(state), scriptHostCalls(state, ctx), limits, signal);
      if (!run.ok) throw new Error(failureText(run, limits));
      return { content: [{ type: "text" as const, text: successText(run) }], details: undefined };
    },
  });
}

/**
 * A finished script as the model reads it: what it printed and returned, or why it stopped, in words it can act on
 * (the line of a syntax or thrown error, the tool and server of a failed call, which limit was hit and its setting).
 */
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, truncateTail } from "@mariozechner/pi-coding-agent";
import { SCRIPT_FILE_NAME } from "./prelude.ts";
import type { SandboxLimits, ScriptError, ScriptRun } from "./sandbox.ts";

/** The output of a script that worked. */
export function successText(run: ScriptRun): string {
  const parts = [...run.printed];
  if (run.value !== undefined) parts.push(run.value);
  return bounded(parts.length > 0 ? parts.join("\n") : "(the script printed and returned nothing)");
}

/** Why a script failed, then what it printed before. Thrown by the tool: Pi marks the result as an error. */
export function failureText(run: Exclude<ScriptRun, { ok: true }>, limits: SandboxLimits): string {
  const lines = [failureReason(run, limits)];
  if (run.printed.length > 0) lines.push("Output before it stopped:", ...run.printed);
  lines.push("Tool calls made before the failure were not undone.");
  return bounded(lines.join("\n"));
}

function failureReason(run: Exclude<ScriptRun, { ok: true }>, limits: SandboxLimits): string {
  switch (run.reason) {
    case "error":
      return describeError(run.error);
    case "timeout":
      return `Script stopped: it ran longer than its ${seconds(limits.timeoutMs)} limit (settings.script.timeoutMs). Keep loops short and let tools do the waiting.`;
    case "memory":
      return `Script stopped: it used more than its ${Math.round(limits.memoryBytes / 2 ** 20)} MB memory limit (settings.script.memoryMb). Keep only what you need of each result instead of every record.`;
    case "aborted":
      return "Script cancelled.";
    case "crashed":
      return `The script engine failed: ${run.detail ?? "no reason given"}.`;
  }
}

/** `SyntaxError at line 3: unexpected token`, or a failed tool call's own message (it names tool and server). */
function describeError(error: ScriptError): string {
  const line = scriptLine(error.stack);
  const where = line === undefined ? "" : ` at line ${line}`;
  if (error.tool) return `Script failed${where}: ${error.message}`;
  return `Script failed${where}: ${error.name}: ${error.message}`;
}

/** The first line of the script in a QuickJS stack (`at f (script.js:3:10)`); the prelude's lines are not the script's. */
function scriptLine(stack: string): number | undefined {
  const match = new RegExp(`${SCRIPT_FILE_NAME.replace(".", "\\.")}:(\\d+)`).exec(stack);
  return match ? Number(match[1]) : undefined;
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}

/** Pi's own limits for a tool result; the end is kept (a script's last lines are its answer). */
function bounded(text: string): string {
  const cut = truncateTail(text, { maxBytes: DEFAULT_MAX_BYTES, maxLines: DEFAULT_MAX_LINES });
  return cut.truncated ? `[output cut to its last ${cut.outputLines} lines]\n${cut.content}` : text;
}

/**
 * Where the adapter talks to the user: Pi's UI when the mode has one (interactive, RPC); otherwise (print and
 * JSON modes) warnings go to stderr and command output to stdout, so they are still seen.
 */
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";

/** The user-facing channel: Pi's UI when there is one, stderr otherwise. Silent after shutdown. */
export interface McpUi {
  notify(message: string, level: "info" | "warning" | "error"): void;
  setStatus(text: string | undefined): void;
  /** Output of a command the user ran (shown even without a UI, e.g. in print mode). */
  show(text: string): void;
}

const STATUS_KEY = "mcp";
/** A dialog the user never answers (or an RPC client that never replies) must not hold a tool call forever. */
export const DIALOG_TIMEOUT_MS = 5 * 60_000;

/** A UI that goes silent once `isStale()` (Pi's ctx throws after its session ended). */
export function createUi(ctx: ExtensionContext, isStale: () => boolean): McpUi {
  const guard = (action: () => void) => {
    if (isStale()) return;
    try {
      action();
    } catch {
      // The context went stale between the check and the call: the session is ending.
    }
  };
  return {
    notify: (message, level) =>
      guard(() => (ctx.hasUI ? ctx.ui.notify(message, level) : level !== "info" && process.stderr.write(`[mcp] ${message}\n`))),
    setStatus: (text) => guard(() => ctx.hasUI && ctx.ui.setStatus(STATUS_KEY, text)),
    show: (text) => guard(() => showText(ctx, text)),
  };
}

/** A command's answer: a notification in the UI, plain stdout without one. */
export function showText(ctx: ExtensionContext, text: string): void {
  if (ctx.hasUI) ctx.ui.notify(text, "info");
  else process.stdout.write(`${text}\n`);
}

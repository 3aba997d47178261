/**
 * URL-mode elicitation (MCP 2025-11-25): a server asks the user to open a page (a sign-in, a payment, a key typed
 * on the server's own site) instead of a form the client would see. Pi shows the server's message and the full URL,
 * and opens the browser only when the user picks "Open"; "Decline" declines, dismissing the dialog cancels. Only
 * http(s) pages are opened. Two ways a server asks:
 *
 * - `elicitation/create` with `mode: "url"` during a call: answered here (`piUrlElicitation`).
 * - a tool call refused with `-32042` (URL elicitation required): the pages are offered the same way, then the user
 *   says when they are done and the call is made once more (`callWithUrlElicitation`).
 *
 * Without a UI (print mode) nobody can agree: the request is declined and the model is told which page the user
 * must open (through the call's result), so it can say so.
 */
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import type { ElicitRequestURLParams, ElicitResult } from "@modelcontextprotocol/client";
import { openInBrowser } from "../util/browser.ts";
import { McpErrorCode } from "../util/mcp-error-codes.ts";
import type { UrlElicitationHandler } from "./session.ts";
import { DIALOG_TIMEOUT_MS } from "../ui.ts";

const OPEN = "Open in browser";
const DECLINE = "Decline";

type Page = Pick<ElicitRequestURLParams, "url" | "message">;

/** Pages servers asked for that nobody could be asked to open (print mode), until the call's result tells the model. */
export class UnansweredPages {
  private readonly byServer = new Map<string, Page[]>();

  add(serverName: string, page: Page): void {
    this.byServer.set(serverName, [...(this.byServer.get(serverName) ?? []), page]);
  }

  /** What the model should tell the user, once; undefined when the server asked for no page. */
  take(serverName: string): string | undefined {
    const pages = this.byServer.get(serverName);
    this.byServer.delete(serverName);
    if (!pages) return undefined;
    return `MCP server "${serverName}" asked the user to open ${pages.map(describePage).join(" and ")}. Pi could not ask the user here (no UI), so it declined: tell the user to open it, then try again.`;
  }
}

export function piUrlElicitation(context: () => ExtensionContext | undefined, unanswered: UnansweredPages): UrlElicitationHandler {
  return async (serverName, request, signal) => {
    const ctx = context();
    if (!ctx?.hasUI) {
      unanswered.add(serverName, request);
      return { action: "decline" };
    }
    return { action: await offerPage(ctx, serverName, request, signal) };
  };
}

/**
 * Runs `call`; when the server answers `-32042`, offers its pages and, once the user says they are done, runs it
 * once more. Without a UI, or when the user declines, the error tells the model which pages the user must open.
 */
export async function callWithUrlElicitation<T>(
  call: () => Promise<T>,
  serverName: string,
  ctx: ExtensionContext | undefined,
  signal: AbortSignal | undefined,
): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const pages = requiredPages(error);
    if (!pages) throw error;
    const opened = ctx?.hasUI ? await openAll(ctx, serverName, pages, signal) : false;
    if (!opened) {
      const why = ctx?.hasUI ? "The user did not open it" : "Pi could not ask the user here (no UI)";
      throw new Error(
        `MCP server "${serverName}" needs the user to open ${pages.map(describePage).join(" and ")} first. ${why}: tell the user to open it, then try again.`,
      );
    }
    return call();
  }
}

async function openAll(ctx: ExtensionContext, serverName: string, pages: Page[], signal: AbortSignal | undefined): Promise<boolean> {
  for (const page of pages) if ((await offerPage(ctx, serverName, page, signal)) !== "accept") return false;
  const options = { signal, timeout: DIALOG_TIMEOUT_MS };
  return ctx.ui.confirm(`MCP server "${serverName}"`, "Finished in the browser? Yes runs the call again.", options);
}

/** The dialog: the message and the whole URL; the browser opens only on "Open". */
async function offerPage(
  ctx: ExtensionContext,
  serverName: string,
  page: Page,
  signal: AbortSignal | undefined,
): Promise<ElicitResult["action"]> {
  const title = `MCP server "${serverName}" asks you to open a page: ${page.message}\n${page.url}`;
  const picked = await ctx.ui.select(title, [OPEN, DECLINE], { signal, timeout: DIALOG_TIMEOUT_MS });
  if (picked === undefined) return "cancel";
  if (picked !== OPEN) return "decline";
  if (!isWebPage(page.url)) {
    ctx.ui.notify(`Not opened: ${page.url} is not a web page (http or https).`, "warning");
    return "decline";
  }
  const opened = openInBrowser(page.url);
  ctx.ui.notify(
    `${opened ? "Opened in your browser (if no page appeared, open it yourself)" : "Open this page in your browser"}: ${page.url}`,
    "info",
  );
  return "accept";
}

/** The pages of a `-32042` error (the SDK's UrlElicitationRequiredError carries them in `data.elicitations`). */
function requiredPages(error: unknown): Page[] | undefined {
  const { code, data } = (error ?? {}) as { code?: unknown; data?: { elicitations?: unknown } };
  if (code !== McpErrorCode.UrlElicitationRequired || !Array.isArray(data?.elicitations)) return undefined;
  const pages = data.elicitations.filter((item): item is Page => typeof item?.url === "string" && typeof item?.message === "string");
  return pages.length > 0 ? pages : undefined;
}

function describePage(page: Page): string {
  return `${page.url} (${page.message})`;
}

function isWebPage(url: string): boolean {
  try {
    return ["http:", "https:"].includes(new URL(url).protocol);
  } catch {
    return false;
  }
}

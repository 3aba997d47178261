/**
 * What the views (apps/views.ts, apps/bridge.ts) need of a Pi session, and what a tool call gives them: declared here,
 * below both, and given by the session (init.ts: the server manager, the executor, Pi).
 */
import type { CallToolResult } from "@modelcontextprotocol/client";
import type { McpTool } from "../types.ts";

/** What the views need of the session (init.ts gives it: the server manager, the executor, Pi). */
export interface ViewHost {
  /** `resources/read` on the server, within its time limits. */
  readResource(serverName: string, uri: string): Promise<unknown>;
  /**
   * A view's `tools/call`, made as the model's calls are (approvals, time limits), answered with the whole
   * `CallToolResult`; throws with a reason the view and the user can read (another server's tool, a tool not for views).
   */
  callTool(serverName: string, toolName: string, args: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult>;
  /** A view's `ui/message`: a message of the user's in the conversation (a follow-up; Pi answers it). */
  sendMessage(text: string, images: readonly { data: string; mimeType: string }[], from: ViewLabel): void;
  /** Asks the user whether a view may open this link; false when nobody can be asked, or they refuse. */
  confirmLink(url: string, from: ViewLabel): Promise<boolean>;
  /**
   * Opens `url` in the user's browser. Settles with why it could not (the opener did not start, or exited with an
   * error), or with nothing once the opener exited well; pending while it runs (one may run as long as its browser).
   */
  openInBrowser(url: string): Promise<string | undefined>;
  notify(message: string, level: "info" | "warning"): void;
  /** How the views' page may reach the user now. */
  pageOutlet(): PageOutlet;
  theme(): "light" | "dark";
}

/**
 * How the views' page reaches the user: opened in their browser; or its address told, with why no browser can open
 * here (`noBrowser`: no display, over SSH), or without when the user turned the browser off
 * (`settings.apps.openBrowser`); or not at all in a run that ends with its reply (print mode), where the page would
 * be gone before anyone could open it.
 */
export type PageOutlet = { show: "browser" } | { show: "address"; noBrowser?: string } | { show: "never" };

/** Which view: its server, and the tool whose calls it shows. */
export interface ViewLabel {
  serverName: string;
  toolName: string;
}

/** A model's call of a tool with a view. */
export interface ViewedCall extends ViewLabel {
  viewUri: string;
  /** The tool as listed: the view is told it (`toolInfo`). */
  tool: McpTool;
}

/** The outcome of the call that opened (or updated) a view: the view is sent it. */
export interface ViewCall {
  result(result: CallToolResult): void;
  failed(reason: string): void;
  /**
   * Settles once the view is on its page (or was refused, and the user told why), never rejects: a call waits for it
   * (boundedly) so that its result comes with its view.
   */
  readonly shown: Promise<void>;
}

/**
 * MCP Apps (SEP-1865): a tool's interactive view, opened in the user's browser. This front door is light: what every
 * start needs (which tools have a view, who may call them, what the client declares to servers) loads with the
 * extension; the page, its server and the official app bridge load with the first view.
 */
import type { ViewCall, ViewedCall, ViewHost } from "./apps/view-host.ts";
import type { ViewSession } from "./apps/views.ts";
import { waitAtMost } from "./util/abort.ts";
import { errorMessage } from "./util/guards.ts";
import { lazyLoad } from "./util/lazy-load.ts";
import { toolKey } from "./tool-names.ts";

export {
  appsSettings,
  callableByViews,
  isViewMimeType,
  keptToolUi,
  offeredToModel,
  readToolUi,
  UI_EXTENSION_ID,
  uiExtension,
  VIEW_MIME_TYPE,
  viewsOffered,
} from "./apps/tool-ui.ts";

export type { PageOutlet, ViewCall, ViewedCall, ViewHost, ViewLabel } from "./apps/view-host.ts";

/** The session's views. Nothing starts before the first view opens: no listener, no app bridge loaded. */
export interface AppViews {
  /** A model's call of a tool with a view: the view opens (or updates) with the call's input; its outcome follows. */
  toolCalled(call: ViewedCall, input: Record<string, unknown>): ViewCall;
  /** What views asked the model to know (`ui/update-model-context`) since it was last told, once; else nothing. */
  takeModelContext(): string | undefined;
  /** Pi's theme may have changed: open views follow it. */
  followTheme(): void;
  /** The page is told the session ended; its listeners and bridges close. */
  close(): Promise<void>;
}

const loadViewSession = lazyLoad(() => import("./apps/views.ts"));
/** How long a call's result waits for its view to be on the page (the page server started, the resource read). */
const VIEW_SHOWN_WAIT_MS = 3_000;

export function createAppViews(host: ViewHost): AppViews {
  let started: Promise<ViewSession> | undefined;
  let session: ViewSession | undefined;
  let closed = false;
  const unshown = new Set<string>();
  const start = () =>
    (started ??= loadViewSession().then(({ ViewSession }) => {
      session = new ViewSession(host);
      if (closed) void session.close();
      return session;
    }));
  return {
    toolCalled(call, input) {
      if (host.pageOutlet().show === "never") return notShown(host, call, unshown);
      const view = start().then((views) => views.toolCalled(call, input));
      view.catch((error: unknown) => host.notify(`MCP: views cannot open: ${errorMessage(error)}`, "warning"));
      const ignore = () => {};
      return {
        result: (result) => void view.then((handle) => handle.result(result), ignore),
        failed: (reason) => void view.then((handle) => handle.failed(reason), ignore),
        // A view that takes longer does not hold its call's result back.
        shown: waitAtMost(
          view.then((handle) => handle.shown),
          VIEW_SHOWN_WAIT_MS,
        ).then(ignore, ignore),
      };
    },
    takeModelContext: () => session?.takeModelContext(),
    followTheme: () => session?.followTheme(),
    async close() {
      closed = true;
      await session?.close();
    },
  };
}

/**
 * A run without Pi's UI (print mode) ends with its reply, and its page with it: nothing is served, and the user is told
 * once per tool that its view shows only in a session that stays (the TUI, or an RPC client).
 */
function notShown(host: ViewHost, call: ViewedCall, told: Set<string>): ViewCall {
  const key = toolKey(call.serverName, call.toolName);
  if (!told.has(key)) {
    told.add(key);
    host.notify(
      `MCP: ${call.toolName} (MCP server "${call.serverName}") has a view, which print mode cannot show: the run ends with its ` +
        "reply, before a page could be opened (in Pi's TUI it opens in your browser)",
      "info",
    );
  }
  return { result: () => {}, failed: () => {}, shown: Promise.resolve() };
}

/**
 * The views of one Pi session: one page in the user's browser (apps/page-server.ts), and in it one view per tool
 * (a later call of the same tool updates its view). Each view's `ui://` resource is read once per server and URI
 * (apps/view-resource.ts), checked, and shown under the policy its declaration allows (apps/csp.ts), through the
 * official app bridge (apps/bridge.ts), which runs here, in Pi: the page only relays its messages.
 *
 * The page opens in the browser the first time a view needs it, and again only when no page is connected (a closed
 * tab); where no browser can open (none here, or the opener failed), one line says so and gives its address. A page
 * that connects (a reload, another tab) gets every view anew: new bridges, the last input and outcome sent again.
 * (Print mode shows no views: apps.ts answers its calls.)
 */
import { randomBytes } from "node:crypto";
import type { Tool } from "@modelcontextprotocol/client";
import type { McpUiHostContext } from "@modelcontextprotocol/ext-apps/app-bridge";
import { waitAtMost } from "../util/abort.ts";
import { debugLog, hideInDebugLog, ignored } from "../util/debug-log.ts";
import { errorMessage } from "../util/guards.ts";
import { toolKey } from "../tool-names.ts";
import { type BridgeEvents, type MountedBridge, mountBridge, type ToolOutcome } from "./bridge.ts";
import { type ViewPolicy, viewPolicy } from "./csp.ts";
import type { ViewCall, ViewedCall, ViewHost } from "./view-host.ts";
import { PageServer } from "./page-server.ts";
import { type ViewResource, viewFromRead } from "./view-resource.ts";

interface View extends ViewedCall {
  key: string;
  input: Record<string, unknown>;
  outcome?: ToolOutcome;
  /** The bridge on the current page; replaced when a page connects. */
  mount?: MountedBridge;
  /** The last ui/update-model-context text, not given to the model yet. */
  context?: string;
}

/** How long a browser is given to show the page before another call opens it again. */
const REOPEN_AFTER_MS = 30_000;
/** How long an opener has to fail (xdg-open without a browser fails at once); one still running then has opened it. */
const OPENER_VERDICT_MS = 2_000;

export class ViewSession {
  private readonly host: ViewHost;
  private readonly views = new Map<string, View>();
  private readonly resources = new Map<string, Promise<ViewResource>>();
  private pages: Promise<PageServer> | undefined;
  private mounting: Promise<void> = Promise.resolve();
  private openedAt = 0;
  /** The address was told (no browser here, or the opener failed): it is not told again, nor a browser tried. */
  private addressShown = false;
  private readonly closing = new AbortController();
  private theme: "light" | "dark";
  private closed = false;

  constructor(host: ViewHost) {
    this.host = host;
    this.theme = host.theme();
  }

  toolCalled(call: ViewedCall, input: Record<string, unknown>): ViewCall {
    const key = toolKey(call.serverName, call.toolName);
    // One view per tool, kept as it is: its bridge holds it, and a later call updates it.
    const view: View = this.views.get(key) ?? { ...call, key, input };
    Object.assign(view, call, { input, outcome: undefined });
    this.views.set(key, view);
    const shown = this.show(view).catch((error: unknown) => debugLog(`showing the view of ${call.toolName} failed`, error));
    // A later call of the same tool settles the view from then on.
    const isLatest = () => view.input === input && this.views.get(key) === view;
    return {
      result: (result) => isLatest() && this.settle(view, { result }),
      failed: (reason) => isLatest() && this.settle(view, { cancelled: reason }),
      shown,
    };
  }

  /** The views' latest model context not given to the model yet (ui/update-model-context), once. */
  takeModelContext(): string | undefined {
    const parts = [...this.views.values()].flatMap((view) => {
      const context = view.context;
      view.context = undefined;
      return context ? [`[Context from the view of ${view.toolName} (MCP server "${view.serverName}")]\n${context}`] : [];
    });
    return parts.length > 0 ? parts.join("\n\n") : undefined;
  }

  /** Pi's theme may have changed: the page and every view follow. */
  followTheme(): void {
    const theme = this.host.theme();
    if (theme === this.theme || !this.pages) return;
    this.theme = theme;
    void this.pages.then((pages) => {
      pages.send({ type: "theme", theme });
      for (const view of this.views.values()) view.mount?.hostContextChanged({ theme });
    }, ignored("following Pi's theme (the page server did not start)"));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.closing.abort();
    for (const view of this.views.values()) view.mount?.close();
    const pages = await this.pages?.catch(() => undefined);
    await pages?.close("This Pi session ended: its views no longer work.");
  }

  private async show(view: View): Promise<void> {
    let resource: ViewResource;
    try {
      resource = await this.resource(view.serverName, view.viewUri);
    } catch (error) {
      this.host.notify(`MCP: the view of ${view.toolName} (server "${view.serverName}") did not open: ${errorMessage(error)}`, "warning");
      return;
    }
    const pages = await this.startPages();
    if (this.closed || this.views.get(view.key) !== view) return;
    const current = view.mount;
    if (current && current.uri === view.viewUri && !current.closed) {
      current.update(view.input, view.outcome);
    } else await this.mount(view, resource, pages);
    // Not waited for: an opener may take its time to fail, and the call's result need not wait for it.
    if (!pages.connected) void this.bringPage(view, pages);
  }

  private settle(view: View, outcome: ToolOutcome): void {
    view.outcome = outcome;
    view.mount?.update(view.input, outcome);
  }

  private resource(serverName: string, uri: string): Promise<ViewResource> {
    const key = `${serverName}\0${uri}`;
    let resource = this.resources.get(key);
    if (!resource) {
      resource = this.host.readResource(serverName, uri).then((answer) => viewFromRead(uri, answer));
      // A failed read is not kept: the next call tries again.
      resource.catch(() => this.resources.delete(key));
      this.resources.set(key, resource);
    }
    return resource;
  }

  private startPages(): Promise<PageServer> {
    this.pages ??= PageServer.start(
      {
        pageConnected: () => void this.remountAll().catch((error: unknown) => debugLog("showing the views on a new page failed", error)),
        message: (viewId, message) => this.mountById(viewId)?.receive(message),
      },
      "Pi · MCP views",
      () => this.theme,
    ).then((pages) => {
      hideInDebugLog([pages.url]);
      if (this.closed) void pages.close("This Pi session ended.");
      return pages;
    });
    this.pages.catch(() => (this.pages = undefined));
    return this.pages;
  }

  /** One mount at a time: two at once (a call and a page connecting) would each close the other's view. */
  private mount(view: View, resource: ViewResource, pages: PageServer): Promise<void> {
    const run = this.mounting.then(() => this.mountNow(view, resource, pages));
    this.mounting = run.catch(ignored("mounting a view"));
    return run;
  }

  private async mountNow(view: View, resource: ViewResource, pages: PageServer): Promise<void> {
    if (this.closed) return;
    view.mount?.close();
    const policy = viewPolicy(resource.csp, new URL(pages.url).origin);
    this.reportRefusals(view, policy);
    const id = randomBytes(9).toString("base64url");
    const events: BridgeEvents = {
      post: (message) => pages.send({ type: "message", id, message }),
      status: (text, level) => pages.send({ type: "status", id, text, level }),
      resize: (size) => pages.send({ type: "size", id, ...size }),
      teardown: () => this.remove(view, pages),
    };
    view.mount = await mountBridge({ id, view, resource, policy, host: this.host, hostContext: this.hostContext(view), events });
    const url = await pages.sandboxPage(view.serverName, id, policy.header, view.mount.allow);
    const title = `${view.serverName} · ${view.tool.title ?? view.toolName}`;
    pages.send({ type: "view", id, title, url, allow: view.mount.allow, prefersBorder: resource.prefersBorder });
    view.mount.update(view.input, view.outcome);
  }

  private remove(view: View, pages: PageServer): void {
    if (this.views.get(view.key) !== view || !view.mount) return;
    pages.send({ type: "remove", id: view.mount.id });
    void pages.forget(view.serverName, view.mount.id);
    view.mount.close();
    this.views.delete(view.key);
  }

  private async remountAll(): Promise<void> {
    const pages = await this.startPages();
    for (const view of this.views.values()) {
      const resource = await this.resource(view.serverName, view.viewUri).catch(() => undefined);
      if (resource && !this.closed) await this.mount(view, resource, pages);
    }
  }

  private mountById(id: string): MountedBridge | undefined {
    for (const view of this.views.values()) if (view.mount?.id === id) return view.mount;
    return undefined;
  }

  /**
   * No page is connected: the browser is opened (not again within REOPEN_AFTER_MS), or, where none can open, the
   * address is told once, with why.
   */
  private async bringPage(view: View, pages: PageServer): Promise<void> {
    const what = `the view of ${view.toolName} (MCP server "${view.serverName}")`;
    const address = `open ${pages.url} in a browser on this machine; it works while this Pi session runs`;
    const outlet = this.host.pageOutlet();
    if (outlet.show === "browser" && !this.addressShown) {
      if (Date.now() - this.openedAt < REOPEN_AFTER_MS) return;
      this.openedAt = Date.now();
      const failure = await waitAtMost(this.host.openInBrowser(pages.url), OPENER_VERDICT_MS, this.closing.signal);
      if (this.closed) return;
      if (failure === undefined) return this.host.notify(`MCP: opened ${what} in your browser (if no page appeared: ${pages.url})`, "info");
      this.addressShown = true;
      return this.host.notify(`MCP: no browser could be opened for ${what} (${failure}): ${address}`, "warning");
    }
    if (this.addressShown || outlet.show === "never") return;
    this.addressShown = true;
    if (outlet.show === "address" && outlet.noBrowser) {
      return this.host.notify(`MCP: no browser can be opened here (${outlet.noBrowser}) for ${what}: ${address}`, "info");
    }
    this.host.notify(`MCP: ${what} is at ${pages.url} (open it in a browser on this machine; it works while this Pi session runs)`, "info");
  }

  private reportRefusals(view: View, policy: ViewPolicy): void {
    if (policy.refused.length === 0) return;
    const list = policy.refused.join("; ");
    this.host.notify(
      `MCP: the view of ${view.toolName} (server "${view.serverName}") opens without what its policy asked for: ${list}`,
      "warning",
    );
  }

  private hostContext(view: View): McpUiHostContext {
    const { locale, timeZone } = Intl.DateTimeFormat().resolvedOptions();
    const { name, title, description, inputSchema } = view.tool;
    const tool = {
      name,
      ...(title ? { title } : {}),
      ...(description ? { description } : {}),
      inputSchema: inputSchema ?? { type: "object" },
    };
    return {
      theme: this.theme,
      locale,
      timeZone,
      platform: "desktop",
      userAgent: "pi-mcp-adapter",
      displayMode: "inline",
      availableDisplayModes: ["inline"],
      toolInfo: { tool: tool as Tool },
    };
  }
}

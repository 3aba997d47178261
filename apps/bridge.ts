/**
 * One view's end of the MCP Apps protocol: the official `AppBridge` (ext-apps), run in Pi over a transport that
 * carries its messages through the page (apps/page-server.ts) to the view's sandbox frame and back. Its handlers are
 * the host's answers to the view: tool calls and resource reads reach only the view's own server (through the
 * session, as the model's calls do); `ui/message` becomes the user's message; `ui/update-model-context` waits for the
 * model's next turn; `ui/open-link` asks the user first. The view is sent its tool's input once it says it is ready,
 * then the call's result, or why the call did not finish.
 */
import {
  AppBridge,
  buildAllowAttribute,
  type McpUiHostContext,
  type McpUiMessageRequest,
  type McpUiUpdateModelContextRequest,
} from "@modelcontextprotocol/ext-apps/app-bridge";
import { type CallToolResult, type JSONRPCMessage, parseJSONRPCMessage, type Transport } from "@modelcontextprotocol/client";
import { debugLog } from "../util/debug-log.ts";
import { ADAPTER_INFO } from "../util/own-version.ts";
import { errorMessage, isJsonObject } from "../util/guards.ts";
import type { ViewPolicy } from "./csp.ts";
import type { ViewResource } from "./view-resource.ts";
import type { ViewHost, ViewLabel } from "./view-host.ts";

/** What the bridge tells the page about its view. */
export interface BridgeEvents {
  /** A message for the view. */
  post(message: JSONRPCMessage): void;
  /** A line under the view's title. */
  status(text: string, level: "info" | "warning"): void;
  resize(size: { width?: number; height?: number }): void;
  /** The view asked to be closed. */
  teardown(): void;
}

export type ToolOutcome = { result: CallToolResult } | { cancelled: string };

export interface MountedBridge {
  readonly id: string;
  /** The view's resource, as mounted. */
  readonly uri: string;
  /** The frame's permission policy (`allow`). */
  readonly allow: string;
  readonly closed: boolean;
  /** The call's input, and its outcome when there is one: sent once the view is ready (again after a later call). */
  update(input: Record<string, unknown>, outcome: ToolOutcome | undefined): void;
  /** A message the page relayed from the view. */
  receive(message: unknown): void;
  hostContextChanged(context: Partial<McpUiHostContext>): void;
  close(): void;
}

export interface MountOptions {
  id: string;
  view: ViewLabel & { viewUri: string; context?: string };
  resource: ViewResource;
  policy: ViewPolicy;
  host: ViewHost;
  hostContext: McpUiHostContext;
  events: BridgeEvents;
}

/** The page's side of the bridge: messages out through `post`, in through `receive`. */
class PageTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly post: (message: JSONRPCMessage) => void;

  constructor(post: (message: JSONRPCMessage) => void) {
    this.post = post;
  }

  async start(): Promise<void> {}

  async send(message: JSONRPCMessage): Promise<void> {
    this.post(message);
  }

  async close(): Promise<void> {
    this.onclose?.();
  }

  receive(raw: unknown): void {
    let message: JSONRPCMessage;
    try {
      message = parseJSONRPCMessage(raw);
    } catch (error) {
      return this.onerror?.(new Error(`not a JSON-RPC message: ${errorMessage(error)}`));
    }
    this.onmessage?.(message);
  }
}

export async function mountBridge(options: MountOptions): Promise<MountedBridge> {
  const { id, view, resource, policy, host, events } = options;
  const transport = new PageTransport(events.post);
  const bridge = new AppBridge(
    null,
    ADAPTER_INFO,
    {
      openLinks: {},
      serverTools: {},
      serverResources: {},
      logging: {},
      message: { text: {}, image: {} },
      updateModelContext: { text: {}, structuredContent: {} },
      sandbox: { csp: policy.approved, ...(resource.permissions ? { permissions: resource.permissions } : {}) },
    },
    { hostContext: options.hostContext },
  );
  let ready = false;
  let closed = false;
  let latest: { input: Record<string, unknown>; outcome: ToolOutcome | undefined } | undefined;
  const sent: { input?: Record<string, unknown>; outcome?: ToolOutcome } = {};
  // Each input and outcome once, in order, and only to a view that said it is ready.
  const deliver = () => {
    if (!ready || !latest || closed) return;
    const { input, outcome } = latest;
    if (sent.input !== input) void bridge.sendToolInput({ arguments: input }).catch(ignoredSend);
    sent.input = input;
    if (!outcome || sent.outcome === outcome) return;
    sent.outcome = outcome;
    if ("result" in outcome) void bridge.sendToolResult(outcome.result).catch(ignoredSend);
    else void bridge.sendToolCancelled({ reason: outcome.cancelled }).catch(ignoredSend);
  };
  const label = `the view of ${view.toolName} (MCP server "${view.serverName}")`;
  const from: ViewLabel = { serverName: view.serverName, toolName: view.toolName };

  bridge.onsandboxready = () =>
    void bridge
      .sendSandboxResourceReady({ html: resource.html, csp: policy.approved, permissions: resource.permissions })
      .catch(ignoredSend);
  bridge.oninitialized = () => {
    ready = true;
    deliver();
  };
  bridge.oncalltool = async (params, extra) => {
    try {
      return await host.callTool(view.serverName, params.name, isJsonObject(params.arguments) ? params.arguments : {}, extra.mcpReq.signal);
    } catch (error) {
      events.status(`A call of ${params.name} failed: ${errorMessage(error)}`, "warning");
      throw error;
    }
  };
  bridge.onreadresource = async (params) => (await host.readResource(view.serverName, params.uri)) as never;
  bridge.onmessage = async (params) => {
    const { text, images } = messageContent(params);
    host.sendMessage(text, images, from);
    return {};
  };
  bridge.onupdatemodelcontext = async (params) => {
    view.context = modelContextText(params);
    return {};
  };
  bridge.onopenlink = async ({ url }) => {
    if (!/^https?:\/\//i.test(url)) throw new Error(`Not opened: ${url} is not a web page (http or https).`);
    if (!(await host.confirmLink(url, from))) throw new Error("The user did not open the link.");
    host.openInBrowser(url);
    return {};
  };
  bridge.onrequestdisplaymode = async () => ({ mode: "inline" });
  bridge.onsizechange = ({ width, height }) => events.resize({ width, height });
  bridge.onloggingmessage = (params) => debugLog(`${label} logs`, params.data);
  bridge.onrequestteardown = () => events.teardown();
  transport.onerror = (error) => events.status(`Refused a message of this view: ${error.message}`, "warning");
  await bridge.connect(transport);

  return {
    id,
    uri: view.viewUri,
    allow: buildAllowAttribute(resource.permissions),
    get closed() {
      return closed;
    },
    update(input, outcome) {
      latest = { input, outcome };
      deliver();
    },
    receive: (message) => transport.receive(message),
    hostContextChanged(context) {
      if (!closed) void Promise.resolve(bridge.sendHostContextChange(context)).catch(ignoredSend);
    },
    close() {
      if (closed) return;
      closed = true;
      void bridge.close().catch(ignoredSend);
    },
  };
}

/** The page went away between a send and its delivery: the next page gets the view anew. */
function ignoredSend(error: unknown): void {
  debugLog("a message to a view was not sent", error);
}

/** A `ui/message`'s text and images (other blocks are named, not passed on). */
function messageContent(params: McpUiMessageRequest["params"]): {
  text: string;
  images: { data: string; mimeType: string }[];
} {
  const texts: string[] = [];
  const images: { data: string; mimeType: string }[] = [];
  for (const block of params.content) {
    if (block.type === "text") texts.push(block.text);
    else if (block.type === "image") images.push({ data: block.data, mimeType: block.mimeType });
    else texts.push(`[${block.type} left out]`);
  }
  return { text: texts.join("\n"), images };
}

/** A `ui/update-model-context`'s content and structured content, as the text the model is given. */
function modelContextText(params: McpUiUpdateModelContextRequest["params"]): string | undefined {
  const texts = (params.content ?? []).flatMap((block) => (block.type === "text" ? [block.text] : []));
  if (params.structuredContent !== undefined) texts.push(JSON.stringify(params.structuredContent));
  return texts.length > 0 ? texts.join("\n") : undefined;
}

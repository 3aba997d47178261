/**
 * The views of a session (apps/views.ts) with a stand-in session (no Pi, no browser): where the page is brought to
 * the user (the browser once, or one line with its address where none can open), a view's resource read once per
 * server and URI, a refused resource told with its reason, and nothing left listening after close.
 */
import type { CallToolResult } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, it } from "vitest";
import type { ViewHost } from "../apps.ts";
import { ViewSession } from "../apps/views.ts";
import { browserReachesUser } from "../util/browser.ts";

const PAGE = { contents: [{ uri: "ui://t/app.html", mimeType: "text/html;profile=mcp-app", text: "<p>view</p>" }] };
const call = (toolName: string, viewUri = "ui://t/app.html") => ({ serverName: "srv", toolName, viewUri, tool: { name: toolName } });
const RESULT: CallToolResult = { content: [{ type: "text", text: "done" }] };

interface StandIn extends ViewHost {
  notices: string[];
  opened: string[];
  reads: string[];
}

function standIn(browser: boolean, resource: (uri: string) => unknown = () => PAGE): StandIn {
  const host: StandIn = {
    notices: [],
    opened: [],
    reads: [],
    readResource: async (_server, uri) => {
      host.reads.push(uri);
      return resource(uri);
    },
    callTool: async () => RESULT,
    sendMessage: () => {},
    confirmLink: async () => false,
    openInBrowser: (url) => host.opened.push(url) > 0,
    notify: (message) => host.notices.push(message),
    browserWanted: () => browser,
    theme: () => "dark",
  };
  return host;
}

let session: ViewSession | undefined;
afterEach(async () => {
  await session?.close();
  session = undefined;
});

async function show(host: StandIn, ...tools: string[]): Promise<void> {
  session ??= new ViewSession(host);
  for (const tool of tools) {
    const view = session.toolCalled(call(tool), {});
    view.result(RESULT);
    await view.shown;
  }
}

describe("bringing the page to the user", () => {
  it("opens the browser once for the views of a session, each resource read once", async () => {
    const host = standIn(true);
    await show(host, "a", "a", "b");
    expect(host.opened).toHaveLength(1);
    expect(host.opened[0]).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/[\w-]{32}\/$/);
    expect(host.notices).toEqual([`MCP: opened the view of a (MCP server "srv") in your browser (if no page appeared: ${host.opened[0]})`]);
    expect(host.reads).toEqual(["ui://t/app.html"]);
  });

  it("where no browser can open, one line gives the page's address; it is served until the session closes", async () => {
    const host = standIn(false);
    await show(host, "a", "b");
    expect(host.opened).toEqual([]);
    expect(host.notices).toHaveLength(1);
    const url = /is at (\S+) /.exec(host.notices[0]!)![1]!;
    expect(host.notices[0]).toBe(
      `MCP: the view of a (MCP server "srv") is at ${url} (open it in a browser on this machine; it works while this Pi session runs)`,
    );
    expect((await fetch(url)).status).toBe(200);
    await session!.close();
    await expect(fetch(url)).rejects.toThrow();
  });

  it("a resource that cannot be a view is told with its reason, and read again at the next call", async () => {
    const host = standIn(true, (uri) => ({ contents: [{ uri, mimeType: "text/plain", text: "no" }] }));
    await show(host, "a", "a");
    expect(host.notices).toEqual([
      'MCP: the view of a (server "srv") did not open: ui://t/app.html is text/plain, not an MCP Apps view (text/html;profile=mcp-app)',
      'MCP: the view of a (server "srv") did not open: ui://t/app.html is text/plain, not an MCP Apps view (text/html;profile=mcp-app)',
    ]);
    expect(host.opened).toEqual([]);
  });

  it("a browser opened over SSH would not reach the user, unless $BROWSER says what to run", () => {
    expect(browserReachesUser({})).toBe(true);
    expect(browserReachesUser({ SSH_CONNECTION: "10.0.0.1 5000 10.0.0.2 22" })).toBe(false);
    expect(browserReachesUser({ SSH_TTY: "/dev/pts/1", BROWSER: "w3m" })).toBe(true);
  });
});

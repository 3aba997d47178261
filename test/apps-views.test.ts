/**
 * The views of a session (apps/views.ts) with a stand-in session (no Pi, no browser): where the page is brought to
 * the user (the browser once, or one line with its address where none can open or the opener failed, nothing served
 * in print mode), a view's resource read once per server and URI, a refused resource told with its reason, and
 * nothing left listening after close. Then the real openers: why one fails, and where none would reach the user.
 */
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, it } from "vitest";
import { createAppViews, type PageOutlet, type ViewHost } from "../apps.ts";
import { ViewSession } from "../apps/views.ts";
import { noBrowserHere, openInBrowserOutcome } from "../util/browser.ts";

const PAGE = { contents: [{ uri: "ui://t/app.html", mimeType: "text/html;profile=mcp-app", text: "<p>view</p>" }] };
const call = (toolName: string, viewUri = "ui://t/app.html") => ({ serverName: "srv", toolName, viewUri, tool: { name: toolName } });
const RESULT: CallToolResult = { content: [{ type: "text", text: "done" }] };

interface StandIn extends ViewHost {
  notices: string[];
  opened: string[];
  reads: string[];
}

function standIn(
  outlet: PageOutlet,
  resource: (uri: string) => unknown = () => PAGE,
  opener: () => Promise<string | undefined> = async () => undefined,
): StandIn {
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
    openInBrowser: (url) => {
      host.opened.push(url);
      return opener();
    },
    notify: (message) => host.notices.push(message),
    pageOutlet: () => outlet,
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
    const host = standIn({ show: "browser" });
    await show(host, "a", "a", "b");
    expect(host.opened).toHaveLength(1);
    expect(host.opened[0]).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/[\w-]{32}\/$/);
    await expect
      .poll(() => host.notices)
      .toEqual([`MCP: opened the view of a (MCP server "srv") in your browser (if no page appeared: ${host.opened[0]})`]);
    expect(host.reads).toEqual(["ui://t/app.html"]);
  });

  it("with the browser turned off, one line gives the page's address; it is served until the session closes", async () => {
    const host = standIn({ show: "address" });
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
    const host = standIn({ show: "browser" }, (uri) => ({ contents: [{ uri, mimeType: "text/plain", text: "no" }] }));
    await show(host, "a", "a");
    expect(host.notices).toEqual([
      'MCP: the view of a (server "srv") did not open: ui://t/app.html is text/plain, not an MCP Apps view (text/html;profile=mcp-app)',
      'MCP: the view of a (server "srv") did not open: ui://t/app.html is text/plain, not an MCP Apps view (text/html;profile=mcp-app)',
    ]);
    expect(host.opened).toEqual([]);
  });

  it("where no browser can open here, the line says so and why, with the address", async () => {
    const host = standIn({ show: "address", noBrowser: "no display" });
    await show(host, "a", "b");
    expect(host.opened).toEqual([]);
    const url = /open (\S+) in a browser/.exec(host.notices[0] ?? "")?.[1];
    expect(host.notices).toEqual([
      `MCP: no browser can be opened here (no display) for the view of a (MCP server "srv"): open ${url} in a browser on this machine; it works while this Pi session runs`,
    ]);
    expect((await fetch(url!)).status).toBe(200);
  });

  it("an opener that fails is told plainly, with the address, and not tried again", async () => {
    const host = standIn({ show: "browser" }, undefined, async () => "xdg-open exited with status 3");
    await show(host, "a");
    await expect.poll(() => host.notices).toHaveLength(1);
    const url = host.opened[0];
    expect(host.notices).toEqual([
      `MCP: no browser could be opened for the view of a (MCP server "srv") (xdg-open exited with status 3): open ${url} in a browser on this machine; it works while this Pi session runs`,
    ]);
    await show(host, "b");
    expect([host.opened, host.notices.length]).toEqual([[url], 1]);
  });

  it("print mode serves nothing: each tool with a view is told once, and no resource is read", async () => {
    const host = standIn({ show: "never" });
    const views = createAppViews(host);
    for (const tool of ["a", "a", "b"]) {
      const view = views.toolCalled(call(tool), {});
      view.result(RESULT);
      await view.shown;
    }
    expect(host.notices).toEqual(
      ["a", "b"].map(
        (tool) =>
          `MCP: ${tool} (MCP server "srv") has a view, which print mode cannot show: the run ends with its reply, before a page could be opened (in Pi's TUI it opens in your browser)`,
      ),
    );
    expect([host.reads, host.opened]).toEqual([[], []]);
    await views.close();
  });
});

describe("the browser's opener", () => {
  it("says why it failed: its exit status, or that it is not there; nothing when it opened the page", async () => {
    const dir = await mkdtemp(join(tmpdir(), "opener-"));
    try {
      const script = async (name: string, status: number) => {
        const path = join(dir, name);
        await writeFile(path, `#!/bin/sh\nexit ${status}\n`);
        await chmod(path, 0o755);
        return path;
      };
      const [failing, working] = [await script("failing", 3), await script("working", 0)];
      expect(await openInBrowserOutcome("http://127.0.0.1:1/", { BROWSER: failing })).toBe(`${failing} exited with status 3`);
      expect(await openInBrowserOutcome("http://127.0.0.1:1/", { BROWSER: working })).toBeUndefined();
      expect(await openInBrowserOutcome("http://127.0.0.1:1/", { BROWSER: join(dir, "missing") })).toBe(
        `${join(dir, "missing")} was not found`,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("a browser would not reach the user over SSH or, on Linux, without a display, unless $BROWSER says what to run", () => {
    const display = { DISPLAY: ":0" };
    expect(noBrowserHere(display, "linux")).toBeUndefined();
    expect(noBrowserHere({ WAYLAND_DISPLAY: "wayland-0" }, "linux")).toBeUndefined();
    expect(noBrowserHere({}, "linux")).toBe("no display: neither DISPLAY nor WAYLAND_DISPLAY is set, and no BROWSER");
    expect(noBrowserHere({ WSL_DISTRO_NAME: "Ubuntu" }, "linux")).toBeUndefined();
    expect(noBrowserHere({}, "darwin")).toBeUndefined();
    expect(noBrowserHere({ ...display, SSH_CONNECTION: "10.0.0.1 5000 10.0.0.2 22" }, "linux")).toBe("over SSH");
    expect(noBrowserHere({ SSH_TTY: "/dev/pts/1", BROWSER: "w3m" }, "linux")).toBeUndefined();
  });
});

/**
 * MCP Apps in the real Pi of this run's host, with the official example server @modelcontextprotocol/server-basic-vanillajs
 * and a real headless Chromium (test/helpers/browser.ts): the model calls the server's get-time, the view opens in
 * the "browser" ($BROWSER records the page's address; Chromium opens it) and renders the call's result; its button
 * calls the server's tool through Pi and shows the new time; its message reaches the conversation; its fetch to a
 * domain its policy did not declare is blocked; a wrong token gets nothing; after shutdown no listener or process of
 * ours is left. One Pi session and one Chromium for the whole file (each step builds on the one before).
 */
import { existsSync, readFileSync } from "node:fs";
import { chmod, writeFile } from "node:fs/promises";
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { Browser, Frame, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { launchChromium } from "./helpers/browser.ts";
import { contentText, offeredToolNames, type ModelRequest } from "./helpers/faux-script.ts";
import { currentHost, REPO_ROOT } from "./helpers/hosts.ts";
import { type McpDirs, mcpDirs } from "./helpers/mcp-setup.ts";
import { type PiSession, startSession } from "./helpers/pi-session.ts";
import { processesWithMarker } from "./helpers/processes.ts";

const host = currentHost();
const BASIC = join(REPO_ROOT, "node_modules/@modelcontextprotocol/server-basic-vanillajs/dist/index.js");
const VIEWS = join(REPO_ROOT, "test/fixtures/servers/views-server.mjs");
const TOOL = "basic__get-time";

let browser: Browser;
let page: Page;
let dirs: McpDirs;
let pi: PiSession;
let opened: () => string[];
/** A local server the view must not reach: it counts the requests that get through. */
let probe: Server;
let probeHits = 0;
let previousBrowser: string | undefined;
/** How the user answers a view's request to open a link. */
let linkAnswer = false;

const dialogs = (start: string) => pi.ui.filter((entry) => entry.kind === "dialog" && entry.title.startsWith(start)).length;
const approvalsAsked = () => dialogs('MCP server "basic" wants to run get-time');
const linkQuestions = () => dialogs('The view of get-time (MCP server "basic") asks to open a page');

/** The model loads get-time, calls it (directly, or through McpCall on a host that shows new tools only later). */
const callGetTime = (request: ModelRequest) =>
  offeredToolNames(request).includes(TOOL)
    ? { toolCalls: [{ name: TOOL, arguments: {} }] }
    : { toolCalls: [{ name: "McpCall", arguments: { tool: TOOL, arguments: {} } }] };

beforeAll(async () => {
  browser = await launchChromium();
  dirs = await mcpDirs({
    mcpServers: {
      // Every call asks first, the view's as the model's.
      basic: { command: process.execPath, args: [BASIC, "--stdio"], approveTools: ["get-time"] },
      views: { command: process.execPath, args: [VIEWS] },
    },
  });
  const recorder = join(dirs.cwd, "browser.sh");
  await writeFile(recorder, `#!/bin/sh\necho "$1" >> "${join(dirs.cwd, "opened.log")}"\n`);
  await chmod(recorder, 0o755);
  previousBrowser = process.env.BROWSER;
  process.env.BROWSER = recorder;
  const log = join(dirs.cwd, "opened.log");
  opened = () => (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : []);
  probe = createServer((_request, response) => {
    probeHits++;
    response.writeHead(200, { "Access-Control-Allow-Origin": "*" }).end("reached");
  });
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  pi = await startSession({
    extensions: ["pi-mcp-adapter.ts"],
    agentDir: dirs.agentDir,
    cwd: dirs.cwd,
    script: [{ toolCalls: [{ name: "ToolSearch", arguments: { query: `select:${TOOL}` } }] }, callGetTime, "The time is shown."],
    dialogs: {
      select: (title) => (title.startsWith('MCP server "basic" wants to run get-time') ? "Allow once" : undefined),
      confirm: (title) => title.includes("asks to open a page") && linkAnswer,
    },
  });
  page = await browser.newPage();
}, 60_000);

afterAll(async () => {
  if (previousBrowser === undefined) delete process.env.BROWSER;
  else process.env.BROWSER = previousBrowser;
  await pi?.dispose();
  await browser?.close();
  await new Promise((resolve) => probe?.close(resolve));
  await dirs?.cleanup();
});

/** What a script in the view reaches of the browser (the project's types leave the DOM out). */
interface InTheView {
  document: {
    addEventListener(type: string, listener: (event: { effectiveDirective: string }) => void): void;
    documentElement: { getAttribute(name: string): string | null };
  };
  top: { postMessage(message: unknown, targetOrigin: string): void };
  parent: { postMessage(message: unknown, targetOrigin: string): void };
  addEventListener(type: "message", listener: (event: { data: unknown }) => void): void;
}

/** The frame (a view's own, inside its sandbox frame) that holds `selector`, once its page is written. */
async function frameWith(selector: string): Promise<Frame> {
  let found: Frame | undefined;
  await expect
    .poll(async () => {
      for (const frame of page.frames()) if (await frame.$(selector).catch(() => null)) found = frame;
      return found !== undefined;
    })
    .toBe(true);
  return found!;
}

/** The get-time view's frame. */
const viewFrame = () => frameWith("#server-time");

describe(`MCP Apps on Pi ${host.version}`, () => {
  test("the view opens in the browser and renders the call's result", async () => {
    await pi.prompt("what time is it on the server?");
    const result = pi.toolResults.at(-1)!;
    expect(result.isError).toBe(false);
    await expect.poll(opened).toHaveLength(1);
    await page.goto(opened()[0]!);
    const frame = await viewFrame();
    await expect.poll(() => frame.textContent("#server-time")).toBe(result.text);
  });

  test("ToolSearch finds the tool, never its view's HTML as a resource to read", async () => {
    pi.script([{ toolCalls: [{ name: "ToolSearch", arguments: { query: "get the server time" } }] }, "Found."]);
    await pi.prompt("which tool gets the server time?");
    const answer = pi.toolResults.at(-1)!.text;
    expect(answer).toContain(TOOL);
    expect(answer).not.toMatch(/ui:\/\/|mcp-app\.html|basic__get_ui/);
    const listed = await pi.command("/mcp tools basic");
    expect(listed.text).toContain("get-time");
    expect(listed.text).not.toMatch(/ui:\/\/|mcp-app\.html/);
  });

  test("its button calls the server's tool through Pi (not the model), asked about as the model's calls are", async () => {
    const frame = await viewFrame();
    const before = await frame.textContent("#server-time");
    const [requests, results, asked] = [pi.requests.length, pi.toolResults.length, approvalsAsked()];
    await frame.click("#get-time-btn");
    await expect.poll(() => frame.textContent("#server-time")).not.toBe(before);
    expect(Date.parse((await frame.textContent("#server-time"))!)).toBeGreaterThan(Date.parse(before!));
    expect([pi.requests.length, pi.toolResults.length]).toEqual([requests, results]);
    expect(approvalsAsked()).toBe(asked + 1);
  });

  test("the view follows Pi's theme", async () => {
    const frame = await viewFrame();
    expect(await frame.evaluate(() => (globalThis as unknown as InTheView).document.documentElement.getAttribute("data-theme"))).toBe(
      "dark",
    );
  });

  test("its message reaches the conversation as a follow-up, and the model answers it", async () => {
    pi.script(["Noted."]);
    const frame = await viewFrame();
    const requests = pi.requests.length;
    await frame.fill("#message-text", "Please note the server time.");
    await frame.click("#send-message-btn");
    await expect.poll(() => pi.requests.length).toBe(requests + 1);
    const said = pi.requests.at(-1)!.messages.at(-1)!;
    expect(said.role).toBe("user");
    expect(contentText(said.content)).toBe('[From the view of get-time (MCP server "basic")]\nPlease note the server time.');
    await expect.poll(() => contentText(pi.session.messages.at(-1)?.content)).toBe("Noted.");
  });

  test("what it gives the model's context comes with the next turn, once", async () => {
    const frame = await viewFrame();
    const answer = await viewRequest(frame, "ui/update-model-context", { content: [{ type: "text", text: "The user looked at 3 rows." }] });
    expect(answer).toMatchObject({ result: {} });
    pi.script(["Seen.", "Again."]);
    await pi.prompt("what did I look at?");
    const context = '[Context from the view of get-time (MCP server "basic")]\nThe user looked at 3 rows.';
    expect(pi.requests.at(-1)!.messages.map((message) => contentText(message.content))).toContain(context);
    await pi.prompt("and now?");
    expect(pi.requests.at(-1)!.messages.filter((message) => contentText(message.content) === context)).toHaveLength(1);
  });

  test("a link opens in the browser only after the user agrees", async () => {
    const frame = await viewFrame();
    linkAnswer = false;
    await frame.click("#open-link-btn");
    await expect.poll(linkQuestions).toBe(1);
    linkAnswer = true;
    await frame.click("#open-link-btn");
    await expect.poll(opened).toContain("https://modelcontextprotocol.io/");
    expect(opened().filter((url) => url === "https://modelcontextprotocol.io/")).toHaveLength(1);
  });

  test("a second call of the tool updates its view instead of adding one", async () => {
    pi.script([callGetTime, "Shown again."]);
    await pi.prompt("and the time now?");
    const frame = await viewFrame();
    await expect.poll(() => frame.textContent("#server-time")).toBe(pi.toolResults.at(-1)!.text);
    expect(await page.locator(".view").count()).toBe(1);
    expect(opened().filter((url) => url.startsWith("http://127.0.0.1"))).toHaveLength(1);
  });

  test("a fetch to a domain its policy did not declare is blocked by the browser", async () => {
    const frame = await viewFrame();
    const target = `http://127.0.0.1:${(probe.address() as AddressInfo).port}/leak`;
    const outcome = await frame.evaluate(async (url) => {
      const violations: string[] = [];
      const { document } = globalThis as unknown as InTheView;
      document.addEventListener("securitypolicyviolation", (event) => violations.push(event.effectiveDirective));
      const fetched = await fetch(url).then(
        () => "reached",
        () => "blocked",
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      return { fetched, violations };
    }, target);
    expect(outcome).toEqual({ fetched: "blocked", violations: ["connect-src"] });
    expect(probeHits).toBe(0);
    // The server itself answers: only the view's policy kept it out.
    expect(await (await fetch(target)).text()).toBe("reached");
  });

  test("a wrong token, host or origin gets nothing", async () => {
    const address = new URL(opened()[0]!);
    const token = address.pathname.split("/")[1]!;
    expect(token).toMatch(/^[\w-]{32}$/);
    const wrong = `${token.slice(0, -1)}${token.endsWith("A") ? "B" : "A"}`;
    for (const path of [`/${wrong}/`, `/${wrong}/events`, `/${wrong}/host-page.js`, "/", "/events", `/${token}x/`]) {
      const response = await fetch(new URL(path, address.origin));
      expect([path, response.status, await response.text()]).toEqual([path, 404, "Not found\n"]);
    }
    const post = (path: string, origin: string) =>
      fetch(new URL(path, address.origin), { method: "POST", headers: { "Content-Type": "application/json", Origin: origin }, body: "{}" });
    expect((await post(`/${wrong}/message`, address.origin)).status).toBe(404);
    expect((await post(`/${token}/message`, "http://evil.example")).status).toBe(403);
    expect(await statusWithHost(address, `evil.example:${address.port}`)).toBe(404);
    expect(await statusWithHost(address, address.host)).toBe(200);
    // The view's sandbox page, on its own origin, with its own token.
    const sandbox = new URL(
      page
        .frames()
        .find((frame) => frame.url().includes("/view/"))!
        .url(),
    );
    const sandboxToken = sandbox.pathname.split("/")[1]!;
    expect(sandboxToken).not.toBe(token);
    expect(sandbox.origin).not.toBe(address.origin);
    const good = await fetch(sandbox);
    expect(good.headers.get("content-security-policy")).toContain("connect-src 'none'");
    const bad = await fetch(new URL(sandbox.pathname.replace(sandboxToken, token), sandbox.origin));
    expect(bad.status).toBe(404);
  });

  test("a message sent around the view's sandbox is refused, and the page says why", async () => {
    const frame = await viewFrame();
    await frame.evaluate(() =>
      (globalThis as unknown as InTheView).top.postMessage(
        { jsonrpc: "2.0", id: "around", method: "tools/call", params: { name: "get-time" } },
        "*",
      ),
    );
    await expect
      .poll(() => page.textContent(".view .status"))
      .toMatch(/^Refused a message from http:\/\/127\.0\.0\.1:\d+: it did not come through a view's sandbox\.$/);
  });

  test("views that cannot be shown are refused, each with its reason; the calls' results are as ever", async () => {
    const tools = ["views__not_html", "views__huge", "views__missing", "views__wild_csp"];
    const call = (name: string) => ({ name: "McpCall", arguments: { tool: name, arguments: {} } });
    pi.script([
      { toolCalls: [{ name: "ToolSearch", arguments: { query: `select:${tools.join(",")}` } }] },
      (request) => ({ toolCalls: tools.map((name) => (offeredToolNames(request).includes(name) ? { name, arguments: {} } : call(name))) }),
      "Done.",
    ]);
    const notices = pi.ui.length;
    await pi.prompt("show the other views");
    expect(
      pi.toolResults
        .slice(-4)
        .map((result) => result.text)
        .sort(),
    ).toEqual(["huge ran", "missing ran", "not_html ran", "wild_csp ran"]);
    const told = () => pi.ui.slice(notices).flatMap((entry) => (entry.kind === "notify" ? [entry.message] : []));
    await expect.poll(() => told().length).toBe(4);
    expect(told().sort()).toEqual([
      'MCP: the view of huge (server "views") did not open: ui://views/huge is 6.0 MB, over the 5.0 MB a view may be',
      expect.stringMatching(/^MCP: the view of missing \(server "views"\) did not open: .*ui:\/\/views\/missing/),
      'MCP: the view of not_html (server "views") did not open: ui://views/not-html is text/plain, not an MCP Apps view (text/html;profile=mcp-app)',
      'MCP: the view of wild_csp (server "views") opens without what its policy asked for: connectDomains "*": a wildcard that allows ' +
        'every domain; connectDomains "http://plain.example": not https (only https:// and wss:// domains are allowed); ' +
        'connectDomains "https://*.com": a wildcard over a whole top-level domain',
    ]);
    const wild = await frameWith("#title");
    expect(await wild.textContent("#title")).toBe("wild");
    const sandbox = new URL(
      page
        .frames()
        .find((frame) => frame.childFrames().includes(wild))!
        .url(),
    );
    expect((await fetch(sandbox)).headers.get("content-security-policy")).toContain("connect-src https://api.example.com;");
  });

  test("a view calls only its own server's tools, and only those the server lets views call", async () => {
    const refusal = (answer: Record<string, unknown>) => (answer.error as { message?: string } | undefined)?.message;
    const basic = await viewFrame();
    const wild = await frameWith("#title");
    const call = (frame: Frame, name: string) => viewRequest(frame, "tools/call", { name, arguments: {} });
    expect(refusal(await call(basic, "client_caps"))).toContain(
      'MCP server "basic" offers no tool "client_caps": a view calls only its own server\'s tools.',
    );
    expect(refusal(await call(wild, "get-time"))).toContain('MCP server "views" offers no tool "get-time"');
    expect(refusal(await call(wild, "model_only"))).toContain(
      'MCP tool "model_only" of server "views" is for the model only: the server does not let views call it.',
    );
    expect(await call(wild, "app_only")).toMatchObject({ result: { content: [{ type: "text", text: "app_only ran" }] } });
    // The model is never offered the tool only views may call.
    expect(pi.requests.flatMap((request) => offeredToolNames(request))).not.toContain("views__app_only");
    expect(await page.textContent(`.view:has(iframe[title="views · wild_csp"]) .status`)).toContain("A call of model_only failed");
  });

  test("after shutdown the page says so, and no listener or process of ours is left", async () => {
    const origins = [...new Set(page.frames().map((frame) => new URL(frame.url()).origin))].filter((origin) => origin.startsWith("http"));
    expect(origins).toHaveLength(3);
    await pi.dispose();
    await expect.poll(() => page.textContent("#session")).toBe("This Pi session ended: its views no longer work.");
    for (const origin of origins) await expect(fetch(origin)).rejects.toThrow();
    expect(await processesWithMarker(dirs.agentDir)).toEqual([]);
  });
});

/** A request the view sends its host as any view may (raw JSON-RPC through its sandbox), and the host's answer. */
function viewRequest(frame: Frame, method: string, params: unknown): Promise<Record<string, unknown>> {
  return frame.evaluate(
    ({ method, params }) =>
      new Promise<Record<string, unknown>>((resolve) => {
        const view = globalThis as unknown as InTheView;
        const id = `test-${Math.random()}`;
        view.addEventListener("message", ({ data }) => {
          if ((data as { id?: unknown })?.id === id) resolve(data as Record<string, unknown>);
        });
        view.parent.postMessage({ jsonrpc: "2.0", id, method, params }, "*");
      }),
    { method, params },
  );
}

/** The status of a request for the page with this `Host` header (a page re-pointed at 127.0.0.1 sends its own). */
function statusWithHost(address: URL, hostHeader: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      { host: "127.0.0.1", port: address.port, path: address.pathname, headers: { Host: hostHeader } },
      (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      },
    );
    request.on("error", reject);
    request.end();
  });
}

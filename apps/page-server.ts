/**
 * The page the views live in, served on 127.0.0.1 for one Pi session, and the sandbox pages each view runs in.
 *
 * - The host page (`http://127.0.0.1:<port>/<token>/`): its script, its style, the events it is sent (server-sent
 *   events) and the messages it posts back. The token is 24 random bytes, new each session; without it nothing is
 *   served (a plain 404, the same for every wrong address), and no response names it to anyone (no referrer is sent).
 * - One sandbox origin per server (a listener of its own, so views of two servers never share an origin and cannot
 *   reach into each other): it serves each view's sandbox page, under the view's own Content-Security-Policy, with a
 *   token of its own, since a view can read its sandbox page's address.
 * - Requests must name the address they were sent to (`Host`), which a page of another site re-pointed at 127.0.0.1
 *   (DNS rebinding) cannot; a message must come from the host page's origin as JSON.
 * - The newest page that connects is the page: an older one is told it was replaced. Listeners are unref'd and closed,
 *   with every open connection, by `close()`.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { isJsonObject } from "../util/guards.ts";
import { escapeHtml } from "../util/text.ts";

/** A message the page may post: a view's bridge message is a few MB at most (a view's `ui/message` with an image). */
const MAX_POST_BYTES = 8 * 1024 * 1024;
const BROWSER_DIR = new URL("./browser/", import.meta.url);
const PAGE_FILES: Readonly<Record<string, { type: string; body: Buffer }>> = {
  "host-page.js": { type: "text/javascript; charset=utf-8", body: readFileSync(new URL("host-page.js", BROWSER_DIR)) },
  "host-page.css": { type: "text/css; charset=utf-8", body: readFileSync(new URL("host-page.css", BROWSER_DIR)) },
};
const SANDBOX_SCRIPT = readFileSync(new URL("sandbox-proxy.js", BROWSER_DIR), "utf8");

const COMMON_HEADERS = {
  "Referrer-Policy": "no-referrer",
  "Cache-Control": "no-store",
  "X-Content-Type-Options": "nosniff",
};

/** What the page is told (apps/browser/host-page.js reads each kind). */
export type PageEvent =
  | { type: "hello"; page: string; title: string; theme: "light" | "dark" }
  | { type: "view"; id: string; title: string; url: string; allow: string; prefersBorder?: boolean }
  | { type: "message"; id: string; message: unknown }
  | { type: "size"; id: string; width?: number; height?: number }
  | { type: "status"; id: string; text: string; level: "info" | "warning" }
  | { type: "remove"; id: string }
  | { type: "theme"; theme: "light" | "dark" }
  | { type: "end"; text: string };

export interface PageServerEvents {
  /** A page connected (the previous one, if any, was told it was replaced). */
  pageConnected(): void;
  /** The connected page posted a view's bridge message. */
  message(viewId: string, message: unknown): void;
}

interface SandboxOrigin {
  server: Server;
  origin: string;
  token: string;
  /** Each view's sandbox page: its policy and permissions. */
  views: Map<string, { csp: string; allow: string }>;
}

export class PageServer {
  readonly url: string;
  private readonly origin: string;
  private readonly token: string;
  private readonly host: Server;
  private readonly sandboxes = new Map<string, Promise<SandboxOrigin>>();
  private readonly events: PageServerEvents;
  private readonly title: string;
  private readonly theme: () => "light" | "dark";
  private page: { id: string; response: ServerResponse } | undefined;
  private closed = false;

  private constructor(host: Server, events: PageServerEvents, title: string, theme: () => "light" | "dark") {
    this.host = host;
    this.events = events;
    this.title = title;
    this.theme = theme;
    this.token = newToken();
    this.origin = originOf(host);
    this.url = `${this.origin}/${this.token}/`;
    host.on("request", (request, response) => this.serveHost(request, response));
  }

  static async start(events: PageServerEvents, title: string, theme: () => "light" | "dark"): Promise<PageServer> {
    return new PageServer(await listen(), events, title, theme);
  }

  get connected(): boolean {
    return this.page !== undefined;
  }

  /** To the page, if one is connected (else dropped: a page that connects later is sent the views anew). */
  send(event: PageEvent): void {
    if (this.page) writeEvent(this.page.response, event);
  }

  /**
   * The address of a view's sandbox page on its server's origin (the origin's listener starts with its first view).
   * `csp` is the view's whole policy header.
   */
  async sandboxPage(serverName: string, viewId: string, csp: string, allow: string): Promise<string> {
    let sandbox = this.sandboxes.get(serverName);
    if (!sandbox) {
      sandbox = listen().then((server) => this.sandboxOrigin(server));
      this.sandboxes.set(serverName, sandbox);
    }
    const origin = await sandbox;
    origin.views.set(viewId, { csp, allow });
    return `${origin.origin}/${origin.token}/view/${encodeURIComponent(viewId)}`;
  }

  /** Forgets a view's sandbox page (its address then gets a 404). */
  async forget(serverName: string, viewId: string): Promise<void> {
    (await this.sandboxes.get(serverName))?.views.delete(viewId);
  }

  /** Tells the page the session ended, then closes every listener and connection. */
  async close(text: string): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.send({ type: "end", text });
    this.page?.response.end();
    this.page = undefined;
    const sandboxes = await Promise.allSettled(this.sandboxes.values());
    const servers = [this.host, ...sandboxes.flatMap((sandbox) => (sandbox.status === "fulfilled" ? [sandbox.value.server] : []))];
    await Promise.all(servers.map(closeServer));
  }

  private sandboxOrigin(server: Server): SandboxOrigin {
    const sandbox: SandboxOrigin = { server, origin: originOf(server), token: newToken(), views: new Map() };
    server.on("request", (request, response) => this.serveSandbox(sandbox, request, response));
    if (this.closed) void closeServer(server);
    return sandbox;
  }

  private serveHost(request: IncomingMessage, response: ServerResponse): void {
    const path = pathUnder(request, this.origin, this.token);
    if (path === undefined || this.closed) return notFound(response);
    if (request.method === "GET" && path === "") return this.sendHostPage(response);
    if (request.method === "GET" && Object.hasOwn(PAGE_FILES, path)) {
      const file = PAGE_FILES[path]!;
      response.writeHead(200, { ...COMMON_HEADERS, "Content-Type": file.type });
      return void response.end(file.body);
    }
    if (request.method === "GET" && path === "events") return this.connectPage(response);
    if (request.method === "POST" && path === "message") return void this.receive(request, response);
    notFound(response);
  }

  private sendHostPage(response: ServerResponse): void {
    response.writeHead(200, {
      ...COMMON_HEADERS,
      "Content-Type": "text/html; charset=utf-8",
      // The views' sandbox origins are listeners started later, on ports not known yet.
      "Content-Security-Policy":
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
        "frame-src http://127.0.0.1:*; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    });
    response.end(hostPageHtml(this.title));
  }

  private connectPage(response: ServerResponse): void {
    const previous = this.page;
    if (previous) {
      writeEvent(previous.response, { type: "end", text: "These views opened in another tab." });
      previous.response.end();
    }
    const page = { id: newToken(), response };
    this.page = page;
    response.writeHead(200, { ...COMMON_HEADERS, "Content-Type": "text/event-stream" });
    response.on("close", () => {
      if (this.page === page) this.page = undefined;
    });
    this.send({ type: "hello", page: page.id, title: this.title, theme: this.theme() });
    this.events.pageConnected();
  }

  private async receive(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const type = request.headers["content-type"] ?? "";
    if (request.headers.origin !== this.origin || !type.startsWith("application/json")) return refuse(response, 403);
    const body = await readBody(request).catch(() => undefined);
    const posted = body === undefined ? undefined : parseJson(body);
    if (!isJsonObject(posted) || typeof posted.view !== "string") return refuse(response, 400);
    // A page that was replaced, or a page of an earlier session, speaks for no view any more.
    if (posted.page !== this.page?.id) return refuse(response, 409);
    response.writeHead(204, COMMON_HEADERS).end();
    this.events.message(posted.view, posted.message);
  }

  private serveSandbox(sandbox: SandboxOrigin, request: IncomingMessage, response: ServerResponse): void {
    const path = pathUnder(request, sandbox.origin, sandbox.token);
    const viewId = path?.startsWith("view/") ? decodeURIComponent(path.slice(5)) : undefined;
    const view = viewId === undefined || request.method !== "GET" || this.closed ? undefined : sandbox.views.get(viewId);
    if (!view) return notFound(response);
    response.writeHead(200, { ...COMMON_HEADERS, "Content-Type": "text/html; charset=utf-8", "Content-Security-Policy": view.csp });
    response.end(sandboxPageHtml(this.origin, view.allow));
  }
}

function newToken(): string {
  return randomBytes(24).toString("base64url");
}

/** The part of the path after `/<token>/`, or nothing when the address is not ours (wrong host or token). */
function pathUnder(request: IncomingMessage, origin: string, token: string): string | undefined {
  if (`http://${request.headers.host}` !== origin) return undefined;
  const path = new URL(request.url ?? "/", origin).pathname;
  const [, given = "", ...rest] = path.split("/");
  const expected = Buffer.from(token);
  const actual = Buffer.from(given);
  if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) return undefined;
  return rest.join("/");
}

/** Every wrong address gets the same answer: it tells nothing of the session. */
function notFound(response: ServerResponse): void {
  response.writeHead(404, { ...COMMON_HEADERS, "Content-Type": "text/plain; charset=utf-8" }).end("Not found\n");
}

function refuse(response: ServerResponse, status: number): void {
  response.writeHead(status, COMMON_HEADERS).end();
}

function listen(): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      // The session decides when the page ends: an open page must not keep Pi's process alive.
      server.unref();
      resolve(server);
    });
  });
}

function originOf(server: Server): string {
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_POST_BYTES) throw new Error("message too large");
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function hostPageHtml(title: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="host-page.css"></head>
<body><header><h1>${escapeHtml(title)}</h1><p id="session">Connecting…</p></header>
<main id="views"></main>
<script type="module" src="host-page.js"></script></body></html>`;
}

/** The sandbox page: the relay between the host page and the view (apps/browser/sandbox-proxy.js). */
function sandboxPageHtml(hostOrigin: string, allow: string): string {
  const settings = JSON.stringify({ hostOrigin, allow }).replace(/</g, "\\u003c");
  return `<!doctype html>
<html><head><meta charset="utf-8"><style>html,body{margin:0;height:100%;overflow:hidden}iframe{border:0;width:100%;height:100%;display:block}</style></head>
<body><script type="module">const SANDBOX = ${settings};
${SANDBOX_SCRIPT}</script></body></html>`;
}

/** One server-sent event to the page. */
function writeEvent(response: ServerResponse, event: PageEvent): void {
  response.write(`data: ${JSON.stringify(event)}\n\n`);
}

/**
 * The parts of the sign-in that need no authorization server: the browser command, the private store (what it
 * trusts when it reads back), and the loopback callback (what it accepts, and what it turns away).
 */
import { readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { browserCommand } from "../util/browser.ts";
import { CallbackListener } from "../connection/oauth-callback.ts";
import { OAUTH_DIR_NAME, OAuthStore } from "../connection/oauth-store.ts";
import { tempDir } from "./server-manager-helpers.ts";

describe("browserCommand", () => {
  const url = "https://auth.example.com/authorize?a=1&b=2";
  it("uses $BROWSER, putting the URL at %s or at the end", () => {
    expect(browserCommand(url, { BROWSER: "firefox --new-window" }, "linux")).toEqual(["firefox", "--new-window", url]);
    expect(browserCommand(url, { BROWSER: "  open-in %s --quiet " }, "linux")).toEqual(["open-in", url, "--quiet"]);
  });

  it("falls back to the platform's opener, never a shell", () => {
    expect(browserCommand(url, {}, "linux")).toEqual(["xdg-open", url]);
    expect(browserCommand(url, { BROWSER: " " }, "darwin")).toEqual(["open", url]);
    expect(browserCommand(url, {}, "win32")).toEqual(["rundll32", "url.dll,FileProtocolHandler", url]);
  });
});

describe("OAuthStore", () => {
  let dir: { path: string; remove: () => void };
  let store: OAuthStore;
  const url = "https://mcp.example.com/mcp";
  const tokens = { access_token: "a", token_type: "Bearer" };
  beforeEach(() => {
    dir = tempDir();
    store = new OAuthStore(dir.path);
  });
  afterEach(() => dir.remove());

  it("keeps one private file per URL, with changes made one after the other, and the issuer stamps (SEP-2352)", async () => {
    const issuer = "https://as.example.com";
    await Promise.all([
      store.update(url, (record) => ({ ...record, tokens: { ...tokens, issuer } })),
      store.update(url, (record) => ({ ...record, codeVerifier: "v" })),
      store.update("HTTPS://MCP.example.com:443/mcp#x", (record) => ({ ...record, client: { client_id: "c", issuer } })),
    ]);
    expect(await store.read(url)).toEqual({ tokens: { ...tokens, issuer }, codeVerifier: "v", client: { client_id: "c", issuer } });
    expect(store.hasTokens(url)).toBe(true);
    expect(store.hasTokens("https://mcp.example.com/other")).toBe(false);
    const oauthDir = join(dir.path, OAUTH_DIR_NAME);
    const files = readdirSync(oauthDir);
    expect(files).toEqual([expect.stringMatching(/^[0-9a-f]{32}\.json$/)]);
    expect(statSync(join(oauthDir, files[0]!)).mode & 0o777).toBe(0o600);
    expect(statSync(oauthDir).mode & 0o777).toBe(0o700);
    expect(await store.remove(url)).toBe(true);
    expect(readdirSync(oauthDir)).toEqual([]);
    expect(await store.remove(url)).toBe(false);
  });

  it("ignores a file that is not its own: broken, another version, another URL's, or with malformed parts", async () => {
    await store.update(url, (record) => ({ ...record, tokens }));
    const oauthDir = join(dir.path, OAUTH_DIR_NAME);
    const path = join(oauthDir, readdirSync(oauthDir)[0]!);
    const write = (content: unknown) => writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
    write("{ not json");
    expect(await store.read(url)).toBeUndefined();
    write({ version: 2, url, tokens });
    expect(await store.read(url)).toBeUndefined();
    write({ version: 1, url: "https://elsewhere.example.com/mcp", tokens });
    expect(await store.read(url)).toBeUndefined();
    write({ version: 1, url, tokens: { access_token: 1 }, client: { name: "no id" }, codeVerifier: 5 });
    expect(await store.read(url)).toEqual({});
    // An issuer stamp that is not a string binds to nothing; a configured client's binding names both.
    write({
      version: 1,
      url,
      tokens: { ...tokens, issuer: 5 },
      client: { client_id: "c", issuer: {} },
      configuredClient: { client_id: "c" },
    });
    expect(await store.read(url)).toEqual({});
    expect(store.hasTokens(url)).toBe(false);
  });

  it("creates nothing until something is stored", async () => {
    expect(await store.read(url)).toBeUndefined();
    expect(store.hasTokens(url)).toBe(false);
    expect(readdirSync(dir.path)).toEqual([]);
  });
});

describe("CallbackListener", () => {
  let listener: CallbackListener;
  beforeEach(async () => {
    listener = await CallbackListener.start(0);
  });
  afterEach(() => listener.close());

  const visit = async (query: Record<string, string>, path = "/callback") => {
    const response = await fetch(`http://127.0.0.1:${listener.port}${path}?${new URLSearchParams(query)}`);
    return { status: response.status, text: await response.text() };
  };

  it("listens on 127.0.0.1 only, and hands over the code of the callback carrying its state", async () => {
    expect(listener.redirectUrl).toBe(`http://127.0.0.1:${listener.port}/callback`);
    const response = listener.response(new AbortController().signal);
    expect(await visit({ code: "c1", state: "forged" })).toMatchObject({ status: 400 });
    expect(await visit({ code: "c1", state: listener.state }, "/elsewhere")).toMatchObject({ status: 404 });
    expect(await visit({ state: listener.state })).toMatchObject({
      status: 400,
      text: expect.stringContaining("carries no authorization code"),
    });
    const done = await visit({ code: "c1", state: listener.state });
    expect(done).toMatchObject({ status: 200, text: expect.stringContaining("Signed in.") });
    // No `iss` sent, none handed over (RFC 9207: an absent one is not an empty one).
    expect(await response).toEqual({ code: "c1" });
    expect(await visit({ code: "c2", state: listener.state })).toMatchObject({ text: expect.stringContaining("already been handled") });
  });

  it("hands over the issuer the callback names, exactly as sent, for the sign-in to check", async () => {
    const response = listener.response(new AbortController().signal);
    await visit({ code: "c1", state: listener.state, iss: "https://as.example.com/" });
    expect(await response).toEqual({ code: "c1", iss: "https://as.example.com/" });
  });

  it("hands over the authorization server's error, escaped on the page and cut short in the message, with its issuer", async () => {
    const response = listener.response(new AbortController().signal);
    const page = await visit({
      error: "access_denied",
      error_description: `<script>${"x".repeat(400)}`,
      iss: "https://as.example.com",
      state: listener.state,
    });
    expect(page.text).not.toContain("<script>");
    expect(await response).toEqual({
      error: expect.stringMatching(/^the authorization server answered "access_denied": <script>x+…$/),
      iss: "https://as.example.com",
    });
  });

  it("stops waiting when told to, and says so when its port is taken", async () => {
    const cancel = new AbortController();
    const response = listener.response(cancel.signal);
    cancel.abort(new Error("cancelled"));
    await expect(response).rejects.toThrow("cancelled");
    await expect(CallbackListener.start(listener.port)).rejects.toThrow(`port ${listener.port} on 127.0.0.1 is in use`);
  });
});

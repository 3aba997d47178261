/**
 * OAuth through the server manager against a real loopback authorization server and MCP server of our own
 * (test/fixtures/servers/oauth-server.mjs), with a headless browser standing in for the user's: when a sign-in is
 * needed and that the model is not the one to do it, the sign-in itself (discovery, registration, PKCE, resource,
 * scope), private storage by URL, refresh on expiry, step-up, revocation, sign-out, timeouts, cancelling, a pasted
 * callback, and client credentials.
 */
import { generateKeyPairSync } from "node:crypto";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { openInBrowser } from "../util/browser.ts";
import { NeedsAuthError } from "../connection/session.ts";
import { OAUTH_DIR_NAME } from "../connection/oauth-store.ts";
import { McpServerManager } from "../server-manager.ts";
import type { ServerDefinition } from "../types.ts";
import { HEADLESS_BROWSER, type OAuthFixture, REGISTERED_CLIENT, startOAuthFixture } from "./helpers/oauth-fixture.ts";
import { serverDef, tempDir } from "./server-manager-helpers.ts";

let fixture: OAuthFixture;
let dir: { path: string; remove: () => void };
let manager: McpServerManager;
let announced: string[];
const machineKey = generateKeyPairSync("ec", { namedCurve: "P-256" });

beforeAll(async () => {
  const publicKey = machineKey.publicKey.export({ type: "spki", format: "pem" }).toString();
  fixture = await startOAuthFixture({ FIXTURE_CC_ID: "machine", FIXTURE_CC_SECRET: "machine-secret", FIXTURE_CC_PUBLIC_KEY: publicKey });
});
afterAll(() => fixture.stop());

beforeEach(() => {
  dir = tempDir();
  announced = [];
  manager = new McpServerManager({
    agentDir: dir.path,
    resolveNpx: false,
    onSignInNeeded: (_name, error) => announced.push(error.message),
  });
});
afterEach(async () => {
  await manager.closeAll();
  dir.remove();
});

const headless = { openAuthorizationUrl: (url: string) => void openInBrowser(url, { BROWSER: HEADLESS_BROWSER }) };

function notes(extra: Partial<ServerDefinition> = {}): ServerDefinition {
  return serverDef("notes", { url: fixture.mcpUrl, ...extra });
}

async function failure(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    () => {
      throw new Error("expected a failure");
    },
    (error: Error) => error,
  );
}

async function eventsSince(before: number) {
  return (await fixture.events()).slice(before);
}

function storedFiles(): string[] {
  try {
    return readdirSync(join(dir.path, OAUTH_DIR_NAME)).map((name) => join(dir.path, OAUTH_DIR_NAME, name));
  } catch {
    return [];
  }
}

async function signedIn(def = notes()): Promise<void> {
  await manager.connect(def).catch(() => {});
  await manager.signIn(def, headless);
}

describe("OAuth with the server manager", () => {
  it("a server that needs a sign-in fails to connect saying the user must run /mcp-auth, announced once; nothing is registered or stored", async () => {
    const before = (await fixture.events()).length;
    const error = await failure(manager.connect(notes()));
    expect(error).toBeInstanceOf(NeedsAuthError);
    expect((error as NeedsAuthError).signIn).toBe(true);
    expect(error.message).toBe(
      'MCP server "notes" needs a sign-in (OAuth): the user has to run /mcp-auth notes (the assistant cannot do it).',
    );
    expect(manager.getState("notes")).toMatchObject({ status: "needs-auth", needsSignIn: true, signingIn: false });
    await failure(manager.connect(notes({ auth: "oauth" })));
    expect(announced).toEqual([error.message]);
    expect((await eventsSince(before)).map((event) => event.event)).not.toContain("register");
    expect(storedFiles()).toEqual([]);
  });

  it("signs in with discovery, registration (refresh_token granted), PKCE S256, the resource and the scope asked for; tokens are kept privately, by URL", async () => {
    const def = notes();
    await manager.connect(def).catch(() => {});
    const before = (await fixture.events()).length;
    await manager.signIn(def, headless);
    const events = await eventsSince(before);
    const register = events.find((event) => event.event === "register")!;
    expect(register.grant_types).toEqual(["authorization_code", "refresh_token"]);
    expect(register.redirect_uris).toEqual([expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/callback$/)]);
    // A loopback redirect: a native application (SEP-837, RFC 8252).
    expect(register.application_type).toBe("native");
    // "read" from the server's challenge, offline_access because the authorization server offers it.
    expect(events.find((event) => event.event === "authorize")).toEqual({
      event: "authorize",
      scope: "read offline_access",
      resource: fixture.mcpUrl,
      code_challenge_method: "S256",
      has_state: true,
    });
    expect(events.find((event) => event.event === "token")).toEqual({
      event: "token",
      grant_type: "authorization_code",
      resource: fixture.mcpUrl,
    });

    const [file] = storedFiles();
    expect(storedFiles()).toHaveLength(1);
    expect(file).not.toContain("notes");
    expect(statSync(file!).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir.path, OAUTH_DIR_NAME)).mode & 0o777).toBe(0o700);
    expect(JSON.parse(readFileSync(file!, "utf8"))).toMatchObject({ url: fixture.mcpUrl, tokens: { access_token: expect.any(String) } });

    const connection = await manager.connect(def);
    expect(connection.tools.map((tool) => tool.name)).toEqual(["echo", "write_note"]);
    expect((await manager.callTool("notes", "echo", { text: "hi" })).content).toEqual([{ type: "text", text: "hi" }]);
    expect(manager.isSignedIn(def)).toBe(true);
    // Same name, other URL: another server, not signed in.
    expect(manager.isSignedIn(notes({ url: `${fixture.mcpUrl}?tenant=2` }))).toBe(false);
  });

  it("a second sign-in reuses the registration and its callback port", async () => {
    await signedIn();
    const before = (await fixture.events()).length;
    await manager.signIn(notes(), headless);
    expect((await eventsSince(before)).map((event) => event.event)).toEqual(["authorize", "token"]);
  });

  it("refreshes an expired access token when the server answers 401, without a sign-in", async () => {
    await signedIn();
    await manager.connect(notes());
    await fixture.expireTokens();
    const before = (await fixture.events()).length;
    expect((await manager.callTool("notes", "echo", { text: "still here" })).content).toEqual([{ type: "text", text: "still here" }]);
    const events = await eventsSince(before);
    expect(events.filter((event) => event.event === "token").map((event) => event.grant_type)).toEqual(["refresh_token"]);
    expect(events.map((event) => event.event)).not.toContain("authorize");
  });

  it("a tool that needs more scope asks for a new sign-in (not a refresh), which asks for the wider scope", async () => {
    await signedIn();
    await manager.connect(notes());
    announced = [];
    const before = (await fixture.events()).length;
    const error = await failure(manager.callTool("notes", "write_note", { note: "x" }));
    expect(error).toBeInstanceOf(NeedsAuthError);
    expect(error.message).toBe(
      'MCP server "notes" needs a new sign-in that grants more (scope "read write"): the user has to run /mcp-auth notes (the assistant cannot do it).',
    );
    expect(manager.getState("notes")).toMatchObject({ status: "needs-auth", needsSignIn: true });
    expect(manager.getConnection("notes")).toBeUndefined();
    expect(announced).toEqual([error.message]);
    expect((await eventsSince(before)).map((event) => event.event)).not.toContain("token");

    await manager.signIn(notes(), headless);
    // The scopes granted so far, and the one missing (SEP-2350).
    expect((await fixture.events()).filter((event) => event.event === "authorize").at(-1)?.scope).toBe("read offline_access write");
    await manager.connect(notes());
    expect((await manager.callTool("notes", "write_note", { note: "x" })).content).toEqual([{ type: "text", text: "noted: x" }]);
  });

  it("a server that moved to another authorization server needs a new sign-in, which registers there (SEP-2352)", async () => {
    await signedIn();
    const [file] = storedFiles();
    const stored = JSON.parse(readFileSync(file!, "utf8"));
    expect(stored.client.issuer).toBe(fixture.url(""));
    expect(stored.tokens.issuer).toBe(fixture.url(""));
    // As if they came from the authorization server the server named before, which this one does not know.
    await fixture.revokeTokens();
    const old = "https://old-as.example.com";
    writeFileSync(
      file!,
      JSON.stringify({ ...stored, client: { ...stored.client, issuer: old }, tokens: { ...stored.tokens, issuer: old } }),
    );
    const before = (await fixture.events()).length;
    const error = await failure(manager.connect(notes()));
    expect(error.message).toBe(
      'MCP server "notes" needs a new sign-in (it moved to another authorization server): the user has to run /mcp-auth notes (the assistant cannot do it).',
    );
    // Neither its old tokens nor a registration made outside the sign-in.
    expect((await eventsSince(before)).map((event) => [event.event, event.token])).toEqual([["mcp", "unknown"]]);
    await manager.signIn(notes(), headless);
    expect((await eventsSince(before)).map((event) => event.event)).toEqual(["mcp", "register", "authorize", "token"]);
    expect((await manager.connect(notes())).tools.map((tool) => tool.name)).toEqual(["echo", "write_note"]);
  });

  it("revoked tokens (the refresh fails too) need a new sign-in", async () => {
    await signedIn();
    await fixture.revokeTokens();
    const error = await failure(manager.connect(notes()));
    expect(error.message).toBe(
      'MCP server "notes" needs a new sign-in (its OAuth session expired or was revoked): the user has to run /mcp-auth notes (the assistant cannot do it).',
    );
  });

  it("signing out forgets the tokens and the registration", async () => {
    await signedIn();
    await manager.connect(notes());
    expect(await manager.signOut(notes())).toBe(true);
    expect(manager.getConnection("notes")).toBeUndefined();
    expect(storedFiles()).toEqual([]);
    expect(manager.isSignedIn(notes())).toBe(false);
    expect(await manager.signOut(notes())).toBe(false);
    expect(await failure(manager.connect(notes()))).toBeInstanceOf(NeedsAuthError);
  });

  it("a sign-in nobody completes times out, one can be cancelled, and either way its callback stops listening", async () => {
    const urls: string[] = [];
    const timedOut = await failure(manager.signIn(notes(), { openAuthorizationUrl: (url) => void urls.push(url), timeoutMs: 500 }));
    expect(timedOut.message).toBe('The sign-in to MCP server "notes" timed out after 0.5 s: the browser did not come back to Pi.');
    const callback = new URL(urls[0]!).searchParams.get("redirect_uri")!;
    await expect(fetch(callback)).rejects.toThrow();

    let opened!: () => void;
    const waiting = new Promise<void>((resolve) => (opened = resolve));
    const cancelled = failure(manager.signIn(notes(), { openAuthorizationUrl: () => opened() }));
    await waiting;
    expect(manager.getState("notes").signingIn).toBe(true);
    expect(manager.cancelSignIn("notes")).toBe(true);
    expect((await cancelled).message).toBe('The sign-in to MCP server "notes" was cancelled.');
    expect(manager.getState("notes").signingIn).toBe(false);
    expect(manager.cancelSignIn("notes")).toBe(false);
  });

  it("a new sign-in replaces one still waiting; a sign-in outlives a reconnect of its server, not the session", async () => {
    let opened!: () => void;
    let waiting = new Promise<void>((resolve) => (opened = resolve));
    const first = failure(manager.signIn(notes(), { openAuthorizationUrl: () => opened() }));
    await waiting;
    waiting = new Promise<void>((resolve) => (opened = resolve));
    const second = failure(manager.signIn(notes(), { openAuthorizationUrl: () => opened() }));
    expect((await first).message).toBe('The sign-in to MCP server "notes" was replaced by a new one.');
    await waiting;
    await manager.connect(notes()).catch(() => {});
    await manager.close("notes");
    expect(manager.getState("notes").signingIn).toBe(true);
    await manager.closeAll();
    expect((await second).message).toBe('The sign-in to MCP server "notes" ended with the session.');
    expect(manager.getState("notes").signingIn).toBe(false);
  });

  it("a server that needs a sign-in is announced again only after a sign-in succeeded", async () => {
    const def = notes();
    const needed = await failure(manager.connect(def));
    await failure(manager.connect(def));
    expect(announced).toEqual([needed.message]);
    await manager.signIn(def, headless);
    await manager.signOut(def);
    await failure(manager.connect(def));
    expect(announced).toEqual([needed.message, needed.message]);
  });

  it("the address the browser ended on, pasted by the user, completes the sign-in; one from another sign-in does not", async () => {
    const signingIn = manager.signIn(notes(), {
      openAuthorizationUrl: async (url) => {
        const location = (await fetch(url, { redirect: "manual" })).headers.get("location")!;
        const forged = new URL(location);
        forged.searchParams.set("state", "not-this-one");
        expect(manager.deliverSignInCallback("notes", forged.href)).toMatchObject({ accepted: false });
        expect(manager.deliverSignInCallback("notes", location)).toEqual({
          accepted: true,
          text: "Signed in. You can close this tab and go back to Pi.",
        });
      },
    });
    await signingIn;
    expect(manager.isSignedIn(notes())).toBe(true);
    expect(manager.deliverSignInCallback("notes", "http://127.0.0.1/callback")).toBeUndefined();
  });

  it("client credentials, a secret or a signed JWT, get a token without anybody signing in; bad ones point at the config", async () => {
    const privateKey = machineKey.privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    const machine = { grantType: "client_credentials", clientId: "machine", authorizationServer: fixture.url("") } as const;
    for (const [name, proof] of [
      ["secret", { clientSecret: "machine-secret" }],
      ["jwt", { privateKey, signingAlgorithm: "ES256" }],
    ] as const) {
      const before = (await fixture.events()).length;
      await manager.connect(serverDef(name, { url: fixture.mcpUrl, oauth: { ...machine, ...proof } }));
      expect((await manager.callTool(name, "echo", { text: name })).content).toEqual([{ type: "text", text: name }]);
      expect((await eventsSince(before)).filter((event) => event.event === "token").map((event) => event.grant_type)).toEqual([
        "client_credentials",
      ]);
    }
    expect(storedFiles()).toEqual([]);
    const wrong = await failure(
      manager.connect(serverDef("wrong", { url: fixture.mcpUrl, oauth: { ...machine, clientSecret: "not-it" } })),
    );
    expect(wrong.message).toBe('MCP server "wrong" failed to connect: the authorization server answered "invalid_client"');
  });

  it("a server whose config gives it a token, or client credentials, is not signed in to", async () => {
    expect((await failure(manager.signIn(notes({ bearerToken: "configured" }), headless))).message).toContain(
      "does not sign in with OAuth",
    );
    const machine = notes({
      oauth: { grantType: "client_credentials", clientId: "machine", clientSecret: "s", authorizationServer: fixture.url("") },
    });
    expect((await failure(manager.signIn(machine, headless))).message).toContain(
      "gets its tokens with its client credentials: nobody signs in",
    );
  });
});

describe("OAuth: a user who says no", () => {
  let denying: OAuthFixture;
  beforeAll(async () => {
    denying = await startOAuthFixture({ FIXTURE_DENY: "1" });
  });
  afterAll(() => denying.stop());

  it("fails the sign-in with the authorization server's answer", async () => {
    const error = await failure(manager.signIn(serverDef("denied", { url: denying.mcpUrl }), headless));
    expect(error.message).toBe(
      'The sign-in to MCP server "denied" failed: the authorization server answered "access_denied": The user said no.',
    );
    expect(storedFiles().map((file) => JSON.parse(readFileSync(file, "utf8")).tokens)).toEqual([undefined]);
  });
});

describe("OAuth: a server that names only the scope it misses", () => {
  let narrow: OAuthFixture;
  beforeAll(async () => {
    // Its token answers name no scope either: the one asked for is the one granted (RFC 6749 §5.1).
    narrow = await startOAuthFixture({ FIXTURE_STEP_UP_NEW_ONLY: "1", FIXTURE_TOKEN_SCOPE: "0" });
  });
  afterAll(() => narrow.stop());

  it("the step-up sign-in asks for the scopes granted before as well, so the tools that worked keep working", async () => {
    const def = serverDef("narrow", { url: narrow.mcpUrl });
    await signedIn(def);
    await manager.connect(def);
    const error = await failure(manager.callTool("narrow", "write_note", { note: "x" }));
    expect(error.message).toContain('needs a new sign-in that grants more (scope "write")');
    await manager.signIn(def, headless);
    const asked = (await narrow.events()).filter((event) => event.event === "authorize").map((event) => event.scope);
    expect(asked).toEqual(["read offline_access", "read offline_access write"]);
    await manager.connect(def);
    expect((await manager.callTool("narrow", "write_note", { note: "x" })).content).toEqual([{ type: "text", text: "noted: x" }]);
    expect((await manager.callTool("narrow", "echo", { text: "still" })).content).toEqual([{ type: "text", text: "still" }]);
  });
});

describe("OAuth: an answer that does not say it is from the authorization server signed in at (RFC 9207)", () => {
  const MIX_UP = "https://evil.example.com";
  const fixtures: OAuthFixture[] = [];
  afterAll(() => Promise.all(fixtures.map((started) => started.stop())));
  const start = async (env: Record<string, string>) => {
    const started = await startOAuthFixture({ FIXTURE_ISS: MIX_UP, ...env });
    fixtures.push(started);
    return started;
  };
  const NOT_USED =
    'The sign-in to MCP server "mixup" failed: the answer the browser came back with does not show it is from the authorization ' +
    "server this sign-in went to (RFC 9207 issuer check), so it was not used";

  it("its code is never redeemed, and the issuer it names is not repeated", async () => {
    const mixUp = await start({});
    const error = await failure(manager.signIn(serverDef("mixup", { url: mixUp.mcpUrl }), headless));
    expect(error.message).toBe(NOT_USED);
    expect(JSON.stringify(error, Object.getOwnPropertyNames(error))).not.toContain("evil");
    expect((await mixUp.events()).map((event) => event.event)).toEqual(["register", "authorize"]);
  });

  it("its error is not shown: the text is not the authorization server's", async () => {
    const mixUp = await start({ FIXTURE_DENY: "1" });
    const error = await failure(manager.signIn(serverDef("mixup", { url: mixUp.mcpUrl }), headless));
    expect(error.message).toBe(NOT_USED);
  });
});

describe("OAuth: a client given in the config belongs to the authorization server it was first used with (SEP-2352)", () => {
  let registered: OAuthFixture;
  beforeAll(async () => {
    registered = await startOAuthFixture(REGISTERED_CLIENT);
  });
  afterAll(() => registered.stop());

  it("its secret goes to no other one: a server that names another gets an error saying so, until a sign-out", async () => {
    const def = serverDef("pre", { url: registered.mcpUrl, oauth: { clientId: "registered", clientSecret: "s3cret" } });
    await signedIn(def);
    const [file] = storedFiles();
    const stored = JSON.parse(readFileSync(file!, "utf8"));
    const issuer = registered.url("");
    expect(stored.configuredClient).toEqual({ client_id: "registered", issuer });
    expect(stored.tokens.issuer).toBe(issuer);
    expect(readFileSync(file!, "utf8")).not.toContain("s3cret");

    // As if it had been used with another authorization server first: this one is not that.
    writeFileSync(
      file!,
      JSON.stringify({ ...stored, tokens: undefined, configuredClient: { client_id: "registered", issuer: "https://old-as.example.com" } }),
    );
    const before = (await registered.events()).length;
    const error = await failure(manager.signIn(def, headless));
    expect(error.message).toBe(
      `The sign-in to MCP server "pre" failed: MCP server "pre" now names the authorization server ${issuer}/, and its "oauth.clientId" ` +
        `belongs to https://old-as.example.com/: its secret is not sent to another one. If the server moved, check "oauth" in its ` +
        `config and sign out and in again (/mcp-auth pre --logout).`,
    );
    expect((await registered.events()).slice(before)).toEqual([]);

    await manager.signOut(def);
    await manager.signIn(def, headless);
    expect(JSON.parse(readFileSync(storedFiles()[0]!, "utf8")).configuredClient).toEqual({ client_id: "registered", issuer });
  });
});

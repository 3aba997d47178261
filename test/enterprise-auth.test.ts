/**
 * The company sign-ins through the server manager, against the OAuth fixture's authorization server and identity
 * provider (test/fixtures/servers/oauth-server.mjs, oauth-enterprise.mjs): a workload's JWT from a file or a command
 * (SEP-1933), the user's ID token exchanged at the identity provider for an ID-JAG (SEP-990), from the config or from
 * a sign-in there shared by the servers naming it, and DPoP-bound tokens whose key is kept with them (SEP-1932). The
 * debug log is on for the whole file: the last test looks for every secret the cases handled in it and in every error.
 */
import { generateKeyPairSync, type KeyObject } from "node:crypto";
import { createServer, type Server } from "node:http";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { NeedsAuthError } from "../connection/session.ts";
import { OAUTH_DIR_NAME } from "../connection/oauth-store.ts";
import { McpServerManager } from "../server-manager.ts";
import type { OAuthSettings, ServerDefinition } from "../types.ts";
import { openInBrowser } from "../util/browser.ts";
import { DEBUG_LOG_FILE, openDebugLog } from "../util/debug-log.ts";
import {
  HEADLESS_BROWSER,
  IDP_CLIENT_ID,
  type OAuthFixture,
  REGISTERED_CLIENT,
  startOAuthFixture,
  WORKLOAD_PUBLIC_KEY,
  workloadJwt,
} from "./helpers/oauth-fixture.ts";
import { serverDef, tempDir } from "./server-manager-helpers.ts";

/** Signed by a key the authorization server does not trust. */
const strangerKey = generateKeyPairSync("ec", { namedCurve: "P-256" });

/** The identity provider's ID tokens expire within the adapter's margin: every use of a stored one renews it. */
let company: OAuthFixture;
/** DPoP, with nonces at the token endpoint and at /mcp. */
let dpopServer: OAuthFixture;
let logDir: { path: string; remove: () => void };
/** What every failure said, and the secrets the cases made themselves: the last test looks for secrets there. */
const errors: string[] = [];
const secretsMade: string[] = ["s3cret"];

beforeAll(async () => {
  [company, dpopServer] = await Promise.all([
    startOAuthFixture({ ...REGISTERED_CLIENT, FIXTURE_WIF_PUBLIC_KEY: WORKLOAD_PUBLIC_KEY, FIXTURE_ID_TOKEN_TTL: "30" }),
    startOAuthFixture({ FIXTURE_DPOP: "1", FIXTURE_DPOP_NONCE: "1" }),
  ]);
  logDir = tempDir();
  openDebugLog(logDir.path, { MCP_DEBUG: "1" });
});
afterAll(async () => {
  openDebugLog(logDir.path, {});
  logDir.remove();
  await Promise.all([company.stop(), dpopServer.stop()]);
});

let dir: { path: string; remove: () => void };
let manager: McpServerManager;
beforeEach(() => {
  dir = tempDir();
  manager = newManager();
});
afterEach(async () => {
  await manager.closeAll();
  dir.remove();
});

function newManager(): McpServerManager {
  return new McpServerManager({ agentDir: dir.path, resolveNpx: false });
}

const headless = { openAuthorizationUrl: (url: string) => void openInBrowser(url, { BROWSER: HEADLESS_BROWSER }) };

async function failure(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.then(
    () => {
      throw new Error("expected a failure");
    },
    (caught: Error) => caught,
  );
  errors.push(error.message);
  return error;
}

async function eventsSince(fixture: OAuthFixture, before: number) {
  return (await fixture.events()).slice(before);
}

async function echo(name: string, text: string): Promise<unknown> {
  return (await manager.callTool(name, "echo", { text })).content;
}

/** A workload's JWT for the company's authorization server (kept for the last test). */
async function workloadToken(key?: KeyObject): Promise<string> {
  const jwt = await workloadJwt(company, key);
  secretsMade.push(jwt);
  return jwt;
}

function companyServer(name: string, oauth: OAuthSettings, extra: Partial<ServerDefinition> = {}): ServerDefinition {
  return serverDef(name, { url: company.mcpUrl, oauth, ...extra });
}

const identityProvider = () => ({ issuer: company.url("/idp"), clientId: IDP_CLIENT_ID });
/** The adapter's client at the company's authorization server (the fixture's pre-registered one). */
const enterpriseClient = () => ({ clientId: "registered", clientSecret: "s3cret", authorizationServer: company.url("") });

describe("workload identity federation (SEP-1933)", () => {
  it("the token file's JWT is the JWT-bearer grant, read anew for each token; one refused is not sent again", async () => {
    const tokenFile = join(dir.path, "token.jwt");
    writeFileSync(tokenFile, `${await workloadToken()}\n`);
    const def = companyServer("ci", { workloadTokenFile: tokenFile, authorizationServer: company.url(""), clientId: "ci-workload" });
    const before = (await company.events()).length;
    await manager.connect(def);
    expect(await echo("ci", "from the workload")).toEqual([{ type: "text", text: "from the workload" }]);
    expect((await eventsSince(company, before)).filter((event) => event.event === "jwt-bearer")).toEqual([
      { event: "jwt-bearer", assertion: "workload", client_id: "ci-workload" },
    ]);
    expect(manager.isSignedIn(def)).toBe(false);
    expect(await failure(manager.signIn(def, headless))).toHaveProperty(
      "message",
      'MCP server "ci" gets its tokens with its workload token: nobody signs in',
    );

    // The platform rotated the file, with a JWT the authorization server does not take; the token expired meanwhile.
    writeFileSync(tokenFile, await workloadToken(strangerKey.privateKey));
    await company.expireTokens();
    const rotated = (await company.events()).length;
    const error = await failure(manager.callTool("ci", "echo", { text: "again" }));
    expect(error.message).toContain(
      'MCP server "ci": the authorization server refused the workload token (invalid_grant); it is not sent again until a reconnect',
    );
    expect((await eventsSince(company, rotated)).filter((event) => event.event === "jwt-bearer")).toEqual([
      { event: "jwt-bearer", assertion: "refused", client_id: "ci-workload" },
    ]);
  });

  it("the JWT a !command prints, without a client id; a token file that cannot be read is named, not shown", async () => {
    const tokenFile = join(dir.path, "token.jwt");
    writeFileSync(tokenFile, await workloadToken());
    const fromCommand = companyServer(
      "command",
      { workloadToken: `!cat '${tokenFile}'`, authorizationServer: company.url("") },
      { commandValues: ["oauth.workloadToken"] },
    );
    const before = (await company.events()).length;
    await manager.connect(fromCommand);
    expect((await eventsSince(company, before)).filter((event) => event.event === "jwt-bearer")).toEqual([
      { event: "jwt-bearer", assertion: "workload" },
    ]);

    const missing = join(dir.path, "no-such-token.jwt");
    const error = await failure(
      manager.connect(companyServer("missing", { workloadTokenFile: missing, authorizationServer: company.url("") })),
    );
    expect(error.message).toBe(
      `MCP server "missing" failed to connect: MCP server "missing": "oauth.workloadTokenFile" (${missing}) could not be read (ENOENT)`,
    );
  });
});

describe("the credentials go to the configured authorization server only", () => {
  it("a server whose metadata names another one gets neither the workload's JWT nor an exchange of the ID token", async () => {
    const tokenFile = join(dir.path, "token.jwt");
    writeFileSync(tokenFile, await workloadToken());
    const elsewhere = "https://auth.elsewhere.example";
    const before = (await company.events()).length;
    const workload = await failure(manager.connect(companyServer("ci", { workloadTokenFile: tokenFile, authorizationServer: elsewhere })));
    const idToken = await company.idToken();
    const enterprise = await failure(
      manager.connect(
        companyServer("docs", {
          ...enterpriseClient(),
          authorizationServer: elsewhere,
          identityProvider: { ...identityProvider(), idToken },
        }),
      ),
    );
    for (const error of [workload, enterprise]) expect(error.message).toContain(elsewhere);
    const sent = (await eventsSince(company, before)).map((event) => event.event);
    expect(sent.filter((event) => event === "token" || event === "jwt-bearer" || event.startsWith("idp-"))).toEqual([]);
  });
});

describe("enterprise-managed authorization (SEP-990)", () => {
  it("the ID token in the config is exchanged at the identity provider for an ID-JAG, which the authorization server takes from the configured client", async () => {
    const idToken = await company.idToken();
    const def = companyServer("docs", { ...enterpriseClient(), identityProvider: { ...identityProvider(), idToken } });
    const before = (await company.events()).length;
    expect((await manager.connect(def)).tools.map((tool) => tool.name)).toEqual(["echo", "write_note"]);
    const events = await eventsSince(company, before);
    expect(events.filter((event) => event.event !== "mcp")).toEqual([
      { event: "idp-token", grant_type: "urn:ietf:params:oauth:grant-type:token-exchange", client_id: IDP_CLIENT_ID },
      { event: "idp-exchange", ok: true, audience: company.url(""), resource: company.mcpUrl },
      { event: "token", grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer", resource: company.mcpUrl, client_secret: "right" },
      { event: "jwt-bearer", assertion: "id-jag", client_id: "registered" },
    ]);
    expect(await failure(manager.signIn(def, headless))).toHaveProperty(
      "message",
      'MCP server "docs" gets its tokens with the ID token in its config: nobody signs in',
    );

    secretsMade.push(idToken, "not-an-id-token");
    const refused = companyServer("refused", {
      ...enterpriseClient(),
      identityProvider: { ...identityProvider(), idToken: "not-an-id-token" },
    });
    expect((await failure(manager.connect(refused))).message).toBe(
      `MCP server "refused" failed to connect: MCP server "refused": the identity provider ${company.url("/idp")} gave no authorization grant: ` +
        "Token exchange failed: invalid_grant - not an ID token of ours",
    );
  });

  it("without one, the user signs in at the identity provider once for every server naming it; an expired ID token is renewed; sign-out forgets it", async () => {
    const docs = companyServer("docs", { ...enterpriseClient(), identityProvider: identityProvider() });
    const wiki = companyServer(
      "wiki",
      { ...enterpriseClient(), identityProvider: identityProvider() },
      { url: `${company.mcpUrl}?space=wiki` },
    );
    const needed = await failure(manager.connect(docs));
    expect(needed).toBeInstanceOf(NeedsAuthError);
    expect(needed.message).toBe(
      `MCP server "docs" needs a sign-in at its identity provider (${company.url("/idp")}): the user has to run /mcp-auth docs (the assistant cannot do it).`,
    );

    const before = (await company.events()).length;
    await manager.signIn(docs, headless);
    expect(await eventsSince(company, before)).toEqual([
      { event: "idp-authorize", scope: "openid offline_access" },
      { event: "idp-token", grant_type: "authorization_code", client_id: IDP_CLIENT_ID },
    ]);
    expect(manager.isSignedIn(wiki)).toBe(true);

    // The ID token lives 30 s, less than the margin: each connect renews it first.
    const connected = (await company.events()).length;
    await manager.connect(docs);
    await manager.connect(wiki);
    const grants = (await eventsSince(company, connected)).filter((event) => event.event === "idp-token").map((event) => event.grant_type);
    expect(grants).toEqual([
      "refresh_token",
      "urn:ietf:params:oauth:grant-type:token-exchange",
      "refresh_token",
      "urn:ietf:params:oauth:grant-type:token-exchange",
    ]);
    expect(await echo("wiki", "one sign-in")).toEqual([{ type: "text", text: "one sign-in" }]);

    expect(await manager.signOut(wiki)).toBe(true);
    expect(manager.isSignedIn(docs)).toBe(false);
  });
});

describe("DPoP (SEP-1932)", () => {
  function storedRecord(): { tokens: { token_type: string }; dpopKey: { alg: string; jwk: Record<string, string> } } {
    const oauthDir = join(dir.path, OAUTH_DIR_NAME);
    const [file] = readdirSync(oauthDir);
    expect(statSync(join(oauthDir, file!)).mode & 0o777).toBe(0o600);
    return JSON.parse(readFileSync(join(oauthDir, file!), "utf8"));
  }

  it("a server whose 401 asks for DPoP gets tokens bound to a key kept with them, proven on every request (nonces too), after a restart and a refresh", async () => {
    const def = serverDef("bound", { url: dpopServer.mcpUrl });
    await failure(manager.connect(def));
    const before = (await dpopServer.events()).length;
    await manager.signIn(def, headless);
    const token = (await eventsSince(dpopServer, before)).filter((event) => event.event === "token");
    // The first proof had no nonce: the authorization server asked for one (RFC 9449 §8), and took the second.
    expect(token.map((event) => event.jkt)).toEqual([undefined, expect.any(String)]);
    const jkt = token[1]!.jkt;
    const stored = storedRecord();
    expect(stored.tokens.token_type).toBe("DPoP");
    expect(stored.dpopKey).toMatchObject({ alg: "ES256", jwk: { kty: "EC", crv: "P-256", d: expect.any(String) } });
    secretsMade.push(stored.dpopKey.jwk.d!);

    const requests = (await dpopServer.events()).length;
    await manager.connect(def);
    expect(await echo("bound", "proven")).toEqual([{ type: "text", text: "proven" }]);
    const [first, ...rest] = (await eventsSince(dpopServer, requests)).filter((event) => event.event === "mcp");
    // The server's nonce asked for once (RFC 9449 §9), then every request proven with the key.
    expect(first).toEqual({ event: "mcp", token: "nonce", scheme: "DPoP" });
    expect(rest.length).toBeGreaterThan(1);
    for (const event of rest) expect(event).toEqual({ event: "mcp", token: "valid", scheme: "DPoP", jkt });

    // A new session: the key comes from the store; then the tokens expire and the refresh proves the same key.
    await manager.closeAll();
    manager = newManager();
    await dpopServer.expireTokens();
    const restarted = (await dpopServer.events()).length;
    await manager.connect(def);
    expect(await echo("bound", "after a restart")).toEqual([{ type: "text", text: "after a restart" }]);
    const refreshed = await eventsSince(dpopServer, restarted);
    expect(refreshed.filter((event) => event.event === "token").map((event) => [event.grant_type, event.jkt])).toEqual([
      // A new session knows no nonce yet.
      ["refresh_token", undefined],
      ["refresh_token", jkt],
    ]);
    expect(refreshed.filter((event) => event.event === "mcp").at(-1)).toMatchObject({ token: "valid", scheme: "DPoP", jkt });
  });

  it('"dpop": true refuses tokens the authorization server did not bind to the key', async () => {
    const def = serverDef("strict", { url: company.mcpUrl, oauth: { dpop: true } });
    const error = await failure(manager.signIn(def, headless));
    expect(error.message).toBe(
      'The sign-in to MCP server "strict" failed: the authorization server issued a Bearer token, not one bound to a DPoP key ("oauth.dpop" is true)',
    );
    expect(
      readdirSync(join(dir.path, OAUTH_DIR_NAME)).map(
        (file) => JSON.parse(readFileSync(join(dir.path, OAUTH_DIR_NAME, file), "utf8")).tokens,
      ),
    ).toEqual([undefined]);
  });
});

describe("a 401 without a sign-in configured", () => {
  let plain: Server;
  afterEach(() => plain?.close());

  it("signs in with OAuth when the server publishes its metadata, even with no metadata address in its challenge", async () => {
    const quiet = await startOAuthFixture({ FIXTURE_CHALLENGE_METADATA: "0" });
    try {
      const error = await failure(manager.connect(serverDef("quiet", { url: quiet.mcpUrl })));
      expect(error).toBeInstanceOf(NeedsAuthError);
      expect(error.message).toBe(
        'MCP server "quiet" needs a sign-in (OAuth): the user has to run /mcp-auth quiet (the assistant cannot do it).',
      );
    } finally {
      await quiet.stop();
    }
  });

  it("asks for a token when the server publishes no OAuth metadata", async () => {
    plain = createServer((_req, res) => res.writeHead(401, { "www-authenticate": 'Bearer realm="plain"' }).end());
    await new Promise<void>((resolve) => plain.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(plain.address() as AddressInfo).port}/mcp`;
    const error = await failure(manager.connect(serverDef("plain", { url })));
    expect(error).toBeInstanceOf(NeedsAuthError);
    expect((error as NeedsAuthError).signIn).toBe(false);
    expect(error.message).toBe(
      `MCP server "plain" needs authentication: ${url} answered 401 Unauthorized and publishes no OAuth metadata. Give it a token in ` +
        `its config ("bearerToken", "bearerTokenEnv" or an "Authorization" header); if it signs in with OAuth all the same, set ` +
        `"auth": "oauth" in its config and run /mcp-auth plain.`,
    );
  });
});

describe("secrets", () => {
  it("no ID token, ID-JAG, workload JWT, DPoP private key or access token of the cases above is in the debug log or an error", async () => {
    // What the connection layer wrote itself (the session's failed connects: test/enterprise-auth.e2e.test.ts).
    const logFile = join(logDir.path, DEBUG_LOG_FILE);
    const log = existsSync(logFile) ? readFileSync(logFile, "utf8") : "";
    expect(errors.length).toBeGreaterThan(5);
    const secrets = [...(await company.issued()), ...(await dpopServer.issued()), ...secretsMade];
    expect(secrets.length).toBeGreaterThan(10);
    const seen = `${log}\n${errors.join("\n")}`;
    for (const secret of secrets) expect(seen).not.toContain(secret);
  });
});

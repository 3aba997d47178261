/** The OAuth fixture server (test/fixtures/servers/oauth-server.mjs) in a child process, and a browser for it. */
import { generateKeyPairSync, type KeyObject } from "node:crypto";
import { join } from "node:path";
import { SignJWT } from "jose";
import { startFixtureProcess } from "./fixture-process.ts";
import { REPO_ROOT } from "./hosts.ts";

/** `$BROWSER` for sign-ins without a user: follows the authorization URL's redirect to the callback. */
export const HEADLESS_BROWSER = `${process.execPath} ${join(REPO_ROOT, "conformance", "headless-browser.mjs")}`;

/** Fixture env: a client registered beforehand, `registered`, whose secret is `s3cret`. */
export const REGISTERED_CLIENT = { FIXTURE_CLIENT_ID: "registered", FIXTURE_CLIENT_SECRET: "s3cret" };
/** The identity provider of the fixture (its issuer is `<base>/idp`) knows the adapter as this client. */
export const IDP_CLIENT_ID = "pi-at-idp";

/** Fixture env: the resource metadata names an authorization server that does not exist; the real one's is here. */
export const WRONG_AUTH_SERVER = { FIXTURE_ADVERTISED_AS: "http://127.0.0.1:9", FIXTURE_AS_METADATA_PATH: "/tenant/metadata" };

/**
 * A workload's key, as a CI platform holds it: the fixture trusts the JWTs it signs when started with
 * `{ FIXTURE_WIF_PUBLIC_KEY: WORKLOAD_PUBLIC_KEY }`.
 */
export const WORKLOAD_KEY = generateKeyPairSync("ec", { namedCurve: "P-256" });
export const WORKLOAD_PUBLIC_KEY = WORKLOAD_KEY.publicKey.export({ type: "spki", format: "pem" }).toString();

/** A workload's JWT for the fixture's authorization server, as a CI platform would issue it (signed by `key`). */
export function workloadJwt(fixture: OAuthFixture, key: KeyObject = WORKLOAD_KEY.privateKey): Promise<string> {
  return new SignJWT({})
    .setProtectedHeader({ alg: "ES256" })
    .setIssuer("https://ci.example.com")
    .setSubject("repo:acme/tools:ref:refs/heads/main")
    .setAudience(fixture.url(""))
    .setIssuedAt()
    .setExpirationTime("5m")
    .setJti(crypto.randomUUID())
    .sign(key);
}

export interface OAuthEvent {
  event: "mcp" | "register" | "authorize" | "token" | "jwt-bearer" | "idp-authorize" | "idp-token" | "idp-exchange";
  /** `unproven`: a DPoP-bound token without the scheme or a proof of its key; `nonce`: its proof lacks the server's nonce. */
  token?: "none" | "valid" | "expired" | "unknown" | "unproven" | "nonce";
  grant_type?: string;
  grant_types?: string[];
  redirect_uris?: string[];
  application_type?: string;
  scope?: string;
  resource?: string;
  code_challenge_method?: string;
  has_state?: boolean;
  /** On a token request of the pre-registered client (FIXTURE_CLIENT_ID): the secret it sent. */
  client_secret?: "right" | "wrong" | "none";
  /** How a request to /mcp presented its token. */
  scheme?: "Bearer" | "DPoP";
  /** The thumbprint of the key a DPoP proof was signed with (token endpoint, /mcp). */
  jkt?: string;
  /** A JWT-bearer grant's assertion: what it was, or refused. */
  assertion?: "id-jag" | "workload" | "refused";
  client_id?: string;
  /** A token exchange at the identity provider: whether it took the ID token, and for what. */
  ok?: boolean;
  audience?: string;
}

export interface OAuthFixture {
  /** The MCP endpoint. */
  mcpUrl: string;
  url(path: string): string;
  events(): Promise<OAuthEvent[]>;
  /** Every access token expires (refresh tokens stay good). */
  expireTokens(): Promise<void>;
  /** Every token, refresh tokens too, is forgotten. */
  revokeTokens(): Promise<void>;
  /** Every token it handed out: access and refresh tokens, ID tokens, ID-JAGs. */
  issued(): Promise<string[]>;
  /** A fresh ID token of its identity provider (/idp) for the user. */
  idToken(): Promise<string>;
  stop(): Promise<void>;
}

export async function startOAuthFixture(env: Record<string, string> = {}): Promise<OAuthFixture> {
  const { base, stop } = await startFixtureProcess(join(REPO_ROOT, "test/fixtures/servers/oauth-server.mjs"), "OAuth fixture", env);
  const post = async (path: string) => void (await fetch(`${base}${path}`, { method: "POST" })).body?.cancel();
  return {
    mcpUrl: `${base}/mcp`,
    url: (path) => `${base}${path}`,
    events: async () => (await (await fetch(`${base}/__log`)).json()) as OAuthEvent[],
    expireTokens: () => post("/__expire"),
    revokeTokens: () => post("/__revoke"),
    issued: async () => (await (await fetch(`${base}/__issued`)).json()) as string[],
    idToken: async () => ((await (await fetch(`${base}/__id_token`)).json()) as { id_token: string }).id_token,
    stop,
  };
}

/** The OAuth fixture server (test/fixtures/servers/oauth-server.mjs) in a child process, and a browser for it. */
import { join } from "node:path";
import { startFixtureProcess } from "./fixture-process.ts";
import { REPO_ROOT } from "./hosts.ts";

/** `$BROWSER` for sign-ins without a user: follows the authorization URL's redirect to the callback. */
export const HEADLESS_BROWSER = `${process.execPath} ${join(REPO_ROOT, "conformance", "headless-browser.mjs")}`;

/** Fixture env: a client registered beforehand, `registered`, whose secret is `s3cret`. */
export const REGISTERED_CLIENT = { FIXTURE_CLIENT_ID: "registered", FIXTURE_CLIENT_SECRET: "s3cret" };
/** Fixture env: the resource metadata names an authorization server that does not exist; the real one's is here. */
export const WRONG_AUTH_SERVER = { FIXTURE_ADVERTISED_AS: "http://127.0.0.1:9", FIXTURE_AS_METADATA_PATH: "/tenant/metadata" };

export interface OAuthEvent {
  event: "mcp" | "register" | "authorize" | "token";
  token?: "none" | "valid" | "expired" | "unknown";
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
    stop,
  };
}

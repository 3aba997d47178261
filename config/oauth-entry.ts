/**
 * A server's `oauth` object (config/entry.ts checks the rest of the entry): our fields, and Pi 1.x's built-in MCP
 * spellings read into them or, where the adapter cannot honour one, said in a warning naming it.
 */
import {
  boolean,
  httpUrl,
  loopbackCallbackUrl,
  nonEmptyString,
  oneOf,
  plainObject,
  port,
  secureHttpUrl,
  string,
  clientMetadataUrl,
  type Check,
} from "./checks.ts";
import { configProblem, type ProblemLocation } from "./problems.ts";
import type { ConfigProblem, IdentityProviderSettings, OAuthClientRegistration, OAuthGrantType, OAuthSettings } from "../types.ts";

type Locator = (field: string) => ProblemLocation;

const OAUTH_GRANT_TYPES: readonly OAuthGrantType[] = ["authorization_code", "client_credentials"];
const CLIENT_REGISTRATIONS: readonly OAuthClientRegistration[] = ["auto", "dcr", "cimd"];
/** JWS algorithms for private_key_jwt (RFC 7518, RFC 8037). */
const SIGNING_ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"] as const;

export const OAUTH_CHECKS = {
  clientId: nonEmptyString,
  clientSecret: string,
  scope: nonEmptyString,
  redirectPort: port,
  clientMetadataUrl,
  grantType: oneOf(OAUTH_GRANT_TYPES),
  authorizationServer: httpUrl,
  privateKey: nonEmptyString,
  signingAlgorithm: oneOf(SIGNING_ALGORITHMS),
  clientName: nonEmptyString,
  clientRegistration: oneOf(CLIENT_REGISTRATIONS),
  authServerMetadataUrl: secureHttpUrl,
  dpop: boolean,
  workloadToken: nonEmptyString,
  workloadTokenFile: nonEmptyString,
  // Its fields: IDENTITY_PROVIDER_CHECKS (config/entry.ts checks them with the rest).
  identityProvider: plainObject,
  // Pi 1.x's spellings, read into ours by `builtinOAuthFields`.
  callbackPort: port,
  callbackUrl: loopbackCallbackUrl,
} satisfies Record<string, Check<unknown>>;

/** The fields of `oauth.identityProvider`. */
export const IDENTITY_PROVIDER_CHECKS = {
  issuer: secureHttpUrl,
  tokenEndpoint: secureHttpUrl,
  clientId: nonEmptyString,
  clientSecret: string,
  idToken: nonEmptyString,
} satisfies Record<string, Check<unknown>>;

/**
 * How the server's tokens are got: a sign-in in the browser (`authorization_code`), or without a user, from the
 * client's own credentials, a workload's JWT (SEP-1933) or the user's ID token at the company's identity provider
 * (SEP-990). Each of the last three sends its credential to `authorizationServer` only.
 */
type Grant = "authorization_code" | "client_credentials" | "workload identity" | "identity provider";

/** The fields only some grants use, and which. */
const GRANT_FIELDS: Readonly<Partial<Record<keyof SettlingOAuth, readonly Grant[]>>> = {
  authorizationServer: ["client_credentials", "workload identity", "identity provider"],
  privateKey: ["client_credentials"],
  signingAlgorithm: ["client_credentials"],
  clientSecret: ["authorization_code", "client_credentials", "identity provider"],
  authServerMetadataUrl: ["authorization_code"],
  dpop: ["authorization_code"],
  // With an identity provider the scope is the server's (its challenge, its metadata), as the SDK's provider asks it.
  scope: ["authorization_code", "client_credentials", "workload identity"],
};

const GRANT_NAMES: Readonly<Record<Grant, string>> = {
  authorization_code: "a sign-in",
  client_credentials: `"grantType": "client_credentials"`,
  "workload identity": `a workload token ("workloadToken", "workloadTokenFile")`,
  "identity provider": `an identity provider ("identityProvider")`,
};

/** The `oauth` object once each field passed `OAUTH_CHECKS`: checked as a whole; null when it has an error. */
export function settleOAuth(checked: CheckedOAuth, at: Locator, problems: ConfigProblem[]): OAuthSettings | null {
  const oauth = builtinOAuthFields(checked, at, problems);
  if (!oauth) return null;
  const grant = grantOf(oauth, at, problems);
  if (!grant) return null;
  for (const [key, grants] of Object.entries(GRANT_FIELDS) as [keyof SettlingOAuth, readonly Grant[]][]) {
    if (oauth[key] === undefined || grants.includes(grant)) continue;
    const usedBy = listed(grants.map((name) => GRANT_NAMES[name]));
    const hint =
      key === "authServerMetadataUrl" ? `; with ${GRANT_NAMES[grant]} the authorization server is "oauth.authorizationServer"` : "";
    problems.push(configProblem("warning", at(`oauth.${key}`), `only applies to ${usedBy}${hint}; ignored`));
    delete oauth[key];
  }
  if (oauth.clientSecret !== undefined && oauth.clientId === undefined) {
    problems.push(configProblem("error", at("oauth.clientSecret"), `needs "oauth.clientId" (a secret belongs to a pre-registered client)`));
    return null;
  }
  const missing = missingFields(grant, oauth);
  if (missing) {
    const field = grant === "client_credentials" ? "grantType" : grant === "workload identity" ? workloadField(oauth) : "identityProvider";
    problems.push(configProblem("error", at(`oauth.${field}`), missing));
    return null;
  }
  // An identity provider has its issuer and client: `missingFields` said so.
  return oauth as OAuthSettings;
}

/** The grant the fields name; null (an error said) when they name more than one. */
function grantOf(oauth: SettlingOAuth, at: Locator, problems: ConfigProblem[]): Grant | null {
  const named: Grant[] = [];
  if (oauth.grantType === "client_credentials") named.push("client_credentials");
  if (oauth.workloadToken !== undefined || oauth.workloadTokenFile !== undefined) named.push("workload identity");
  if (oauth.identityProvider !== undefined) named.push("identity provider");
  if (named.length <= 1) return named[0] ?? "authorization_code";
  const message = `${named.map((grant) => GRANT_NAMES[grant]).join(" and ")} are different ways to get a token: keep one`;
  problems.push(configProblem("error", at("oauth"), message));
  return null;
}

/** `a`, `a or b`, `a, b, or c`. */
function listed(items: string[]): string {
  return items.length < 3 ? items.join(" or ") : `${items.slice(0, -1).join(", ")}, or ${items.at(-1)}`;
}

function workloadField(oauth: SettlingOAuth): string {
  return oauth.workloadToken !== undefined ? "workloadToken" : "workloadTokenFile";
}

/** What a grant without a user lacks (its credentials go to `authorizationServer` only), or nothing. */
function missingFields(grant: Grant, oauth: SettlingOAuth): string | undefined {
  const issuer = `"oauth.authorizationServer" (the issuer the credentials are for: they are sent nowhere else)`;
  if (grant === "client_credentials") {
    const proofs = [oauth.clientSecret, oauth.privateKey].filter((proof) => proof !== undefined).length;
    if (oauth.clientId !== undefined && proofs === 1 && oauth.authorizationServer !== undefined) return undefined;
    const clientIssuer = `"oauth.authorizationServer" (the issuer the client belongs to: its credentials are sent nowhere else)`;
    return `"client_credentials" needs "oauth.clientId", one of "oauth.clientSecret" and "oauth.privateKey", and ${clientIssuer}`;
  }
  if (grant === "workload identity") {
    if (oauth.workloadToken !== undefined && oauth.workloadTokenFile !== undefined)
      return `needs one of "oauth.workloadToken" and "oauth.workloadTokenFile", not both`;
    return oauth.authorizationServer === undefined ? `needs ${issuer}` : undefined;
  }
  if (grant === "identity provider") {
    const { issuer: idpIssuer, clientId } = oauth.identityProvider ?? {};
    if (idpIssuer === undefined || clientId === undefined)
      return `needs "issuer" (the identity provider's issuer URL) and "clientId" (the adapter's client there)`;
    if (oauth.clientId !== undefined && oauth.clientSecret !== undefined && oauth.authorizationServer !== undefined) return undefined;
    return `needs "oauth.clientId" and "oauth.clientSecret" (the client at the MCP server's authorization server), and ${issuer}`;
  }
  return undefined;
}

/**
 * The `oauth` object as its fields' checks leave it: with the fields of Pi 1.x's built-in MCP that we read into ours
 * (or say we cannot honour), and an identity provider whose required fields may be missing.
 */
export type CheckedOAuth = SettlingOAuth & BuiltinOAuthFields;

/** Our fields, not yet checked as a whole. */
type SettlingOAuth = Omit<OAuthSettings, "identityProvider"> & { identityProvider?: Partial<IdentityProviderSettings> };

interface BuiltinOAuthFields {
  callbackPort?: number;
  callbackUrl?: URL;
}

/**
 * Pi's `callbackPort` and the port of its `callbackUrl` are our `redirectPort`; our callback is always
 * `http://127.0.0.1:<port>/callback`, so another host or path in `callbackUrl` is said, not silently changed. Its
 * `clientRegistration: "cimd"` uses a document Pi publishes for itself: we can only use one the user names. Null on
 * an error.
 */
function builtinOAuthFields(fields: CheckedOAuth, at: Locator, problems: ConfigProblem[]): SettlingOAuth | null {
  const { callbackPort, callbackUrl, ...oauth } = fields;
  const ports = [oauth.redirectPort, callbackPort, callbackUrl?.port ? Number(callbackUrl.port) : undefined].filter((p) => p !== undefined);
  if (new Set(ports).size > 1) {
    problems.push(
      configProblem("error", at("oauth.callbackPort"), `"redirectPort", "callbackPort" and "callbackUrl" name different ports`),
    );
    return null;
  }
  if (ports.length > 0) oauth.redirectPort = ports[0];
  if (callbackUrl && (callbackUrl.hostname !== "127.0.0.1" || callbackUrl.pathname !== "/callback")) {
    const message = `only its port is used: the adapter's sign-in callback is always http://127.0.0.1:<port>/callback (register that redirect URI)`;
    problems.push(configProblem("warning", at("oauth.callbackUrl"), message));
  }
  if (oauth.clientRegistration === "cimd" && oauth.clientMetadataUrl === undefined) {
    const message = `needs "oauth.clientMetadataUrl" here (the adapter publishes no Client ID Metadata Document of its own); the client is registered dynamically instead`;
    problems.push(configProblem("warning", at("oauth.clientRegistration"), message));
  }
  if (oauth.clientRegistration === "dcr" && oauth.clientMetadataUrl !== undefined) {
    problems.push(configProblem("warning", at("oauth.clientMetadataUrl"), `ignored: "clientRegistration" is "dcr" (always register)`));
    delete oauth.clientMetadataUrl;
  }
  return oauth;
}

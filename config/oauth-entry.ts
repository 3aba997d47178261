/**
 * A server's `oauth` object (config/entry.ts checks the rest of the entry): our fields, and Pi 1.x's built-in MCP
 * spellings read into them or, where the adapter cannot honour one, said in a warning naming it.
 */
import {
  httpUrl,
  loopbackCallbackUrl,
  nonEmptyString,
  oneOf,
  port,
  secureHttpUrl,
  string,
  clientMetadataUrl,
  type Check,
} from "./checks.ts";
import { configProblem, type ProblemLocation } from "./problems.ts";
import type { ConfigProblem, OAuthClientRegistration, OAuthGrantType, OAuthSettings } from "../types.ts";

type Locator = (field: string) => ProblemLocation;

const OAUTH_GRANT_TYPES: readonly OAuthGrantType[] = ["authorization_code", "client_credentials"];
const CLIENT_REGISTRATIONS: readonly OAuthClientRegistration[] = ["auto", "dcr", "cimd"];
/** JWS algorithms for private_key_jwt (RFC 7518, RFC 8037). */
const SIGNING_ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"] as const;
/** Fields of the `oauth` object that only the client_credentials grant uses. */
const CLIENT_CREDENTIALS_ONLY = ["authorizationServer", "privateKey", "signingAlgorithm"] as const;

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
  // Pi 1.x's spellings, read into ours by `builtinOAuthFields`.
  callbackPort: port,
  callbackUrl: loopbackCallbackUrl,
} satisfies Record<string, Check<unknown>>;

/** The `oauth` object once each field passed `OAUTH_CHECKS`: checked as a whole; null when it has an error. */
export function settleOAuth(checked: CheckedOAuth, at: Locator, problems: ConfigProblem[]): OAuthSettings | null {
  const oauth = builtinOAuthFields(checked, at, problems);
  if (!oauth) return null;
  if (oauth.clientSecret !== undefined && oauth.clientId === undefined) {
    problems.push(configProblem("error", at("oauth.clientSecret"), `needs "oauth.clientId" (a secret belongs to a pre-registered client)`));
    return null;
  }
  if (oauth.grantType !== "client_credentials") {
    for (const key of CLIENT_CREDENTIALS_ONLY) {
      if (oauth[key] === undefined) continue;
      problems.push(configProblem("warning", at(`oauth.${key}`), `only applies to "grantType": "client_credentials"; ignored`));
      delete oauth[key];
    }
    return oauth;
  }
  // A sign-in's field: the client credentials' issuer is `authorizationServer`.
  if (oauth.authServerMetadataUrl !== undefined) {
    const message = `only applies to a sign-in; with "client_credentials" the authorization server is "oauth.authorizationServer"; ignored`;
    problems.push(configProblem("warning", at("oauth.authServerMetadataUrl"), message));
    delete oauth.authServerMetadataUrl;
  }
  const proofs = [oauth.clientSecret, oauth.privateKey].filter((proof) => proof !== undefined).length;
  if (oauth.clientId === undefined || proofs !== 1 || oauth.authorizationServer === undefined) {
    const needs = `needs "oauth.clientId", one of "oauth.clientSecret" and "oauth.privateKey", and "oauth.authorizationServer" (the issuer the client belongs to: its credentials are sent nowhere else)`;
    problems.push(configProblem("error", at("oauth.grantType"), `"client_credentials" ${needs}`));
    return null;
  }
  return oauth;
}

/** The `oauth` fields of Pi 1.x's built-in MCP that we read into ours, or say we cannot honour. */
export type CheckedOAuth = OAuthSettings & BuiltinOAuthFields;

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
function builtinOAuthFields(fields: OAuthSettings & BuiltinOAuthFields, at: Locator, problems: ConfigProblem[]): OAuthSettings | null {
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

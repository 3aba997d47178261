/**
 * What a server definition says about signing in: whether its config gives it credentials, whether it can sign in
 * with OAuth, and the errors that tell the user to.
 */
import type { ServerDefinition } from "../types.ts";
import { safeUrl } from "../util/http-text.ts";
import { NeedsAuthError } from "./session.ts";

/** A sign-in is needed: `/mcp-auth` is a command of the user's, which the model cannot run. */
export function signInNeeded(serverName: string, why: string): NeedsAuthError {
  return new NeedsAuthError(
    serverName,
    `MCP server "${serverName}" ${why}: the user has to run /mcp-auth ${serverName} (the assistant cannot do it).`,
    true,
  );
}

/** An OAuth error response (RFC 6749 §5.2), as the user reads it. */
export function authorizationServerAnswer(code: string, description?: string): string {
  return `the authorization server answered "${code}"${description ? `: ${description}` : ""}`;
}

/**
 * How a server gets its OAuth tokens when nobody signs in, in words, with the config fields that decide it; none when
 * a user signs in in the browser (at the server's authorization server or the company's identity provider).
 */
export function tokensWithoutSignIn(def: ServerDefinition): { how: string; fields: string } | undefined {
  const oauth = def.oauth;
  if (oauth?.grantType === "client_credentials")
    return { how: "its client credentials", fields: `"oauth.clientId", "oauth.clientSecret" or "oauth.privateKey", and "oauth.scope"` };
  const workload = workloadTokenField(oauth);
  if (workload) return { how: "its workload token", fields: `"${workload}", "oauth.authorizationServer" and "oauth.scope"` };
  if (oauth?.identityProvider?.idToken !== undefined)
    return { how: "the ID token in its config", fields: `"oauth.identityProvider" and "oauth.clientId"` };
  return undefined;
}

/** The config field a workload's own token comes from (the token wins over the file), if any. */
function workloadTokenField(oauth: ServerDefinition["oauth"]): "oauth.workloadToken" | "oauth.workloadTokenFile" | undefined {
  if (oauth?.workloadToken !== undefined) return "oauth.workloadToken";
  return oauth?.workloadTokenFile !== undefined ? "oauth.workloadTokenFile" : undefined;
}

/** A token, or an `Authorization` header, given in the config: the server is not signed in to with OAuth. */
function hasStaticCredentials(def: ServerDefinition): boolean {
  return def.bearerToken !== undefined || def.bearerTokenEnv !== undefined || hasAuthorizationHeader(def);
}

export function hasAuthorizationHeader(def: ServerDefinition): boolean {
  return Object.keys(def.headers ?? {}).some((key) => key.toLowerCase() === "authorization");
}

/** An HTTP server without configured credentials (and not marked `auth: "bearer"`) can be signed in to with OAuth. */
export function canSignIn(def: ServerDefinition): boolean {
  return !!def.url && !def.command && def.auth !== "bearer" && !hasStaticCredentials(def);
}

/**
 * How an HTTP server gets its token, in words for `/mcp status <server>`: the config field that holds it, or the grant
 * and where it is exchanged, or the sign-in; never a value. Undefined for a server with no auth of its own (a stdio
 * server, or an HTTP one that its config gives nothing and that did not ask for a sign-in).
 */
export function describeTokenSource(def: ServerDefinition, signInSeen: boolean): string | undefined {
  if (!def.url || def.command) return undefined;
  if (def.bearerTokenEnv !== undefined) return `a bearer token from $${def.bearerTokenEnv} ("bearerTokenEnv")`;
  if (def.bearerToken !== undefined) return `the bearer token in its config ("bearerToken")`;
  if (hasAuthorizationHeader(def)) return `the "Authorization" header in its config`;
  const oauth = def.oauth;
  const at = oauth?.authorizationServer ? ` at ${safeUrl(oauth.authorizationServer)}` : "";
  const dpop = oauth?.dpop === true ? ", bound to a DPoP key" : oauth?.dpop === false ? ", never DPoP" : "";
  if (oauth?.grantType === "client_credentials")
    return `OAuth client credentials (${oauth.privateKey !== undefined ? "a JWT signed with its private key" : "its client secret"})${at}, no sign-in${dpop}`;
  const workload = workloadTokenField(oauth);
  if (workload) return `workload identity: its own JWT ("${workload}") exchanged${at}, no sign-in${dpop}`;
  const idp = oauth?.identityProvider;
  if (idp) {
    const idToken = idp.idToken !== undefined ? "the ID token in its config" : `your sign-in there (/mcp-auth ${def.name})`;
    return `enterprise sign-in: ${idToken} exchanged at the identity provider ${safeUrl(idp.issuer)} for a grant${at}${dpop}`;
  }
  if (def.auth === "bearer") return `a bearer token ("auth": "bearer"), none in its config`;
  if (def.auth === "oauth" || oauth !== undefined || signInSeen) return `OAuth sign-in (/mcp-auth ${def.name})${dpop}`;
  return undefined;
}

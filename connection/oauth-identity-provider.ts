/**
 * The user's sign-in at the company's identity provider, for enterprise-managed authorization (SEP-990) when the
 * config gives no ID token: `/mcp-auth <server>` runs OpenID Connect's authorization code flow there (PKCE, the
 * loopback callback, the `iss` check), and the ID token it returns is kept in the private store
 * (connection/oauth-store.ts) under the identity provider and the adapter's client there, so every server that names
 * the same identity provider uses the one sign-in. A connection takes that ID token to the identity provider's token
 * exchange (connection/oauth-jwt-grants.ts); an expired one is renewed with the refresh token, when the identity
 * provider gave one, else the user is asked to sign in again.
 *
 * The ID token is not verified here: it comes straight from the identity provider's token endpoint and goes back only
 * to it, which verifies it; nothing here acts on its claims but its expiry.
 */
import {
  type AuthorizationServerMetadata,
  discoverAuthorizationServerMetadata,
  exchangeAuthorization,
  type OAuthTokens,
  refreshAuthorization,
  startAuthorization,
} from "@modelcontextprotocol/client";
import { decodeJwt } from "jose";
import { abortable } from "../util/abort.ts";
import { debugLog, hideInDebugLog } from "../util/debug-log.ts";
import { safeUrl } from "../util/http-text.ts";
import { signInNeeded } from "./auth-checks.ts";
import { CallbackListener, refusal } from "./oauth-callback.ts";
import { oauthSecret } from "./command-values.ts";
import { identityProviderKey, type OAuthStore } from "./oauth-store.ts";
import type { SignedInIdToken } from "./oauth-jwt-grants.ts";
import type { IdentityProviderSettings, ServerDefinition } from "../types.ts";

/** An ID token this close to its expiry is renewed first: the exchange and the grant after it take a moment. */
const EXPIRY_MARGIN_S = 60;
/** What the sign-in asks the identity provider for: who the user is, and a refresh token where it gives one. */
const SIGN_IN_SCOPE = "openid";
const OFFLINE_ACCESS = "offline_access";

export interface IdentityProviderSignIn {
  store: OAuthStore;
  /** Gets the authorization URL: the user's browser must go there. */
  open(url: string): void | Promise<void>;
  onListening?(listener: CallbackListener): void;
  signal: AbortSignal;
}

/** Signs the user in at the server's identity provider in the browser and keeps the ID token it returns. */
export async function signInAtIdentityProvider(def: ServerDefinition, options: IdentityProviderSignIn): Promise<void> {
  const { store, signal } = options;
  const idp = def.oauth!.identityProvider!;
  const listener = await CallbackListener.start(def.oauth?.redirectPort ?? 0);
  try {
    options.onListening?.(listener);
    const metadata = await abortable(identityProviderMetadata(idp), signal);
    const offline = metadata.scopes_supported?.includes(OFFLINE_ACCESS);
    const { authorizationUrl, codeVerifier } = await startAuthorization(idp.issuer, {
      metadata,
      clientInformation: { client_id: idp.clientId },
      redirectUrl: listener.redirectUrl,
      scope: offline ? `${SIGN_IN_SCOPE} ${OFFLINE_ACCESS}` : SIGN_IN_SCOPE,
      state: listener.state,
    });
    signal.throwIfAborted();
    await options.open(authorizationUrl.href);
    const answer = await listener.response(signal);
    if ("error" in answer) throw refusal(answer, metadata);
    // The SDK checks `iss` (RFC 9207) before the code is sent anywhere.
    const tokens = await abortable(
      exchangeAuthorization(idp.issuer, {
        metadata,
        clientInformation: await identityProviderClient(def, signal),
        authorizationCode: answer.code,
        iss: answer.iss,
        codeVerifier,
        redirectUri: listener.redirectUrl,
      }),
      signal,
    );
    await store.update(identityProviderKey(idp), () => ({ tokens: { ...withIdToken(idp, tokens), issuer: metadata.issuer } }));
  } finally {
    await listener.close();
  }
}

/** The ID token of the user's sign-in at a server's identity provider, renewed when it expired. */
export function signedInIdToken(store: OAuthStore): SignedInIdToken {
  return async (def, signal) => {
    const idp = def.oauth!.identityProvider!;
    const key = identityProviderKey(idp);
    const idToken = await store.exclusive(key, async (record, save) => {
      const tokens = record?.tokens;
      if (tokens?.id_token && !expired(tokens.id_token)) return tokens.id_token;
      if (!tokens?.refresh_token) return undefined;
      const metadata = await abortable(identityProviderMetadata(idp), signal);
      // A refusal (the refresh token expired or was revoked) asks for a new sign-in, as no refresh token does.
      const renewed = await abortable(
        refreshAuthorization(idp.issuer, {
          metadata,
          clientInformation: await identityProviderClient(def, signal),
          refreshToken: tokens.refresh_token,
        }),
        signal,
      ).catch((error: unknown) => void debugLog(`MCP server "${def.name}": renewing the ID token failed`, error));
      if (!renewed?.id_token) return undefined;
      await save({ ...record, tokens: { ...renewed, issuer: metadata.issuer } });
      return renewed.id_token;
    });
    if (idToken === undefined) throw signInNeeded(def.name, `needs a sign-in at its identity provider (${safeUrl(idp.issuer)})`);
    hideInDebugLog([idToken]);
    return idToken;
  };
}

/** Its RFC 8414 or OpenID metadata, found from its issuer (the SDK checks the issuer it names is that one). */
async function identityProviderMetadata(idp: IdentityProviderSettings): Promise<AuthorizationServerMetadata> {
  const metadata = await discoverAuthorizationServerMetadata(idp.issuer);
  if (!metadata) throw new Error(`the identity provider ${safeUrl(idp.issuer)} publishes no metadata (OpenID or RFC 8414)`);
  return metadata;
}

/** The adapter's client at the identity provider, with its secret (a `!command` runs) when it has one. */
async function identityProviderClient(def: ServerDefinition, signal: AbortSignal): Promise<{ client_id: string; client_secret?: string }> {
  const secret = await oauthSecret(def, "oauth.identityProvider.clientSecret", signal);
  return { client_id: def.oauth!.identityProvider!.clientId, ...(secret ? { client_secret: secret } : {}) };
}

function withIdToken(idp: IdentityProviderSettings, tokens: OAuthTokens): OAuthTokens {
  if (!tokens.id_token)
    throw new Error(`the identity provider ${safeUrl(idp.issuer)} returned no ID token (is "openid" allowed for its client?)`);
  return tokens;
}

/** Past its `exp`, or about to be; a token whose expiry cannot be read is taken as expired. */
function expired(idToken: string): boolean {
  try {
    const { exp } = decodeJwt(idToken);
    return typeof exp !== "number" || exp - EXPIRY_MARGIN_S <= Date.now() / 1000;
  } catch {
    return true;
  }
}

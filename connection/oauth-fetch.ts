/**
 * What OAuth adds to the fetch of a server's transports (which the SDK also uses for its token requests): a refresh
 * done once across the Pi processes sharing the agent dir, and the server's last challenge remembered for the next
 * sign-in. The provider those transports use is connection/oauth-provider.ts's.
 */
import { extractWWWAuthenticateParams, type FetchLike, type OAuthTokens } from "@modelcontextprotocol/client";
import type { ServerAuthState } from "./session.ts";
import type { OAuthStore } from "./oauth-store.ts";
import { isJsonObject } from "../util/guards.ts";

/**
 * For a server's transports (whose fetch the SDK also uses for token requests): a refresh is done once across the Pi
 * processes sharing the agent dir. Refresh tokens are single-use at many authorization servers (they rotate): two
 * processes refreshing with the same one would leave one of them signed out. A refresh runs under the lock of the
 * server's stored record; when the record already holds other tokens than the ones the server refused here (another
 * process refreshed meanwhile), those are the answer and nothing is sent; a refresh that is sent has its answer stored
 * before the lock goes, so the next process finds it.
 */
export function refreshingOnce(store: OAuthStore, url: string, fetchFn: FetchLike): FetchLike {
  let refused: string | undefined;
  return async (input, init) => {
    const refreshToken = refreshTokenSent(init);
    if (refreshToken === undefined) {
      const response = await fetchFn(input, init);
      if (response.status === 401) refused = bearerSent(init) ?? refused;
      return response;
    }
    return store.exclusive(url, async (record, save) => {
      const stored = record?.tokens;
      const refreshedElsewhere =
        stored && (stored.refresh_token !== refreshToken || (refused !== undefined && stored.access_token !== refused));
      if (refreshedElsewhere) return tokenAnswer(stored);
      const response = await fetchFn(input, init);
      const tokens: unknown = response.ok
        ? await response
            .clone()
            .json()
            .catch(() => undefined)
        : undefined;
      if (record && isJsonObject(tokens) && typeof tokens.access_token === "string") {
        // As the SDK will store them (the refresh token kept when none is sent back, the issuer the old ones had).
        await save({ ...record, tokens: { ...stored, refresh_token: refreshToken, ...tokens } as OAuthTokens });
      }
      return response;
    });
  };
}

function refreshTokenSent(init: RequestInit | undefined): string | undefined {
  const body = init?.body;
  if (!(body instanceof URLSearchParams) || body.get("grant_type") !== "refresh_token") return undefined;
  return body.get("refresh_token") ?? undefined;
}

function bearerSent(init: RequestInit | undefined): string | undefined {
  const authorization = new Headers(init?.headers).get("authorization");
  return authorization?.match(/^Bearer (.+)$/i)?.[1];
}

/** The token endpoint's answer, given from the store: the SDK reads it as it would the server's. */
function tokenAnswer(tokens: OAuthTokens): Response {
  const { issuer: _issuer, ...answer } = tokens as OAuthTokens & { issuer?: string };
  return new Response(JSON.stringify(answer), { status: 200, headers: { "content-type": "application/json" } });
}

/**
 * For a server's transports: remembers its last `WWW-Authenticate` challenge (the scope a sign-in must ask for, and
 * whether it wants DPoP).
 */
export function recordingChallenges(serverUrl: URL, authState: ServerAuthState): FetchLike {
  const endpoint = `${serverUrl.origin}${serverUrl.pathname}`;
  return async (input, init) => {
    const response = await fetch(input, init);
    if (response.status !== 401 && response.status !== 403) return response;
    const url = new URL(input);
    if (`${url.origin}${url.pathname}` !== endpoint) return response;
    const { scope, resourceMetadataUrl, error } = extractWWWAuthenticateParams(response);
    const insufficientScope = error === "insufficient_scope";
    const dpop = DPOP_CHALLENGE.test(response.headers.get("www-authenticate") ?? "");
    if (response.status === 401 || insufficientScope)
      authState.challenge = { scope, resourceMetadataUrl: resourceMetadataUrl?.href, insufficientScope, dpop };
    return response;
  };
}

/** A `DPoP` challenge among those of a `WWW-Authenticate` header (RFC 9110 §11.6.1: schemes separated by commas). */
const DPOP_CHALLENGE = /(?:^|,)\s*DPoP(?:\s|,|$)/i;

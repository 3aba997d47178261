/**
 * Where a sign-in finds the authorization server. Normally the SDK's discovery: the MCP server's protected-resource
 * metadata (RFC 9728) names it, and its RFC 8414 / OpenID metadata is read. Some servers name the wrong one or none
 * (the sign-in then opens a page that does not exist): `oauth.authServerMetadataUrl` (Pi 1.x's built-in field) names
 * the metadata document to use instead. As there, that document is trusted as configured (its `issuer` is the
 * authorization server: no issuer check against a discovered one), and it is read afresh at each sign-in and refresh
 * (nothing of it is stored).
 */
import {
  type AuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
  discoverOAuthServerInfo,
  type FetchLike,
  type OAuthServerInfo,
} from "@modelcontextprotocol/client";
import { safeUrl } from "../util/http-text.ts";
import { errorMessage, isJsonObject } from "../util/guards.ts";
import type { ServerDefinition } from "../types.ts";

export interface DiscoveryOptions {
  /** The one the server's challenge named (else the well-known addresses are tried). */
  resourceMetadataUrl?: URL;
  fetchFn?: FetchLike;
}

/** The authorization server of `serverUrl`, its metadata, and the resource's metadata where it has some. */
export async function discoverAuthorizationServer(
  def: ServerDefinition,
  serverUrl: URL,
  options: DiscoveryOptions,
): Promise<OAuthServerInfo> {
  const configured = def.oauth?.authServerMetadataUrl;
  if (configured === undefined) return discoverOAuthServerInfo(serverUrl, options);
  const [authorizationServerMetadata, resourceMetadata] = await Promise.all([
    configuredMetadata(def.name, configured, options.fetchFn ?? fetch),
    // Still read for the resource indicator and the scopes it lists; a server without one (or a broken one) has none.
    discoverOAuthProtectedResourceMetadata(serverUrl, { resourceMetadataUrl: options.resourceMetadataUrl }, options.fetchFn).catch(
      () => undefined,
    ),
  ]);
  return { authorizationServerUrl: authorizationServerMetadata.issuer, authorizationServerMetadata, resourceMetadata };
}

async function configuredMetadata(server: string, url: string, fetchFn: FetchLike): Promise<AuthorizationServerMetadata> {
  const what = `MCP server "${server}": "oauth.authServerMetadataUrl" (${safeUrl(url)})`;
  let response: Response;
  try {
    response = await fetchFn(url, { headers: { Accept: "application/json" } });
  } catch (error) {
    throw new Error(`${what} could not be read: ${errorMessage(error)}`, { cause: error });
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`${what} answered HTTP ${response.status}`);
  }
  const metadata: unknown = await response.json().catch(() => undefined);
  if (!isMetadataDocument(metadata)) throw new Error(`${what} is not an authorization server's metadata document (RFC 8414 or OpenID)`);
  return metadata;
}

/** The fields every RFC 8414 document has (the SDK reads the rest as it needs them, and checks the endpoints' scheme). */
function isMetadataDocument(value: unknown): value is AuthorizationServerMetadata {
  return (
    isJsonObject(value) &&
    [value.issuer, value.authorization_endpoint, value.token_endpoint].every((field) => typeof field === "string" && URL.canParse(field)) &&
    Array.isArray(value.response_types_supported)
  );
}

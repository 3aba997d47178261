/**
 * The grants whose token is got for a JWT someone else issued, sent to the authorization server as an RFC 7523
 * JWT-bearer grant, with no browser: a workload's own identity token (workload identity federation, SEP-1933), or for
 * the user, an ID-JAG their company's identity provider issues in exchange for their ID token (enterprise-managed
 * authorization, SEP-990), at the token endpoint its metadata names or the one configured. As with client
 * credentials, each connection gets its token afresh and keeps it in memory, and the credentials go to the configured
 * `authorizationServer` only: the SDK refuses any other issuer (the SEP-2352 stamp on the client information).
 *
 * The SDK has the enterprise flow (CrossAppAccessProvider, and the RFC 8693 exchange at the identity provider); the
 * workload one is written here.
 */
import { readFile } from "node:fs/promises";
import {
  CrossAppAccessProvider,
  discoverAndRequestJwtAuthGrant,
  requestJwtAuthorizationGrant,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthTokens,
  type StoredOAuthClientInformation,
} from "@modelcontextprotocol/client";
import { hideInDebugLog } from "../util/debug-log.ts";
import { errorMessage } from "../util/guards.ts";
import { safeUrl } from "../util/http-text.ts";
import { clientSecret, oauthSecret } from "./command-values.ts";
import type { ServerDefinition } from "../types.ts";

const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/** A JWT is a few KB: a bigger file is not one. */
const MAX_TOKEN_FILE_BYTES = 64 * 1024;

/** Where the user's ID token comes from when the config gives none: the sign-in at the identity provider. */
export type SignedInIdToken = (def: ServerDefinition, signal: AbortSignal) => Promise<string>;

/**
 * Enterprise-managed authorization: the SDK's provider, which asks the identity provider for an ID-JAG for the
 * server's authorization server and resource whenever a token is needed, and takes the token with the configured
 * client (client_secret_basic). The ID token: the configured one (a `!command`'s output is fresh each time), else the
 * one the user's sign-in at the identity provider keeps (`signedIn`).
 */
export async function enterpriseProvider(
  def: ServerDefinition,
  signal: AbortSignal,
  signedIn: SignedInIdToken,
): Promise<OAuthClientProvider> {
  // Validated with the config: the client, its secret, its issuer and the identity provider are there.
  const oauth = def.oauth!;
  const identityProvider = oauth.identityProvider!;
  return new CrossAppAccessProvider({
    clientId: oauth.clientId!,
    clientSecret: (await clientSecret(def, signal))!,
    clientName: oauth.clientName,
    expectedIssuer: oauth.authorizationServer!,
    assertion: async (context) => {
      const idToken = (await oauthSecret(def, "oauth.identityProvider.idToken", signal)) ?? (await signedIn(def, signal));
      hideInDebugLog([idToken]);
      const exchange = {
        audience: context.authorizationServerUrl,
        resource: context.resourceUrl,
        idToken,
        clientId: identityProvider.clientId,
        clientSecret: await oauthSecret(def, "oauth.identityProvider.clientSecret", signal),
        scope: context.scope,
        fetchFn: context.fetchFn,
      };
      try {
        const { tokenEndpoint, issuer } = identityProvider;
        const grant = tokenEndpoint
          ? await requestJwtAuthorizationGrant({ ...exchange, tokenEndpoint })
          : await discoverAndRequestJwtAuthGrant({ ...exchange, idpUrl: issuer });
        hideInDebugLog([grant.jwtAuthGrant]);
        return grant.jwtAuthGrant;
      } catch (error) {
        const idp = safeUrl(identityProvider.issuer);
        throw new Error(`MCP server "${def.name}": the identity provider ${idp} gave no authorization grant: ${errorMessage(error)}`, {
          cause: error,
        });
      }
    },
  });
}

/** Workload identity federation: the workload's JWT, from a file or the configured value (a `!command`'s output). */
export function workloadIdentityProvider(def: ServerDefinition, signal: AbortSignal): OAuthClientProvider {
  return new WorkloadIdentityProvider(def, signal);
}

/**
 * A public client (RFC 7523 §3.1: the JWT authenticates the workload; a `client_id` goes along only when configured).
 * A JWT the authorization server refused is not sent again on the connection (SEP-1933: the workload's platform has
 * to fix it, and no other grant is tried); the next connect reads it anew.
 */
class WorkloadIdentityProvider implements OAuthClientProvider {
  private readonly def: ServerDefinition;
  private readonly signal: AbortSignal;
  private saved?: OAuthTokens;
  /** What the authorization server refused on this connection. */
  private refused?: string;

  constructor(def: ServerDefinition, signal: AbortSignal) {
    this.def = def;
    this.signal = signal;
  }

  get redirectUrl(): undefined {
    return undefined;
  }

  get clientMetadata(): OAuthClientMetadata {
    // Never registered (the client information is always there): only the scope is read.
    const scope = this.def.oauth?.scope;
    return {
      redirect_uris: [],
      grant_types: [JWT_BEARER],
      token_endpoint_auth_method: "none",
      ...(scope ? { scope } : {}),
    };
  }

  clientInformation(): StoredOAuthClientInformation {
    // The workload needs no client of its own; the issuer stamp keeps its JWT from any other authorization server.
    return { client_id: this.def.oauth?.clientId ?? "", issuer: this.def.oauth!.authorizationServer! };
  }

  /** Instead of the SDK's client authentication, which would send an empty `client_id`. */
  addClientAuthentication = (_headers: Headers, params: URLSearchParams): void => {
    const clientId = this.def.oauth?.clientId;
    if (clientId) params.set("client_id", clientId);
  };

  tokens(): OAuthTokens | undefined {
    return this.saved;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.saved = tokens;
  }

  redirectToAuthorization(): void {
    throw new Error("a workload gets its tokens without a browser");
  }

  saveCodeVerifier(): void {}

  codeVerifier(): string {
    throw new Error("a workload gets its tokens without a browser");
  }

  async prepareTokenRequest(scope?: string): Promise<URLSearchParams> {
    if (this.refused)
      throw new Error(
        `MCP server "${this.def.name}": the authorization server refused ${this.refused}; it is not sent again until a reconnect`,
      );
    const params = new URLSearchParams({ grant_type: JWT_BEARER, assertion: await workloadToken(this.def, this.signal) });
    if (scope) params.set("scope", scope);
    return params;
  }

  /** The SDK calls this on a refusal (invalid_grant; invalid_client, unauthorized_client), before it would ask again. */
  invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): void {
    this.saved = undefined;
    this.refused ??=
      scope === "tokens" ? "the workload token (invalid_grant)" : "the workload as a client (invalid_client or unauthorized_client)";
  }
}

/** The workload's JWT as configured: read from its file, or the value (a `!command` runs). */
async function workloadToken(def: ServerDefinition, signal: AbortSignal): Promise<string> {
  const file = def.oauth?.workloadTokenFile;
  const token = file === undefined ? await oauthSecret(def, "oauth.workloadToken", signal) : await readTokenFile(def.name, file);
  // Validated with the config: one of the two is there (and a value is not empty).
  hideInDebugLog([token]);
  return token!;
}

/** The token file's content, trimmed; a failure names the file and never shows what it holds. */
async function readTokenFile(server: string, path: string): Promise<string> {
  const what = `MCP server "${server}": "oauth.workloadTokenFile" (${path})`;
  let content: Buffer;
  try {
    content = await readFile(path);
  } catch (error) {
    throw new Error(`${what} could not be read (${(error as NodeJS.ErrnoException).code ?? errorMessage(error)})`);
  }
  const token = content.length > MAX_TOKEN_FILE_BYTES ? "" : content.toString("utf8").trim();
  if (!token || /\s/.test(token)) throw new Error(`${what} does not hold a token (one JWT, nothing else)`);
  return token;
}

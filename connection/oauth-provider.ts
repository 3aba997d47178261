/**
 * OAuth for remote MCP servers. The SDK does the protocol (RFC 9728 / RFC 8414 discovery, dynamic client registration,
 * PKCE S256, the RFC 8707 `resource`, token requests and refreshes, the checks on all of them); this module gives it
 * an OAuthClientProvider that keeps what it produces in the private store (connection/oauth-store.ts), and runs the user's side
 * of a sign-in (the loopback callback, the browser).
 *
 * One provider, two uses:
 * - on a connection (`authProviderFor`): tokens are sent, and refreshed when the server answers 401. A sign-in never
 *   starts there (no browser may pop up in the middle of a tool call, and nobody may be there): where one is needed
 *   the request fails with a NeedsAuthError telling the user to run /mcp-auth. No client is registered there either.
 *   The transport's own step-up (403 insufficient_scope) ends there too: every authorization request is a sign-in the
 *   user started, so the user (or a caller's own limit) bounds them, once.
 * - in a sign-in (`signIn`, what /mcp-auth runs): a fresh authorization with the scope the server last asked for
 *   (and, on a step-up, the scopes granted so far), redirected to our callback, then the code exchanged for tokens
 *   once the callback's `iss` shows it came from the authorization server the browser was sent to (RFC 9207).
 *
 * Loaded with the SDK half of the connection code (connection/sdk-session.ts), never with the extension.
 */
import {
  auth,
  ClientCredentialsProvider,
  computeScopeUnion,
  createFetchWithInit,
  type DpopSession,
  IssuerMismatchError,
  type OAuthClientInformationContext,
  type OAuthClientInformationMixed,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  OAuthError,
  type OAuthServerInfo,
  type OAuthTokens,
  PrivateKeyJwtProvider,
  type StoredOAuthClientInformation,
} from "@modelcontextprotocol/client";
import { abortable } from "../util/abort.ts";
import type { AuthChallenge, ServerAuthState } from "./session.ts";
import { authorizationServerAnswer, canSignIn, signInNeeded } from "./auth-checks.ts";
import { parseServerUrl } from "./server-target.ts";
import { CALLBACK_PATH, CallbackListener, refusal } from "./oauth-callback.ts";
import { discoverAuthorizationServer } from "./oauth-discovery.ts";
import { clientSecret, withCommandValues } from "./command-values.ts";
import type { OAuthRecord, OAuthStore, StoredDpopKey } from "./oauth-store.ts";
import { dpopAlgorithm, newDpopKey, storedDpopSession } from "./oauth-dpop.ts";
import { enterpriseProvider, workloadIdentityProvider } from "./oauth-jwt-grants.ts";
import { signedInIdToken, signInAtIdentityProvider } from "./oauth-identity-provider.ts";
import type { OAuthSettings, ServerDefinition } from "../types.ts";
import { safeUrl } from "../util/http-text.ts";

const CLIENT_NAME = "Pi (pi-mcp-adapter)";
/** Outside a sign-in the SDK still reads a redirect address; no authorization URL built with it is ever opened. */
const NO_CALLBACK = `http://127.0.0.1${CALLBACK_PATH}`;

export interface SignInOptions {
  store: OAuthStore;
  authState: ServerAuthState;
  /** Gets the authorization URL: the user's browser must go there (or, headless, something must follow it). */
  open(url: string): void | Promise<void>;
  /** The callback is listening: an address the user pastes can be handed to it. */
  onListening?(listener: CallbackListener): void;
  /** Cancels the sign-in (and bounds it: the caller's timeout). */
  signal: AbortSignal;
}

/** What a sign-in adds to the provider: our callback, its `state`, where to send the browser, and the discovery done. */
interface SignInInteraction {
  redirectUrl: string;
  state: string;
  open(url: string): void | Promise<void>;
  discovery: OAuthDiscoveryState;
  /** The new key the tokens are to be bound to (DPoP), when they are. */
  dpop?: SignInDpop;
}

interface SignInDpop {
  session: DpopSession;
  stored: StoredDpopKey;
  /** `oauth.dpop` is true: tokens not bound to the key are refused. */
  required: boolean;
}

/**
 * The provider for a server's connections, or none when OAuth is not in play for it. `signal`: the connection's (a
 * `!command` client secret run for a refresh stops with it).
 */
export async function authProviderFor(
  def: ServerDefinition,
  store: OAuthStore,
  authState: ServerAuthState,
  signal: AbortSignal,
): Promise<OAuthClientProvider | undefined> {
  if (!canSignIn(def)) return undefined;
  const { oauth } = def;
  // Every connection gets its token with the secret: it is needed now.
  if (oauth?.grantType === "client_credentials")
    return clientCredentialsProvider({ ...oauth, clientSecret: await clientSecret(def, signal) });
  if (oauth?.workloadToken !== undefined || oauth?.workloadTokenFile !== undefined) return workloadIdentityProvider(def, signal);
  if (oauth?.identityProvider) return enterpriseProvider(def, signal, signedInIdToken(store));
  // Without `auth`, a server is treated as OAuth once it was signed in to (a 401 then says so first).
  const record = await store.read(def.url!);
  if (def.auth === "oauth" || oauth || record) return new StoredOAuthProvider(def, store, authState, signal, { dpop: !!record?.dpopKey });
  return undefined;
}

/** No user: the client's own credentials get the token, a secret (client_secret_basic) or a signed JWT (private_key_jwt). */
function clientCredentialsProvider(oauth: OAuthSettings): OAuthClientProvider {
  // Validated with the config: the id, the issuer, and a secret or a key are there.
  const common = {
    clientId: oauth.clientId!,
    expectedIssuer: oauth.authorizationServer!,
    clientName: oauth.clientName ?? CLIENT_NAME,
    scope: oauth.scope,
  };
  if (oauth.privateKey)
    return new PrivateKeyJwtProvider({ ...common, privateKey: oauth.privateKey, algorithm: oauth.signingAlgorithm ?? "RS256" });
  return new ClientCredentialsProvider({ ...common, clientSecret: oauth.clientSecret! });
}

/**
 * An OAuth error response from the SDK says little in its message (only the optional description): its code says
 * more. A failed issuer check is said without the issuer received: it may be an attacker's text (RFC 9207 mix-up).
 */
export function describeOAuthError(error: unknown): string | undefined {
  if (error instanceof IssuerMismatchError) return issuerMismatch(error);
  if (!(error instanceof OAuthError)) return undefined;
  // Without a description the SDK's message is the code itself.
  return authorizationServerAnswer(error.code, error.message && error.message !== error.code ? error.message : undefined);
}

function issuerMismatch(error: IssuerMismatchError): string {
  if (error.kind === "authorization_response") {
    return "the answer the browser came back with does not show it is from the authorization server this sign-in went to (RFC 9207 issuer check), so it was not used";
  }
  const where = error.expected ? ` ${safeUrl(error.expected)}` : "";
  return `the metadata of the authorization server${where} names another issuer (RFC 8414), so it was not used`;
}

/**
 * The authorization code flow for one server (or for its identity provider): opens the browser side, waits for the
 * callback, stores the tokens.
 */
export async function signIn(def: ServerDefinition, options: SignInOptions): Promise<void> {
  try {
    // Enterprise-managed authorization: the user signs in at the company's identity provider, not at the server's.
    if (def.oauth?.identityProvider) await signInAtIdentityProvider(def, options);
    else await authorizationCodeFlow(def, options);
  } catch (error) {
    const described = describeOAuthError(error);
    if (!described) throw error;
    // The SDK's own message of an issuer mismatch quotes the issuer received: it must go nowhere, not even as a cause.
    throw new Error(described, error instanceof IssuerMismatchError ? undefined : { cause: error });
  }
}

async function authorizationCodeFlow(def: ServerDefinition, options: SignInOptions): Promise<void> {
  const { store, authState, signal } = options;
  const serverUrl = parseServerUrl(def);
  // The server's headers go with discovery as with its requests: their `!command` values run first.
  const headers = def.headers && (await withCommandValues(def, signal)).headers;
  const fetchFn = headers ? createFetchWithInit(fetch, { headers }) : undefined;
  const listener = await listen(def, store);
  try {
    options.onListening?.(listener);
    const resourceMetadataUrl = authState.challenge?.resourceMetadataUrl ? new URL(authState.challenge.resourceMetadataUrl) : undefined;
    const discovery = await abortable(discoverAuthorizationServer(def, serverUrl, { resourceMetadataUrl, fetchFn }), signal);
    const record = await store.read(def.url!);
    const scope = requestedScope(def, authState.challenge, record?.tokens?.scope);
    const provider = new StoredOAuthProvider(def, store, authState, signal, {
      signIn: {
        redirectUrl: listener.redirectUrl,
        state: listener.state,
        // A sign-in cancelled meanwhile must not send the browser anywhere.
        open: (url) => {
          signal.throwIfAborted();
          return options.open(url);
        },
        discovery: { ...discovery, resourceMetadataUrl: resourceMetadataUrl?.href },
        dpop: await signInDpop(def, authState, record, discovery),
      },
    });
    // Without tokens to refresh, this ends by sending the browser to the authorization URL (`open`).
    await abortable(auth(provider, { serverUrl, scope, resourceMetadataUrl, fetchFn }), signal);
    const answer = await listener.response(signal);
    if ("error" in answer) throw refusal(answer, discovery.authorizationServerMetadata);
    // The SDK checks `iss` (RFC 9207) before the code is sent anywhere.
    const { code: authorizationCode, iss } = answer;
    await abortable(auth(provider, { serverUrl, scope, resourceMetadataUrl, authorizationCode, iss, fetchFn }), signal);
  } finally {
    await listener.close();
  }
}

/**
 * A new DPoP key for the sign-in's tokens, when they are to be bound to one: `oauth.dpop` says so, or else the server
 * (its 401 named the DPoP scheme, or the tokens it had were bound). None when the authorization server takes no
 * algorithm the SDK signs with, unless `oauth.dpop` requires one (an error then).
 */
async function signInDpop(
  def: ServerDefinition,
  authState: ServerAuthState,
  record: OAuthRecord | undefined,
  discovery: OAuthServerInfo,
): Promise<SignInDpop | undefined> {
  const required = def.oauth?.dpop === true;
  if (!(def.oauth?.dpop ?? (authState.challenge?.dpop || record?.dpopKey !== undefined))) return undefined;
  const alg = dpopAlgorithm(discovery.authorizationServerMetadata);
  if (!alg && required)
    throw new Error(`the authorization server signs DPoP proofs with no algorithm the adapter has ("oauth.dpop" is true)`);
  return alg && { ...(await newDpopKey(alg)), required };
}

/**
 * The port the client was registered with (a registration names its exact redirect address), or the configured one;
 * when the registered one is taken, any port, and the client is registered again.
 */
async function listen(def: ServerDefinition, store: OAuthStore): Promise<CallbackListener> {
  const configured = def.oauth?.redirectPort;
  if (configured) return CallbackListener.start(configured);
  const registered = registeredPort((await store.read(def.url!))?.client);
  if (registered) return CallbackListener.start(registered).catch(() => CallbackListener.start(0));
  return CallbackListener.start(0);
}

function registeredPort(client: OAuthClientInformationMixed | undefined): number | undefined {
  const redirects: unknown = client && "redirect_uris" in client ? client.redirect_uris : undefined;
  const redirect =
    Array.isArray(redirects) && typeof redirects[0] === "string" && URL.canParse(redirects[0]) ? new URL(redirects[0]) : undefined;
  return redirect?.hostname === "127.0.0.1" && redirect.pathname === CALLBACK_PATH ? Number(redirect.port) || undefined : undefined;
}

/**
 * The scope to ask for (SEP-835): what the server's challenge names, else the configured `scope`; with neither, the
 * SDK asks for every scope the resource metadata lists (else for none). A step-up (403 insufficient_scope) asks for the
 * scopes granted so far as well (SEP-2350): servers often name only the missing one, and a token with that one alone
 * would lose what the old one could do. `offline_access` is the SDK's to add where the authorization server offers
 * it (SEP-2207: some issue a refresh token only for it), as our registration asks for refresh tokens.
 */
function requestedScope(def: ServerDefinition, challenge: AuthChallenge | undefined, granted: string | undefined): string | undefined {
  const scope = challenge?.scope ?? def.oauth?.scope;
  return challenge?.insufficientScope ? computeScopeUnion(granted, scope) : scope;
}

class StoredOAuthProvider implements OAuthClientProvider {
  private readonly def: ServerDefinition;
  private readonly url: string;
  private readonly store: OAuthStore;
  private readonly authState: ServerAuthState;
  private readonly signIn?: SignInInteraction;
  /** Ends a `!command` client secret still running: the sign-in's, or the connection's. */
  private readonly signal: AbortSignal;
  /** The configured client secret, once needed (a `!command` runs once per sign-in or connection). */
  private secret?: Promise<string | undefined>;
  private verifier?: string;
  /** The tokens last handed to the SDK: when it reports tokens invalid, only these may go (not newer ones). */
  private handedOut?: OAuthTokens;
  /** Some were, on this connection: a sign-in needed now is a new one. */
  private hadTokens = false;
  /** The scope this sign-in's authorization request asked for, as the SDK settled it. */
  private askedScope?: string;
  /** The session of the stored DPoP key, and the key it was made from. */
  private dpopSession?: { key: string; session: Promise<DpopSession> };
  /**
   * The DPoP session (RFC 9449): the SDK then signs a proof into every token request and presents DPoP-bound tokens
   * with proofs. Only for tokens bound to a key (a sign-in that binds its tokens, a connection with stored DPoP
   * tokens): without it the transports send bearer tokens as before.
   */
  readonly dpop?: () => Promise<DpopSession | undefined>;

  constructor(
    def: ServerDefinition,
    store: OAuthStore,
    authState: ServerAuthState,
    signal: AbortSignal,
    options: { signIn?: SignInInteraction; dpop?: boolean },
  ) {
    this.def = def;
    this.url = def.url!;
    this.store = store;
    this.authState = authState;
    this.signal = signal;
    this.signIn = options.signIn;
    if (this.signIn?.dpop) this.dpop = async () => this.signIn?.dpop?.session;
    else if (options.dpop) this.dpop = () => this.storedDpop();
  }

  get redirectUrl(): string {
    return this.signIn?.redirectUrl ?? NO_CALLBACK;
  }

  get clientMetadataUrl(): string | undefined {
    return this.def.oauth?.clientMetadataUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    const scope = this.def.oauth?.scope;
    return {
      client_name: this.def.oauth?.clientName ?? CLIENT_NAME,
      redirect_uris: [this.redirectUrl],
      // refresh_token: so that the authorization server may issue one (SEP-2207).
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      ...(scope ? { scope } : {}),
    };
  }

  state(): string {
    return this.signIn?.state ?? "";
  }

  async clientInformation(context?: OAuthClientInformationContext): Promise<StoredOAuthClientInformation | undefined> {
    const configured = await this.configuredClient(context?.issuer);
    if (configured) return configured;
    const client = (await this.store.read(this.url))?.client;
    if (this.signIn) return client && registeredFor(client, this.signIn.redirectUrl) ? client : undefined;
    // Registering belongs to a sign-in; without a client there are no tokens to use or refresh either.
    if (!client) throw signInNeeded(this.def.name, "needs a sign-in (OAuth)");
    // Registered with another authorization server than the one the server names now (SEP-2352): the SDK would
    // register here, outside a sign-in, for nothing (a sign-in registers with its own callback address).
    if (client.issuer && context && !sameIssuer(client.issuer, context.issuer))
      throw signInNeeded(this.def.name, "needs a new sign-in (it moved to another authorization server)");
    return client;
  }

  async saveClientInformation(client: StoredOAuthClientInformation): Promise<void> {
    // A configured client stays in the config: its secret is not copied anywhere.
    if (this.def.oauth?.clientId) return;
    await this.store.update(this.url, (record) => ({ ...record, client }));
  }

  async tokens(): Promise<OAuthTokens | undefined> {
    // A sign-in asks afresh: it must not refresh its way around the user.
    if (this.signIn) return undefined;
    const tokens = (await this.store.read(this.url))?.tokens;
    this.handedOut = tokens;
    if (tokens) this.hadTokens = true;
    // A refresh keeps the scopes granted: a server asking for more (403 insufficient_scope) needs a new sign-in.
    if (tokens?.refresh_token && this.authState.challenge?.insufficientScope) return { ...tokens, refresh_token: undefined };
    return tokens;
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    const dpopKey = this.boundKey(tokens);
    // The scope granted, for a later step-up to keep: an answer that names none granted what was asked for (RFC 6749
    // §5.1), a refresh what the tokens it replaces had (§6).
    await this.store.update(this.url, (record) => {
      const scope = tokens.scope ?? (this.signIn ? this.askedScope : record.tokens?.scope);
      const next = { ...record, tokens: scope === undefined ? tokens : { ...tokens, scope }, codeVerifier: undefined };
      // A sign-in's tokens go with its own key (or none); a refresh keeps the key its tokens are bound to.
      return this.signIn ? { ...next, dpopKey } : next;
    });
    this.authState.challenge = undefined;
  }

  /** The key a sign-in's new tokens are bound to: its DPoP key when the authorization server bound them (RFC 9449 §5). */
  private boundKey(tokens: OAuthTokens): StoredDpopKey | undefined {
    const dpop = this.signIn?.dpop;
    if (!dpop) return undefined;
    if (tokens.token_type.toLowerCase() === "dpop") return dpop.stored;
    if (dpop.required)
      throw new Error(`the authorization server issued a ${tokens.token_type} token, not one bound to a DPoP key ("oauth.dpop" is true)`);
    return undefined;
  }

  /** The session of the key the stored tokens are bound to (read each time: another Pi process may sign in anew). */
  private async storedDpop(): Promise<DpopSession | undefined> {
    const stored = (await this.store.read(this.url))?.dpopKey;
    if (!stored) return undefined;
    const key = JSON.stringify(stored);
    if (this.dpopSession?.key !== key) this.dpopSession = { key, session: storedDpopSession(stored) };
    return this.dpopSession.session;
  }

  async saveCodeVerifier(verifier: string): Promise<void> {
    // Outside a sign-in no authorization URL is opened, and the verifier of a sign-in under way must stay.
    if (!this.signIn) return;
    this.verifier = verifier;
    await this.store.update(this.url, (record) => ({ ...record, codeVerifier: verifier }));
  }

  async codeVerifier(): Promise<string> {
    const verifier = this.verifier ?? (await this.store.read(this.url))?.codeVerifier;
    if (!verifier) throw new Error("no sign-in is under way (its PKCE code verifier is missing)");
    return verifier;
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    if (this.signIn) {
      this.askedScope = authorizationUrl.searchParams.get("scope") ?? undefined;
      return this.signIn.open(authorizationUrl.href);
    }
    const { challenge } = this.authState;
    if (challenge?.insufficientScope) {
      throw signInNeeded(this.def.name, `needs a new sign-in that grants more (scope "${challenge.scope ?? "unspecified"}")`);
    }
    throw signInNeeded(
      this.def.name,
      this.hadTokens ? "needs a new sign-in (its OAuth session expired or was revoked)" : "needs a sign-in (OAuth)",
    );
  }

  async invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): Promise<void> {
    // The authorization server refused the client (invalid_client): a secret printed by a command is asked for again.
    if (scope === "all" || scope === "client") this.secret = undefined;
    await this.store.update(this.url, (record) => {
      const next = { ...record };
      // Another Pi process may have stored newer tokens meanwhile: those are kept.
      if ((scope === "all" || scope === "tokens") && (this.signIn || next.tokens?.access_token === this.handedOut?.access_token)) {
        delete next.tokens;
        delete next.dpopKey;
      }
      if (scope === "all" || scope === "client") delete next.client;
      if (scope === "all" || scope === "verifier") delete next.codeVerifier;
      return next;
    });
  }

  async discoveryState(): Promise<OAuthDiscoveryState | undefined> {
    if (this.signIn) return this.signIn.discovery;
    // A refresh goes to the configured authorization server too, not to the one the server's metadata names.
    if (!this.def.oauth?.authServerMetadataUrl) return undefined;
    return discoverAuthorizationServer(this.def, parseServerUrl(this.def), {});
  }

  /**
   * The configured client, stamped with the authorization server it belongs to (SEP-2352); its secret only where a
   * token request may follow (a sign-in, a refresh).
   */
  private async configuredClient(issuer: string | undefined): Promise<StoredOAuthClientInformation | undefined> {
    const clientId = this.def.oauth?.clientId;
    if (!clientId) return undefined;
    const bound = issuer && (await this.bindConfiguredClient(clientId, issuer));
    const secret = (await this.mayRequestTokens()) ? await this.clientSecret() : undefined;
    return { client_id: clientId, ...(secret ? { client_secret: secret } : {}), ...(bound ? { issuer: bound } : {}) };
  }

  /**
   * The authorization server the configured client was first used with (trusted then, as the user configured it for
   * this server, and kept until a sign-out). A server that names another one later does not get its secret: the SDK
   * would drop the client and register a new one, which is not what a configured client is for.
   */
  private async bindConfiguredClient(clientId: string, issuer: string): Promise<string> {
    const bound = await this.store.exclusive(this.url, async (record, save) => {
      const stamp = record?.configuredClient?.client_id === clientId ? record.configuredClient.issuer : undefined;
      if (stamp === undefined) await save({ ...record, configuredClient: { client_id: clientId, issuer } });
      return stamp ?? issuer;
    });
    if (sameIssuer(bound, issuer)) return bound;
    throw new Error(
      `MCP server "${this.def.name}" now names the authorization server ${safeUrl(issuer)}, and its "oauth.clientId" belongs to ` +
        `${safeUrl(bound)}: its secret is not sent to another one. If the server moved, check "oauth" in its config and sign ` +
        `out and in again (/mcp-auth ${this.def.name} --logout).`,
    );
  }

  /** Outside a sign-in, only a refresh token leads to the token endpoint (else the SDK asks for a sign-in). */
  private async mayRequestTokens(): Promise<boolean> {
    if (this.signIn) return true;
    const tokens = (await this.store.read(this.url))?.tokens;
    return tokens?.refresh_token !== undefined && !this.authState.challenge?.insufficientScope;
  }

  private clientSecret(): Promise<string | undefined> {
    const secret = (this.secret ??= clientSecret(this.def, this.signal));
    // A failed command is run again next time (it may have been a locked keychain).
    secret.catch(() => {
      if (this.secret === secret) this.secret = undefined;
    });
    return secret;
  }
}

/** RFC 8414 issuers, the one narrow tolerance the SDK also allows: a trailing `/`. */
function sameIssuer(a: string, b: string): boolean {
  return a.replace(/\/$/, "") === b.replace(/\/$/, "");
}

/** A registration names its redirect addresses; one made for another callback port cannot be used with this one. */
function registeredFor(client: OAuthClientInformationMixed, redirectUrl: string): boolean {
  const registered = "redirect_uris" in client ? client.redirect_uris : undefined;
  return !registered || registered.includes(redirectUrl);
}

/**
 * A session's OAuth sign-ins to its servers, and each server's OAuth situation in it (shared by its connects and its
 * sign-ins). One sign-in at a time per server: a new one replaces one still waiting. A sign-in outlives a reconnect
 * of its server (the user may be in the browser meanwhile), not the session (`cancelAll`). When a server needs a
 * sign-in, the user is told once, and again only after a sign-in succeeded: a server refusing every call must not
 * repeat it on each one.
 *
 * The manager (server-manager.ts) owns one and delegates to it; the sign-in itself (the browser, the callback, the
 * tokens) is connection/oauth-provider.ts's, loaded with the SDK half of the connection code.
 */
import { abortAfter } from "../util/abort.ts";
import { loadConnectionCode } from "./sdk-loader.ts";
import type { NeedsAuthError, OpenOptions, ServerAuthState } from "./session.ts";
import { canSignIn, tokensWithoutSignIn } from "./auth-checks.ts";
import { formatDuration } from "../util/format-time.ts";
import { errorMessage } from "../util/guards.ts";
import type { CallbackListener } from "./oauth-callback.ts";
import { identityProviderKey, OAuthStore } from "./oauth-store.ts";
import type { ServerDefinition } from "../types.ts";

/** How long a sign-in waits for the browser to come back. */
export const DEFAULT_SIGN_IN_TIMEOUT_MS = 5 * 60_000;

export interface SignInOptions {
  /** Gets the authorization URL: show it to the user and open their browser (headless: follow it). */
  openAuthorizationUrl: (url: string) => void | Promise<void>;
  timeoutMs?: number;
}

/** A server needs the user to sign in (OAuth). */
export type SignInNeededListener = (name: string, error: NeedsAuthError) => void;

interface PendingSignIn {
  cancel: AbortController;
  /** Once listening: where a callback address the user pastes goes. */
  listener?: CallbackListener;
}

export class SignIns {
  private readonly store: OAuthStore;
  private readonly onSignInNeeded?: SignInNeededListener;
  private readonly pending = new Map<string, PendingSignIn>();
  private readonly authStates = new Map<string, ServerAuthState>();
  /** Servers the user was told need a sign-in (told again only after a sign-in succeeded). */
  private readonly announced = new Set<string>();

  constructor(agentDir: string, onSignInNeeded?: SignInNeededListener) {
    this.store = new OAuthStore(agentDir);
    this.onSignInNeeded = onSignInNeeded;
  }

  /** What a connect to the server needs of OAuth: where tokens are kept, and the server's situation (it updates it). */
  forConnect(name: string): OpenOptions["oauth"] {
    return { store: this.store, state: this.authState(name) };
  }

  /**
   * Signs in to an HTTP server with OAuth: the authorization URL goes to `openAuthorizationUrl`, the browser comes
   * back to a callback on 127.0.0.1, the tokens are stored (see connection/oauth-store.ts). Resolves once signed in;
   * reconnecting is up to the caller. A new sign-in to the same server replaces one still waiting.
   */
  async signIn(def: ServerDefinition, options: SignInOptions): Promise<void> {
    if (!canSignIn(def))
      throw new Error(`MCP server "${def.name}" does not sign in with OAuth (it is a local process, or its config gives it a token)`);
    const withoutSignIn = tokensWithoutSignIn(def);
    if (withoutSignIn) throw new Error(`MCP server "${def.name}" gets its tokens with ${withoutSignIn.how}: nobody signs in`);
    this.pending.get(def.name)?.cancel.abort(new Error(`The sign-in to MCP server "${def.name}" was replaced by a new one.`));
    const pending: PendingSignIn = { cancel: new AbortController() };
    this.pending.set(def.name, pending);
    const timeoutMs = options.timeoutMs ?? DEFAULT_SIGN_IN_TIMEOUT_MS;
    const clearDeadline = abortAfter(
      pending.cancel,
      timeoutMs,
      () =>
        new Error(
          `The sign-in to MCP server "${def.name}" timed out after ${formatDuration(timeoutMs)}: the browser did not come back to Pi.`,
        ),
    );
    try {
      const mcp = await loadConnectionCode();
      await mcp.signIn(def, {
        store: this.store,
        authState: this.authState(def.name),
        open: options.openAuthorizationUrl,
        onListening: (listener) => (pending.listener = listener),
        signal: pending.cancel.signal,
      });
      this.announced.delete(def.name);
    } catch (error) {
      if (pending.cancel.signal.aborted) throw pending.cancel.signal.reason;
      throw new Error(`The sign-in to MCP server "${def.name}" failed: ${errorMessage(error)}`, { cause: error });
    } finally {
      clearDeadline();
      if (this.pending.get(def.name) === pending) this.pending.delete(def.name);
    }
  }

  /** Whether a sign-in to the server is waiting for the browser. */
  isWaiting(name: string): boolean {
    return this.pending.has(name);
  }

  /** Ends a sign-in still waiting (it rejects). False when there was none. */
  cancel(name: string): boolean {
    const pending = this.pending.get(name);
    pending?.cancel.abort(new Error(`The sign-in to MCP server "${name}" was cancelled.`));
    return pending !== undefined;
  }

  /** Every sign-in still waiting ends with the session. */
  cancelAll(): void {
    for (const [name, pending] of this.pending)
      pending.cancel.abort(new Error(`The sign-in to MCP server "${name}" ended with the session.`));
  }

  /**
   * The address the browser ended up on, pasted by the user when it could not reach this machine's callback: it
   * completes the waiting sign-in. Undefined when no sign-in is waiting for its callback.
   */
  deliverCallback(name: string, address: string): { accepted: boolean; text: string } | undefined {
    return this.pending.get(name)?.listener?.deliver(address);
  }

  /** Whether tokens from a sign-in are stored for the server's URL (or for its identity provider). */
  isSignedIn(def: ServerDefinition): boolean {
    return canSignIn(def) && this.store.hasTokens(signInKey(def));
  }

  /**
   * Forgets the server's tokens and client registration, and its sign-in at its identity provider (which the servers
   * naming the same one share). True if any were stored.
   */
  async forget(def: ServerDefinition): Promise<boolean> {
    if (!def.url) return false;
    const forgotten = await Promise.all([this.store.remove(def.url), this.store.remove(signInKey(def))]);
    return forgotten.includes(true);
  }

  /** The server refused us and a sign-in is the way (`error.signIn`): the user is told, unless told already. */
  announce(name: string, error: NeedsAuthError): void {
    if (!error.signIn || this.announced.has(name)) return;
    this.announced.add(name);
    try {
      this.onSignInNeeded?.(name, error);
    } catch {
      // A failing listener must not break connection handling.
    }
  }

  private authState(name: string): ServerAuthState {
    let state = this.authStates.get(name);
    if (!state) {
      state = { usesOAuth: false };
      this.authStates.set(name, state);
    }
    return state;
  }
}

/** Where a server's sign-in is kept: under its URL, or under its identity provider (enterprise-managed authorization). */
function signInKey(def: ServerDefinition): string {
  const idp = def.oauth?.identityProvider;
  return idp ? identityProviderKey(idp) : def.url!;
}

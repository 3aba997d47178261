/**
 * Where the browser comes back to after a sign-in (RFC 8252 §7.3, loopback redirect): an HTTP server on 127.0.0.1
 * that waits for `?code=…&state=…` (or `?error=…`), answers the browser with a short page and hands the code to
 * the sign-in, with the `iss` the authorization server added (RFC 9207: the SDK checks it before the code is used). It listens only while one sign-in waits. A callback with another `state` is not ours (a stale tab, or
 * a page trying its luck) and is turned away without ending the wait. When the browser runs on another machine, the
 * user can paste the address it ended up on instead (`deliver`).
 */
import { randomBytes } from "node:crypto";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type AuthorizationServerMetadata, validateAuthorizationResponseIssuer } from "@modelcontextprotocol/client";
import { abortable } from "../util/abort.ts";
import { authorizationServerAnswer } from "./auth-checks.ts";
import { escapeHtml, oneLine } from "../util/text.ts";

export const CALLBACK_PATH = "/callback";
const MAX_ERROR_TEXT = 300;

/**
 * The callback's answer: an authorization code, or the authorization server's error as the user would read it; with
 * the `iss` that says which authorization server sent it, as sent (absent stays absent). Neither is to be trusted
 * before that `iss` is checked (RFC 9207: a mix-up attack sends the browser back from another server).
 */
export type AuthorizationResponse = ({ code: string } | { error: string }) & { iss?: string };

export class CallbackListener {
  readonly redirectUrl: string;
  /** The `state` the authorization request must carry back. */
  readonly state = randomBytes(16).toString("base64url");
  private readonly server: Server;
  private settle!: (outcome: AuthorizationResponse) => void;
  private readonly outcome = new Promise<AuthorizationResponse>((resolve) => {
    this.settle = resolve;
  });
  private settled = false;

  private constructor(server: Server) {
    this.server = server;
    this.redirectUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}${CALLBACK_PATH}`;
    server.on("request", (request, response) => {
      const url = new URL(request.url ?? "/", this.redirectUrl);
      if (request.method !== "GET" || url.pathname !== CALLBACK_PATH) return page(response, 404, "Not found.");
      const answer = this.accept(url.searchParams);
      page(response, answer.status, answer.text);
    });
  }

  /** Listens on 127.0.0.1 at `port` (0: any free port). */
  static async start(port: number): Promise<CallbackListener> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once("error", (error: NodeJS.ErrnoException) =>
        reject(
          error.code === "EADDRINUSE"
            ? new Error(`port ${port} on 127.0.0.1 is in use, so the sign-in cannot receive its callback there`)
            : error,
        ),
      );
      server.listen(port, "127.0.0.1", resolve);
    });
    return new CallbackListener(server);
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** The authorization response, once the browser came back; rejects when `signal` aborts. */
  response(signal: AbortSignal): Promise<AuthorizationResponse> {
    return abortable(this.outcome, signal);
  }

  /** A callback address the user pasted: what to tell them. */
  deliver(address: string): { accepted: boolean; text: string } {
    let url: URL;
    try {
      url = new URL(address);
    } catch {
      return { accepted: false, text: "That is not an address (expected the one the browser ended up on, with ?code=…)." };
    }
    const answer = this.accept(url.searchParams);
    return { accepted: answer.status === 200, text: answer.text };
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      // A browser keeps its connection open; the sign-in must not wait for it.
      this.server.closeAllConnections();
    });
  }

  private accept(params: URLSearchParams): { status: number; text: string } {
    if (params.get("state") !== this.state) {
      return { status: 400, text: "This address does not belong to the sign-in under way (it may be from an earlier attempt)." };
    }
    if (this.settled) return { status: 200, text: "This sign-in has already been handled. You can close this tab." };
    const error = params.get("error");
    const code = params.get("code");
    // Checked by the sign-in, against the authorization server's metadata (connection/oauth-provider.ts).
    const iss = params.get("iss");
    const from = iss === null ? {} : { iss };
    if (error !== null) {
      const description = params.get("error_description");
      this.finish({ error: authorizationServerAnswer(clip(error), description ? clip(description) : undefined), ...from });
      return { status: 200, text: "Sign-in failed: the authorization server did not grant access. You can close this tab." };
    }
    if (!code) return { status: 400, text: "This address carries no authorization code." };
    this.finish({ code, ...from });
    return { status: 200, text: "Signed in. You can close this tab and go back to Pi." };
  }

  private finish(outcome: AuthorizationResponse): void {
    this.settled = true;
    this.settle(outcome);
  }
}

/**
 * The authorization server's refusal, once its `iss` shows it is this sign-in's: an error page from another server
 * (a mix-up) is not repeated to the user, as the SDK does not repeat a code's (it throws IssuerMismatchError).
 */
export function refusal(answer: AuthorizationResponse & { error: string }, metadata: AuthorizationServerMetadata | undefined): Error {
  validateAuthorizationResponseIssuer({
    iss: answer.iss,
    expectedIssuer: metadata?.issuer,
    issParameterSupported: metadata?.authorization_response_iss_parameter_supported === true,
  });
  return new Error(answer.error);
}

function page(response: ServerResponse, status: number, text: string): void {
  const body = `<!doctype html><meta charset="utf-8"><title>Pi MCP sign-in</title><p>${escapeHtml(text)}</p>`;
  response.writeHead(status, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" }).end(body);
}

/** Text from the authorization server, shown to the user: short, and on one line. */
function clip(text: string): string {
  return oneLine(text, MAX_ERROR_TEXT + 1, "excerpt");
}

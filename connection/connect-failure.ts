/**
 * What a failed connect means, as the user reads it: the server named, why it failed in one line (a missing command,
 * a refused port, a login page where an MCP server should be, an authorization server's answer), and never a token.
 * A refusal for want of credentials becomes a NeedsAuthError that says what fixes it: the config, or a sign-in.
 */
import { type FetchLike, SdkError, SdkErrorCode, SdkHttpError, SseError, UnauthorizedError } from "@modelcontextprotocol/client";
import { IncompatibleServerError, NeedsAuthError, type ServerAuthState } from "./session.ts";
import { canSignIn, hasAuthorizationHeader, signInNeeded, tokensWithoutSignIn } from "./auth-checks.ts";
import { describeOAuthError } from "./oauth-provider.ts";
import { discoverAuthorizationServer } from "./oauth-discovery.ts";
import { parseServerUrl } from "./server-target.ts";
import { abortable } from "../util/abort.ts";
import { debugLog } from "../util/debug-log.ts";
import { briefHttpError, safeUrl } from "../util/http-text.ts";
import { errorMessage } from "../util/guards.ts";
import type { ServerDefinition } from "../types.ts";

/** How long the look for an unannounced sign-in may take (RFC 9728 and RFC 8414 documents, two or three requests). */
const DISCOVERY_PROBE_MS = 5_000;

/** The error a failed connect rejects with: names the server, says why, never repeats a token. */
export async function describeConnectFailure(
  def: ServerDefinition,
  error: unknown,
  stderrTail: string[],
  authState: ServerAuthState,
): Promise<Error> {
  if (error instanceof NeedsAuthError || error instanceof IncompatibleServerError) return error;
  if (isUnauthorized(error)) return unauthorized(def, authState);
  const reason = npmMissingPackage(def, stderrTail) ?? failureReason(def, error);
  let message = `MCP server "${def.name}" failed to connect: ${reason}`;
  if (stderrTail.length > 0) message += `\nLast stderr lines:\n${stderrTail.map((line) => `  ${line}`).join("\n")}`;
  return new Error(message, { cause: error });
}

/** A 401 that OAuth (if any) could not answer. */
export function isUnauthorized(error: unknown): boolean {
  if (error instanceof UnauthorizedError) return true;
  if (error instanceof SdkHttpError) return error.status === 401;
  return error instanceof SseError && error.code === 401;
}

/**
 * A 401 the connection could not answer. With OAuth in play, or offered by the server (its challenge names its
 * metadata, or the well-known addresses have it: RFC 9728 lets a challenge leave it out), the user must sign in;
 * otherwise the configured credentials are missing or wrong.
 */
async function unauthorized(def: ServerDefinition, authState: ServerAuthState): Promise<NeedsAuthError> {
  const withoutSignIn = tokensWithoutSignIn(def);
  if (withoutSignIn)
    return new NeedsAuthError(
      def.name,
      `MCP server "${def.name}" refused the token ${withoutSignIn.how} got: check ${withoutSignIn.fields} in its config.`,
    );
  if (canSignIn(def) && authState.usesOAuth) return signInNeeded(def.name, "needs a new sign-in (it refused its OAuth token)");
  if (canSignIn(def) && (authState.challenge?.resourceMetadataUrl || (await offersSignIn(def))))
    return signInNeeded(def.name, "needs a sign-in (OAuth)");
  return new NeedsAuthError(def.name, needsAuthMessage(def));
}

/** Whether the server publishes where to sign in (RFC 9728 resource metadata, or RFC 8414 / OpenID metadata at its origin). */
async function offersSignIn(def: ServerDefinition): Promise<boolean> {
  const signal = AbortSignal.timeout(DISCOVERY_PROBE_MS);
  const fetchFn: FetchLike = (url, init) => fetch(url, { ...init, signal });
  try {
    const found = await abortable(discoverAuthorizationServer(def, parseServerUrl(def), { fetchFn }), signal);
    return found.resourceMetadata !== undefined || found.authorizationServerMetadata !== undefined;
  } catch (error) {
    debugLog(`MCP server "${def.name}": looking for its OAuth metadata after a 401`, error);
    return false;
  }
}

function needsAuthMessage(def: ServerDefinition): string {
  const where = `${safeUrl(def.url)} answered 401 Unauthorized`;
  const source =
    def.bearerToken !== undefined
      ? `"bearerToken"`
      : def.bearerTokenEnv
        ? `the variable ${def.bearerTokenEnv} ("bearerTokenEnv")`
        : hasAuthorizationHeader(def)
          ? `the "Authorization" header`
          : undefined;
  if (source) return `MCP server "${def.name}" needs authentication: ${where} to the token from ${source}. Check that it is valid.`;
  // No OAuth metadata anywhere: a token is the likely way in, but an OAuth server may publish none (2025-03-26 servers).
  return (
    `MCP server "${def.name}" needs authentication: ${where} and publishes no OAuth metadata. Give it a token in its ` +
    `config ("bearerToken", "bearerTokenEnv" or an "Authorization" header); if it signs in with OAuth all the same, set ` +
    `"auth": "oauth" in its config and run /mcp-auth ${def.name}.`
  );
}

/**
 * npx (or npm exec) could not find what the server's command names on npm: which version or package it lacks, and
 * what to change (a registry entry may pin a version npm never got). Read from npm's own error lines on stderr
 * (`npm error` since npm 10, `npm ERR!` before).
 */
function npmMissingPackage(def: ServerDefinition, stderrTail: readonly string[]): string | undefined {
  const text = stderrTail.join("\n");
  const code = /^npm (?:error|ERR!) code (ETARGET|E404)\b/m.exec(text)?.[1];
  const where = `"args" of "${def.name}" in ${def.source.path}`;
  if (code === "ETARGET") {
    const spec = /No matching version found for (\S+?)\.?$/m.exec(text)?.[1];
    const at = spec ? spec.lastIndexOf("@") : -1;
    if (!spec || at <= 0) return `npm has no such version of the package (npm ETARGET): change the version in the ${where}`;
    const name = spec.slice(0, at);
    return `npm has no version ${spec.slice(at + 1)} of ${name} (npm ETARGET): change the version in the ${where}, e.g. to ${name}@latest`;
  }
  if (code === "E404") {
    const spec = /'(\S+)' (?:could not be found|is not in (?:this|the npm) registry)/.exec(text)?.[1];
    const name = spec?.replace(/(.)@[^@/]*$/, "$1");
    return `npm has no package ${name ?? "of that name"} (npm E404: none by that name, or a private one npm is not signed in for): check the package name in the ${where}`;
  }
  return undefined;
}

/** A system error code in an error's text (`connect ECONNREFUSED 127.0.0.1:8080`). */
const SYSTEM_ERROR_CODE = /\bE[A-Z]{3,}\b/;
/** What the SSE transport's error text says before fetch's own reason (the eventsource library flattens the error). */
const SSE_FETCH_FAILED = /^SSE error: (?:TypeError: )?(?:fetch failed: )?/;

function failureReason(def: ServerDefinition, error: unknown): string {
  const oauth = describeOAuthError(error);
  if (oauth) return oauth;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if ((error as { syscall?: string } | undefined)?.syscall?.startsWith("spawn")) {
    if (code === "ENOENT") return `command not found: ${def.command}`;
    // The system says EACCES, not ENOENT, for a command found nowhere when PATH has a directory it may not search.
    if (code === "EACCES")
      return `cannot run ${def.command}: permission denied (a file that is not executable, or a command not found with a directory on PATH this user cannot search)`;
  }
  if (error instanceof SdkError && error.code === SdkErrorCode.ConnectionClosed && def.command) {
    return "the server process exited before it was ready";
  }
  // A success status with a body that is not MCP (a login page, a proxy's error page); the probe wraps it.
  const notMcp = inCauses(error, (cause) => cause instanceof SdkError && cause.code === SdkErrorCode.ClientHttpUnexpectedContent);
  if (notMcp) return `${safeUrl(def.url)} did not answer as an MCP server (${briefHttpError(notMcp.message)}); check the URL`;
  // An SSE stream that never opened has no status: nothing answered. The SDK keeps only the text of fetch's error.
  if (error instanceof SseError && error.code === undefined) {
    const reason = briefHttpError(error.message.replace(SSE_FETCH_FAILED, ""));
    return cannotReach(def, { code: reason.match(SYSTEM_ERROR_CODE)?.[0], message: reason });
  }
  if (error instanceof SdkHttpError) return `${safeUrl(def.url)} answered HTTP ${error.status}: ${briefHttpError(httpErrorText(error))}`;
  if (error instanceof SseError) return `${safeUrl(def.url)} answered HTTP ${error.code ?? "?"}: ${briefHttpError(error.message)}`;
  const fetchFailure = fetchFailed(error);
  if (fetchFailure) return cannotReach(def, fetchFailure.cause as NodeJS.ErrnoException | undefined);
  return errorMessage(error);
}

/** What the server said with its error status (the body the SDK keeps), else the SDK's own words. */
function httpErrorText(error: SdkHttpError): string {
  const body = error.data.text;
  return typeof body === "string" && body.trim() !== "" ? body : error.message;
}

/** fetch's own failure (nothing answered), found where the SDK may have wrapped it. */
export function fetchFailed(error: unknown): Error | undefined {
  return inCauses(error, (cause) => cause instanceof TypeError && cause.message === "fetch failed");
}

/** The error, or one it was caused by (the SDK wraps what its probe met), that passes `test`. */
function inCauses(error: unknown, test: (cause: Error) => boolean): Error | undefined {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 4; cause = cause.cause, depth++) {
    if (test(cause)) return cause;
  }
  return undefined;
}

/**
 * `cannot reach <url> (why)`: the system's code (ECONNREFUSED, ENOTFOUND, ...), else fetch's own reason, from the
 * error fetch gave (Streamable HTTP) or read out of its text (SSE).
 */
function cannotReach(def: ServerDefinition, cause: { code?: string; message?: string } | undefined): string {
  // fetch never connects to the Fetch standard's blocked ports (1, 25, 6000, ...) and says only "bad port".
  const why = cause?.code || (cause?.message === "bad port" ? `fetch never connects to port ${new URL(def.url!).port}` : cause?.message);
  return `cannot reach ${safeUrl(def.url)}${why ? ` (${why})` : ""}`;
}

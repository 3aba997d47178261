/**
 * `env` and `headers` values written as `!command` (Pi 1.x's built-in MCP and pi-mcp-adapter 2.x run them): the
 * command runs in a shell when the server starts (never at Pi's startup, and again at every start, so a token it
 * prints is fresh), and its output, trimmed, is the value. `oauth.clientSecret` too (as Pi's built-in reads it), and
 * the other `oauth` secrets (a workload's JWT, the identity provider's secret and the user's ID token), but only when
 * the secret is needed: a sign-in, a refresh, a token request (connection/oauth-provider.ts, oauth-jwt-grants.ts).
 * Only the fields config/entry.ts marked run: the user's own files and a trusted project's, never other tools' files.
 * A failure names the server and the field and never shows the output, which is a secret.
 */
import { spawn } from "node:child_process";
import { stopProcessTree } from "../util/process-tree.ts";
import { whenAborted } from "../util/abort.ts";
import type { ServerDefinition } from "../types.ts";

/** As Pi's built-in: a command that prints a token is quick, one that hangs must not hold the start for long. */
export const COMMAND_VALUE_TIMEOUT_MS = 10_000;
/** A secret is short: past this the command is not printing one. */
const MAX_OUTPUT_BYTES = 64 * 1024;
const IS_WINDOWS = process.platform === "win32";

/** The definition with its command values replaced by what the commands printed; throws on the first failure. */
export async function withCommandValues(
  def: ServerDefinition,
  signal: AbortSignal,
  timeoutMs = COMMAND_VALUE_TIMEOUT_MS,
): Promise<ServerDefinition> {
  if (!def.commandValues?.length) return def;
  const maps = { env: { ...def.env }, headers: { ...def.headers } };
  await Promise.all(
    // The `oauth` secrets are not in these maps: they wait for `oauthSecret`.
    def.commandValues.map(async (field) => {
      const dot = field.indexOf(".");
      const map = maps[field.slice(0, dot) as keyof typeof maps];
      const key = field.slice(dot + 1);
      const value = map?.[key];
      if (value?.startsWith("!"))
        map[key] = await runValueCommand(value.slice(1), `MCP server "${def.name}": "${field}"`, signal, timeoutMs);
    }),
  );
  return { ...def, ...(def.env ? { env: maps.env } : {}), ...(def.headers ? { headers: maps.headers } : {}) };
}

/** The `oauth` fields that hold a secret and may be a `!command`, each run only when the secret is needed. */
const OAUTH_SECRETS = {
  "oauth.clientSecret": (def: ServerDefinition) => def.oauth?.clientSecret,
  "oauth.workloadToken": (def: ServerDefinition) => def.oauth?.workloadToken,
  "oauth.identityProvider.clientSecret": (def: ServerDefinition) => def.oauth?.identityProvider?.clientSecret,
  "oauth.identityProvider.idToken": (def: ServerDefinition) => def.oauth?.identityProvider?.idToken,
} as const;

export type OAuthSecretField = keyof typeof OAUTH_SECRETS;

/** A configured `oauth` secret, its command run if it is one (each call runs it again); throws on a failure. */
export async function oauthSecret(def: ServerDefinition, field: OAuthSecretField, signal: AbortSignal): Promise<string | undefined> {
  const secret = OAUTH_SECRETS[field](def);
  if (!secret?.startsWith("!") || !def.commandValues?.includes(field)) return secret;
  return runValueCommand(secret.slice(1), `MCP server "${def.name}": "${field}"`, signal, COMMAND_VALUE_TIMEOUT_MS);
}

/** The configured client secret, its command run if it is one (each call runs it again); throws on a failure. */
export function clientSecret(def: ServerDefinition, signal: AbortSignal): Promise<string | undefined> {
  return oauthSecret(def, "oauth.clientSecret", signal);
}

function runValueCommand(command: string, what: string, signal: AbortSignal, timeoutMs: number): Promise<string> {
  signal.throwIfAborted();
  return new Promise((resolve, reject) => {
    // Its own process group: a timeout ends what the shell started too.
    const child = spawn(command, { shell: true, stdio: ["ignore", "pipe", "ignore"], detached: !IS_WINDOWS, windowsHide: true });
    const chunks: Buffer[] = [];
    let size = 0;
    let failure: string | undefined;
    const stop = (why: string) => {
      failure ??= why;
      if (child.pid !== undefined) void stopProcessTree(child.pid, { processGroup: !IS_WINDOWS, terminateGraceMs: 1_000 });
    };
    const timer = setTimeout(() => stop(`did not finish within ${timeoutMs / 1000} s`), timeoutMs);
    const stopWatching = whenAborted(signal, () => stop("was cancelled (what needed it was)"));
    child.stdout.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_OUTPUT_BYTES) stop(`printed more than ${MAX_OUTPUT_BYTES / 1024} KB`);
      else chunks.push(chunk);
    });
    child.on("error", (error) => stop(`could not run (${error.message})`));
    child.on("close", (code, exitSignal) => {
      clearTimeout(timer);
      stopWatching();
      const output = Buffer.concat(chunks).toString("utf8").trim();
      if (failure === undefined && code !== 0) failure = exitSignal ? `was ended by ${exitSignal}` : `exited with code ${code}`;
      if (failure === undefined && output === "") failure = "printed nothing";
      // The output is never part of the message: it may be the secret, or half of it.
      if (failure !== undefined) reject(new Error(`${what}: the "!" command ${failure}; its output is not shown`));
      else resolve(output);
    });
  });
}

/**
 * What both halves of the connection code share, free of the MCP SDK: server-manager.ts is loaded with the
 * extension, mcp-connection.ts (the SDK half) only when the first server connects, and neither may pull the other in.
 */
import type { ServerDefinition } from "./types.ts";

/** The server refuses us until credentials are configured (HTTP 401, or a bearer token variable that is not set). */
export class NeedsAuthError extends Error {
  readonly serverName: string;
  constructor(serverName: string, message: string) {
    super(message);
    this.name = "NeedsAuthError";
    this.serverName = serverName;
  }
}

/** Which kind of transport a definition asks for; throws (with the field at fault) when it cannot have one. */
export function transportFamily(def: ServerDefinition): "stdio" | "http" {
  const family = def.transport ? (def.transport === "stdio" ? "stdio" : "http") : def.command ? "stdio" : def.url ? "http" : undefined;
  if (!family) throw new Error(`it has neither "command" nor "url"`);
  if (family === "stdio" && !def.command) throw new Error(`"transport" is "stdio" but "command" is missing`);
  if (family === "http" && !def.url) throw new Error(`"transport" is "${def.transport}" but "url" is missing`);
  return family;
}

/** Scheme, host and path: no user info, no query (either may carry a secret). */
export function safeUrl(url: string | undefined): string {
  try {
    const parsed = new URL(url ?? "");
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return "the server URL";
  }
}

/**
 * The parent environment with the server's `env` on top. Windows names are case-insensitive: an override must
 * replace `Path` when it sets `PATH`, or the child would get both.
 */
export function mergeEnv(
  parent: NodeJS.ProcessEnv,
  overrides: Record<string, string> | undefined,
  platform: NodeJS.Platform = process.platform,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(parent)) if (value !== undefined) env[key] = value;
  for (const [key, value] of Object.entries(overrides ?? {})) {
    if (platform === "win32") {
      for (const existing of Object.keys(env)) if (existing.toLowerCase() === key.toLowerCase()) delete env[existing];
    }
    env[key] = value;
  }
  return env;
}

/** `promise`, or the signal's reason as soon as it aborts. */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    // Its outcome no longer matters, but its rejection must not go unhandled (Node would end Pi for it).
    promise.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

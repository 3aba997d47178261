/**
 * What a server definition asks the connection to run or reach: its transport family, its URL (refused where fetch
 * would refuse it) and its process's environment.
 */
import type { ServerDefinition } from "../types.ts";

/** Which kind of transport a definition asks for; throws (with the field at fault) when it cannot have one. */
export function transportFamily(def: ServerDefinition): "stdio" | "http" {
  const family = def.transport ? (def.transport === "stdio" ? "stdio" : "http") : def.command ? "stdio" : def.url ? "http" : undefined;
  if (!family) throw new Error(`it has neither "command" nor "url"`);
  if (family === "stdio" && !def.command) throw new Error(`"transport" is "stdio" but "command" is missing`);
  if (family === "http" && !def.url) throw new Error(`"transport" is "${def.transport}" but "url" is missing`);
  return family;
}

/** The server's `url`, refused when fetch would refuse it (with an error that repeats the password). */
export function parseServerUrl(def: ServerDefinition): URL {
  let url: URL;
  try {
    url = new URL(def.url!);
  } catch {
    throw new Error(`"url" is not a valid URL`);
  }
  if (url.username || url.password) {
    throw new Error(
      `"url" contains a user name or password (user:password@host), which HTTP clients refuse; send credentials with "headers" or "bearerToken"`,
    );
  }
  return url;
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

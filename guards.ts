/** Narrowing for values read from JSON: servers' answers, config files, the adapter's own caches. */

/** A JSON object: not null, not an array. */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Whatever was thrown, as an Error (a rejected promise may carry anything). */
export function toError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

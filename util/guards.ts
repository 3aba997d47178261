/**
 * Narrowing for values read from JSON (servers' answers, config files, the adapter's own caches), and naming what
 * was found instead when a value is not what it must be.
 */

/**
 * A JSON object: a plain object (JSON.parse's, or a TOML table, which has no prototype). Not null, an array, or an
 * instance of a class (a TOML date is a `Date`).
 */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** A text's JSON value, or undefined when it is not JSON (an error body or message that may or may not hold some). */
export function parseJsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A short description of a value for "must be X (got Y)" messages; never the text of a string (it may be a secret). */
export function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  switch (typeof value) {
    case "string":
      return "a string";
    case "number":
    case "boolean":
      return `${typeof value === "number" ? "the number" : "the boolean"} ${String(value)}`;
    case "object":
      return "an object";
    default:
      return typeof value;
  }
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A thrown error's `code` ("ENOENT", "ELOCKED"), if it has one. */
export function errorCode(error: unknown): string | undefined {
  const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === "string" ? code : undefined;
}

/** Whatever was thrown, as an Error (a rejected promise may carry anything). */
export function toError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

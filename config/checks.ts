/**
 * The checks of a config value, each saying what it expected (and what it got) when the value does not fit: the
 * vocabulary of config/entry.ts (server fields) and config/settings.ts (`settings`), so the same kind of field is
 * checked, and worded, the same way in both.
 */
import { describeValue, isJsonObject } from "../util/guards.ts";
import {
  TOOL_EXPOSURES,
  type ApprovalRule,
  type AuthKind,
  type OutputGuard,
  type TaskSettings,
  type ToolExposure,
  type ToolPrefixMode,
  type TransportKind,
} from "../types.ts";

/**
 * A value that fits, or what was expected; `at` names the part of the value that did not fit (`[2]`, `.key`). A value
 * of fields may fit with some fields left out (`leftOut`, each a warning): one bad field costs only itself.
 */
type Checked<T> = { ok: true; value: T; leftOut?: LeftOut[] } | { ok: false; expected: string; at?: string };
/** A part of a value that was left out, and what was expected there. */
export interface LeftOut {
  at: string;
  expected: string;
}
export type Check<T> = (value: unknown) => Checked<T>;
export type CheckedType<C> = C extends Check<infer T> ? T : never;

/** What a bad value falls back to (with a warning) instead of costing the server or the setting. */
export interface Fallback {
  /** Said after the problem: what applies instead. */
  means: string;
  /** Used in its place; none = the field is left out (its default applies). */
  value?: unknown;
}

const TOOL_PREFIXES: readonly ToolPrefixMode[] = ["server", "short", "none", "mcp"];
/** Spellings of `type` found in real host files. */
const TRANSPORT_NAMES: Readonly<Record<string, TransportKind>> = {
  stdio: "stdio",
  http: "http",
  "streamable-http": "http",
  streamableHttp: "http",
  streamable_http: "http",
  sse: "sse",
};

export const boolean: Check<boolean> = (value) =>
  typeof value === "boolean" ? { ok: true, value } : { ok: false, expected: `must be true or false (got ${describeValue(value)})` };

export const nonEmptyString: Check<string> = (value) =>
  typeof value === "string" && value.trim() !== ""
    ? { ok: true, value }
    : { ok: false, expected: `must be a non-empty string (got ${value === "" ? "an empty string" : describeValue(value)})` };

export const string: Check<string> = (value) =>
  typeof value === "string" ? { ok: true, value } : { ok: false, expected: `must be a string (got ${describeValue(value)})` };

export const stringList: Check<string[]> = (value) => {
  if (!Array.isArray(value)) return { ok: false, expected: `must be an array of strings (got ${describeValue(value)})` };
  const bad = value.findIndex((item) => typeof item !== "string");
  if (bad >= 0) return { ok: false, at: `[${bad}]`, expected: `must be a string (got ${describeValue(value[bad])})` };
  return { ok: true, value: value as string[] };
};

export const stringMap: Check<Record<string, string>> = (value) => {
  if (!isJsonObject(value)) return { ok: false, expected: `must be an object of strings (got ${describeValue(value)})` };
  const bad = Object.entries(value).find(([, item]) => typeof item !== "string");
  if (bad) return { ok: false, at: `.${bad[0]}`, expected: `must be a string (got ${describeValue(bad[1])})` };
  return { ok: true, value: { ...(value as Record<string, string>) } };
};

export function oneOf<T extends string>(allowed: readonly T[]): Check<T> {
  return (value) =>
    typeof value === "string" && (allowed as readonly string[]).includes(value)
      ? { ok: true, value: value as T }
      : { ok: false, expected: `must be one of ${allowed.map((item) => `"${item}"`).join(", ")} (got ${quoteIfString(value)})` };
}

function quoteIfString(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value) : describeValue(value);
}

export function number(minimum: number, inclusive: boolean): Check<number> {
  const bound = inclusive ? `≥ ${minimum}` : `> ${minimum}`;
  return (value) =>
    typeof value === "number" && Number.isFinite(value) && (inclusive ? value >= minimum : value > minimum)
      ? { ok: true, value }
      : { ok: false, expected: `must be a number ${bound} (got ${describeValue(value)})` };
}

export const positiveWholeNumber: Check<number> = (value) =>
  typeof value === "number" && Number.isInteger(value) && value > 0
    ? { ok: true, value }
    : { ok: false, expected: `must be a whole number > 0 (got ${describeValue(value)})` };

export const booleanOrStringList: Check<boolean | string[]> = (value) =>
  typeof value === "boolean" ? { ok: true, value } : withExpectation(stringList(value), "must be true, false or an array of strings");

/** `"search"` is upstream's name for what we always do (tools found through search): the same as `false`. */
export const directToolsField: Check<boolean | string[]> = (value) =>
  value === "search"
    ? { ok: true, value: false }
    : withExpectation(booleanOrStringList(value), `must be true, false, "search" or an array of strings (got ${quoteIfString(value)})`);

export const directToolsSetting: Check<boolean> = (value) =>
  value === "search"
    ? { ok: true, value: false }
    : withExpectation(boolean(value), `must be true, false or "search" (got ${quoteIfString(value)})`);

export const approvalRule: Check<ApprovalRule> = (value) =>
  withExpectation(booleanOrStringList(value), `must be true, false or an array of tool names or patterns (got ${quoteIfString(value)})`);

/** A time limit in milliseconds; upstream's `<= 0` (= the default) is accepted and left out. */
export const timeLimit: Check<number | undefined> = (value) =>
  typeof value === "number" && Number.isFinite(value)
    ? { ok: true, value: value > 0 ? value : undefined }
    : { ok: false, expected: `must be a number of milliseconds (got ${describeValue(value)})` };

/**
 * `{ waitMs, maxRunMs, optional }`: milliseconds (a wait of 0 hands a task back at once), and "plain" or "task". A bad
 * or unknown field is left out on its own: the others still apply.
 */
export const taskSettings: Check<TaskSettings> = (value) => {
  if (!isJsonObject(value))
    return { ok: false, expected: `must be an object { "waitMs", "maxRunMs", "optional" } (got ${describeValue(value)})` };
  const fields: Readonly<Record<string, Check<unknown>>> = {
    waitMs: number(0, true),
    maxRunMs: number(0, false),
    optional: oneOf(["plain", "task"] as const),
  };
  const settings: Record<string, unknown> = {};
  const leftOut: LeftOut[] = [];
  for (const [key, item] of Object.entries(value)) {
    const check = Object.hasOwn(fields, key) ? fields[key]! : undefined;
    const checked = check?.(item) ?? { ok: false, expected: `is not a field of it (its fields: "waitMs", "maxRunMs", "optional")` };
    if (checked.ok) settings[key] = checked.value;
    else leftOut.push({ at: `.${key}${checked.at ?? ""}`, expected: checked.expected });
  }
  return { ok: true, value: settings as TaskSettings, ...(leftOut.length > 0 ? { leftOut } : {}) };
};

const OUTPUT_GUARD_LIMITS = ["maxBytes", "maxLines"] as const;

/** `true`, `false` or `{ maxBytes, maxLines }` (whole numbers > 0); upstream's other keys are ignored. */
export const outputGuard: Check<OutputGuard> = (value) => {
  if (typeof value === "boolean") return { ok: true, value };
  const expected = `must be true, false or { "maxBytes", "maxLines" } (got ${describeValue(value)})`;
  if (!isJsonObject(value)) return { ok: false, expected };
  const limits: { maxBytes?: number; maxLines?: number } = {};
  for (const key of OUTPUT_GUARD_LIMITS) {
    if (value[key] === undefined) continue;
    const limit = positiveWholeNumber(value[key]);
    if (!limit.ok) return { ...limit, at: `.${key}` };
    limits[key] = limit.value;
  }
  return { ok: true, value: limits };
};

function withExpectation<T>(checked: Checked<T>, expected: string): Checked<T> {
  return checked.ok || checked.at !== undefined ? checked : { ok: false, expected };
}

export const plainObject: Check<Record<string, unknown>> = (value) =>
  isJsonObject(value) ? { ok: true, value } : { ok: false, expected: `must be an object (got ${describeValue(value)})` };

export const port: Check<number> = (value) =>
  typeof value === "number" && Number.isInteger(value) && value >= 1 && value <= 65535
    ? { ok: true, value }
    : { ok: false, expected: `must be a port number from 1 to 65535 (got ${describeValue(value)})` };

/** What the SDK accepts as a client ID metadata document address (SEP-991): HTTPS, with a path. */
export const clientMetadataUrl: Check<string> = (value) => {
  if (typeof value !== "string") return { ok: false, expected: `must be a string (got ${describeValue(value)})` };
  const url = URL.canParse(value) ? new URL(value) : undefined;
  return url?.protocol === "https:" && url.pathname !== "/"
    ? { ok: true, value }
    : { ok: false, expected: "must be an https:// URL with a path (the address of the client's metadata document)" };
};

/** The hosts where plain http stays on this machine (RFC 8252's loopback addresses, and `localhost`). */
const LOOPBACK_HOSTS = ["localhost", "127.0.0.1", "[::1]"];

/** A document OAuth relies on: HTTPS, or http on a loopback address (as Pi's built-in requires). */
export const secureHttpUrl: Check<string> = (value) => {
  const url = typeof value === "string" && URL.canParse(value) ? new URL(value) : undefined;
  const secure = url?.protocol === "https:" || (url?.protocol === "http:" && LOOPBACK_HOSTS.includes(url.hostname));
  return secure
    ? { ok: true, value: value as string }
    : { ok: false, expected: "must be an https:// URL (http:// only on localhost, 127.0.0.1 or [::1])" };
};

export const httpUrl: Check<string> = (value) => {
  if (typeof value !== "string") return { ok: false, expected: `must be a string (got ${describeValue(value)})` };
  const problem = checkUrl(value);
  return problem ? { ok: false, expected: problem } : { ok: true, value };
};

export const transportName: Check<TransportKind> = (value) =>
  typeof value === "string" && Object.hasOwn(TRANSPORT_NAMES, value)
    ? { ok: true, value: TRANSPORT_NAMES[value]! }
    : { ok: false, expected: `must be "stdio", "http" (or "streamable-http") or "sse" (got ${quoteIfString(value)})` };

export const authKind: Check<AuthKind | false> = (value) =>
  value === false
    ? { ok: true, value }
    : withExpectation(oneOf<AuthKind>(["bearer", "oauth"])(value), `must be "bearer", "oauth" or false (got ${quoteIfString(value)})`);

export const toolPrefixMode: Check<ToolPrefixMode> = oneOf(TOOL_PREFIXES);

/** Pi's built-in reads `codemode-deferred` (an older name) as `codemode`. */
export const exposure: Check<ToolExposure> = (value) => oneOf(TOOL_EXPOSURES)(value === "codemode-deferred" ? "codemode" : value);

/** `toolExposure`: tool names or `*` patterns, each mapped to an exposure. */
export const toolExposureMap: Check<Record<string, ToolExposure>> = (value) => {
  if (!isJsonObject(value))
    return { ok: false, expected: `must be an object mapping tool names or patterns to exposures (got ${describeValue(value)})` };
  const map: Record<string, ToolExposure> = {};
  for (const [tool, item] of Object.entries(value)) {
    const checked = exposure(item);
    if (!checked.ok) return { ok: false, at: `.${tool}`, expected: checked.expected };
    map[tool] = checked.value;
  }
  return { ok: true, value: map };
};

/** The http loopback address a sign-in's browser comes back to (Pi's `oauth.callbackUrl`). */
export const loopbackCallbackUrl: Check<URL> = (value) => {
  const url = typeof value === "string" && URL.canParse(value) ? new URL(value) : undefined;
  return url && url.protocol === "http:" && LOOPBACK_HOSTS.includes(url.hostname) && !url.search && !url.hash
    ? { ok: true, value: url }
    : { ok: false, expected: "must be an http:// address on localhost, 127.0.0.1 or [::1] without query or fragment" };
};

/** A problem with an http(s) URL, or undefined when it is one. */
export function checkUrl(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `${quoteUnparsedUrl(url)} is not a valid URL`;
  }
  return parsed.protocol === "http:" || parsed.protocol === "https:"
    ? undefined
    : `must be an http:// or https:// URL (got ${parsed.protocol})`;
}

/** A URL that does not parse, quoted for a message without what may carry a credential: user info, query, fragment. */
function quoteUnparsedUrl(url: string): string {
  const withoutUserInfo = url.replace(/^([a-z][a-z0-9+.-]*:\/*)[^/@]*@/i, "$1");
  const cut = withoutUserInfo.search(/[?#]/);
  return JSON.stringify(cut < 0 ? withoutUserInfo : `${withoutUserInfo.slice(0, cut + 1)}…`);
}

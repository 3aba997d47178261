/**
 * TOON (a shorter notation for JSON, read as easily by a model): a tool's JSON text is encoded when that is shorter.
 * The encoder is loaded on first use (`loadToonEncoder`), not at every Pi start.
 */
import type { McpSettings } from "../types.ts";
import { lazyLoad } from "../util/lazy-load.ts";
import { ignored } from "../util/debug-log.ts";

/** TOON is tried on JSON up to this size; anything larger is truncated anyway, so encoding it would be wasted. */
const MAX_TOON_INPUT_BYTES = 1024 * 1024;

type ToonEncode = typeof import("@toon-format/toon").encode;
let encodeToon: ToonEncode | undefined;
const toonModule = lazyLoad(() => import("@toon-format/toon"));

/**
 * Loads the TOON encoder. Callers that enable `toonEncode` await it before transforming (until then JSON stays
 * JSON): it is loaded when a server needs it rather than at every Pi start.
 */
export function loadToonEncoder(): Promise<void> {
  return toonModule().then((toon) => {
    encodeToon = toon.encode;
  }, ignored("loading the TOON encoder (the next call tries again; JSON stays JSON meanwhile)"));
}

/** `settings.toonEncode`: true for every server, or the names of the servers whose JSON is TOON-encoded. */
export function isToonEnabled(setting: McpSettings["toonEncode"], serverName: string | undefined): boolean {
  if (setting === true) return true;
  return Array.isArray(setting) && serverName !== undefined && setting.includes(serverName);
}

/** JSON objects and arrays become TOON when that is shorter; any other text is returned unchanged. */
export function toToonIfShorter(value: string): string {
  const trimmed = value.trim();
  if (!encodeToon || !(trimmed.startsWith("{") || trimmed.startsWith("[")) || trimmed.length > MAX_TOON_INPUT_BYTES) return value;
  try {
    const parsed: unknown = JSON.parse(trimmed);
    if (typeof parsed !== "object" || parsed === null) return value;
    const encoded = encodeToon(parsed);
    // TOON writes an empty object as nothing at all, which would read as a missing result.
    return encoded.trim() !== "" && encoded.length < value.length ? encoded : value;
  } catch {
    return value;
  }
}

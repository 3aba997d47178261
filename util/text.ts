/**
 * Plain-text helpers every module shares: a long text made one short line (for a list, a message, a catalog), and
 * the one order of strings. One module, so that the same kind of text is cut the same way everywhere, and so that
 * sorted output (the ToolSearch catalog, tool names, cache files) does not depend on the machine's locale.
 */

/**
 * How `oneLine` makes a long text one line:
 * - `summary`: the text's first line only, cut at a word boundary, trailing punctuation dropped: a description's
 *   gist, as the ToolSearch catalog lists it.
 * - `excerpt`: every line, joined by single spaces, cut exactly at the limit: what someone sent (an error body, a
 *   description in an answer), as much of it as fits.
 */
export type OneLineRule = "summary" | "excerpt";

/** At most `maxChars` characters on one line; "…" ends a text that was cut. */
export function oneLine(text: string, maxChars: number, rule: OneLineRule): string {
  return rule === "summary" ? summaryLine(text, maxChars) : truncate(collapseWhitespace(text), maxChars);
}

/** Every run of whitespace (newlines too) as one space, none at either end. */
export function collapseWhitespace(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/**
 * The text without control characters (C0, DEL, C1), each replaced by a space: text from elsewhere (a registry's
 * listing, a file) shown in the terminal must not carry escape sequences that redraw or recolour it.
 */
export function withoutControlCharacters(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, " ");
}

/** The text, or its first `maxChars - 1` characters and "…": never longer than `maxChars`. */
export function truncate(text: string, maxChars: number): string {
  return text.length <= maxChars ? text : `${text.slice(0, maxChars - 1)}…`;
}

/** The first `max` items, comma-separated, "…" after them when there are more: a list kept to one short line. */
export function firstItems(items: readonly string[], max: number): string {
  return items.length <= max ? items.join(", ") : `${items.slice(0, max).join(", ")}, …`;
}

/** A value of any shape as text: a string as it is, anything else as JSON (or what `String` makes of it). */
export function asText(value: unknown): string {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Code-unit order, the same on every machine (unlike `localeCompare`): for output that must be byte-stable. */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function summaryLine(text: string, maxChars: number): string {
  // Descriptions run to tens of kilobytes: only the start can be shown, so only the start is read.
  const start = String(text ?? "")
    .trimStart()
    .slice(0, maxChars * 4);
  const line = start.split(/\r?\n/, 1)[0].trimEnd().replace(/\s+/g, " ");
  if (line.length <= maxChars) return line;
  const cut = line.slice(0, maxChars - 1);
  const space = cut.lastIndexOf(" ");
  return `${(space > maxChars / 2 ? cut.slice(0, space) : cut).replace(/[\s,.;:]+$/, "")}…`;
}

/** Text safe inside HTML, as an element's content or an attribute's value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

/**
 * Editing our own config files from inside Pi (`/mcp enable | disable | add | remove`). Each change is one edit of
 * the server's entry (jsonc-parser's, or a removal of the entry's own lines), so comments, key order and formatting
 * everywhere else stay byte for byte as the user wrote them (an inserted entry is formatted in the file's own
 * indentation, and only it; a comment beside the entry before it stays there). A file that does not parse
 * is refused, never rewritten; an unwritable one is refused before anything is written; the new content replaces
 * the file atomically (util/atomic-file.ts), keeping its permissions.
 */
import { constants } from "node:fs";
import { access, mkdir, readFile, stat } from "node:fs/promises";
import { dirname } from "node:path";
import type { Edit, FormattingOptions, JSONPath, ParseError, Range } from "jsonc-parser";
import { writeFileAtomic } from "../util/atomic-file.ts";
import { syntaxErrorPlace } from "./files.ts";
import { acquireFileLock, DEFAULT_LOCK_TIMEOUT_MS } from "../util/file-lock.ts";
import { errorCode, errorMessage, isJsonObject } from "../util/guards.ts";
import { lazyRequire } from "../util/lazy-load.ts";
import { ignored } from "../util/debug-log.ts";

/** One change: the value at `path` set (an object or a field), or removed when `value` is undefined. */
interface ConfigEdit {
  path: JSONPath;
  value: unknown;
}

/** What a file holds before an edit: its text and its parsed top level. */
interface ConfigText {
  text: string;
  data: Record<string, unknown>;
  mode: number | undefined;
}

/** Loaded by the first edit, not with the extension: most sessions edit nothing. */
const parser = lazyRequire<typeof import("jsonc-parser")>("jsonc-parser");

/** Enables or disables `name` in `file`: its own entry, or an override entry `{ "enabled": … }` created for it. */
export function writeServerEnabled(file: string, name: string, enabled: boolean): Promise<void> {
  return editConfigFile(file, (data) => {
    const key = serverTableKey(data);
    const entry = serverEntry(data, name);
    // `disabled: true` would win over `enabled`: one field says it.
    const stale = isJsonObject(entry) && "disabled" in entry ? [{ path: [key, name, "disabled"], value: undefined }] : [];
    return [...stale, { path: [key, name, "enabled"], value: enabled }];
  });
}

/** Adds a new server entry; refuses a name the file has already. */
export function writeServerEntry(file: string, name: string, entry: Record<string, unknown>): Promise<void> {
  return editConfigFile(file, (data) => {
    if (serverEntry(data, name) !== undefined) throw new Error(`${file} already has a server named "${name}"`);
    return [{ path: [serverTableKey(data), name], value: entry }];
  });
}

/** Adds hosts to the file's `imports` (creating it); those it lists already stay where they are. */
export function writeImports(file: string, kinds: readonly string[]): Promise<void> {
  return editConfigFile(file, (data) => {
    if (data.imports !== undefined && !Array.isArray(data.imports)) {
      throw new Error(`${file}: "imports" is not an array; fix it before changing it from Pi`);
    }
    const current: unknown[] = data.imports ?? [];
    const added = kinds.filter((kind) => !current.includes(kind));
    return added.length === 0 ? [] : [{ path: ["imports"], value: [...current, ...added] }];
  });
}

/** Removes the server's entry; refuses when the file has none. */
export function removeServerEntry(file: string, name: string): Promise<void> {
  return editConfigFile(file, (data) => {
    if (serverEntry(data, name) === undefined) throw new Error(`${file} has no server named "${name}"`);
    return [{ path: [serverTableKey(data), name], value: undefined }];
  });
}

/** The key of the file's server table: `mcpServers`, unless the file only has upstream's `mcp-servers`. */
function serverTableKey(data: Record<string, unknown>): string {
  return data.mcpServers === undefined && data["mcp-servers"] !== undefined ? "mcp-servers" : "mcpServers";
}

/** The file's entry for `name`, as written (undefined when it has none). */
function serverEntry(data: Record<string, unknown>, name: string): unknown {
  const table = data[serverTableKey(data)];
  return isJsonObject(table) && Object.hasOwn(table, name) ? table[name] : undefined;
}

/**
 * Applies the edits `plan` makes from the file's content, in order, and replaces the file. Errors name the file.
 * Under the cross-process lock: two Pi sessions changing the same file at once must not undo each other's edit.
 */
async function editConfigFile(file: string, plan: (data: Record<string, unknown>) => ConfigEdit[]): Promise<void> {
  await mkdir(dirname(file), { recursive: true }).catch(ignored(`creating the folder of ${file} (the lock lives beside the file)`));
  const release = await acquireFileLock(file, DEFAULT_LOCK_TIMEOUT_MS, () => {});
  if (typeof release === "string") throw new Error(release.replace(/; write skipped$/, ""));
  try {
    await editLocked(file, plan);
  } finally {
    await release().catch(ignored(`releasing the lock of ${file}`));
  }
}

async function editLocked(file: string, plan: (data: Record<string, unknown>) => ConfigEdit[]): Promise<void> {
  const { text, data, mode } = await readForEdit(file);
  const edits = plan(data);
  await ensureWritable(file);
  let next = text;
  for (const edit of edits) next = applyEdit(next, edit);
  if (!next.endsWith("\n")) next += detectEol(text);
  try {
    await writeFileAtomic(file, next, { mode });
  } catch (error) {
    throw new Error(`cannot write ${file}: ${reason(error)}`, { cause: error });
  }
}

async function readForEdit(file: string): Promise<ConfigText> {
  let text: string;
  let mode: number | undefined;
  try {
    text = await readFile(file, "utf8");
    mode = (await stat(file)).mode & 0o777;
  } catch (error) {
    if (errorCode(error) === "ENOENT") return { text: "", data: {}, mode: undefined };
    throw new Error(`cannot read ${file}: ${reason(error)}`, { cause: error });
  }
  if (text.replace(/^\uFEFF/, "").trim() === "") return { text, data: {}, mode };
  const errors: ParseError[] = [];
  const data = parser().parse(text, errors, { allowTrailingComma: true }) as unknown;
  if (errors.length > 0) {
    throw new Error(`${file} has a syntax error at ${syntaxErrorPlace(text, errors[0]!.offset)}; fix it before changing it from Pi`);
  }
  if (!isJsonObject(data)) throw new Error(`${file}: the top level must be a JSON object; fix it before changing it from Pi`);
  return { text, data, mode };
}

async function ensureWritable(file: string): Promise<void> {
  try {
    await access(file, constants.W_OK);
  } catch (error) {
    if (errorCode(error) === "ENOENT") return; // created by the write (its folder is checked then)
    throw new Error(`cannot write ${file}: ${reason(error)}`, { cause: error });
  }
}

function applyEdit(text: string, edit: ConfigEdit): string {
  const { modify, applyEdits, format } = parser();
  if (edit.value === undefined) {
    const removal = removeProperty(text, edit.path);
    if (removal) return removal;
  }
  const formatting = formattingOf(text);
  const edits = modify(text, edit.path, edit.value, { formattingOptions: undefined });
  if (edit.value === undefined || edits.length !== 1) return applyEdits(text, edits);
  // Formatting through `modify` would re-indent the sibling before the insertion too: only the new text is formatted.
  const { changed, range } = placeInsertion(text, edits[0]!, edit.path, formatting.eol!);
  return applyEdits(changed, format(changed, range, formatting));
}

/**
 * The text `modify` inserts, placed, and the range to format: a new property after one with a comment on its line
 * goes after that comment, on a line of its own (`modify` puts it before the comment, which then seems to be the new
 * property's); the first property of an empty object is formatted with the object's braces, so that it gets lines of
 * its own (`"mcpServers": {}` became `"mcpServers": {"name": {`, its closing brace `}},`).
 */
function placeInsertion(text: string, edit: Edit, path: JSONPath, eol: string): { changed: string; range: Range } {
  const { applyEdits } = parser();
  const comment = edit.content.startsWith(",") ? TRAILING_COMMENT.exec(text.slice(edit.offset)) : null;
  if (!comment) {
    const changed = applyEdits(text, [edit]);
    const first = edit.length === 0 && !edit.content.startsWith(",");
    const object = first ? insertedInto(text, changed, path) : undefined;
    const start = Math.min(edit.offset, object?.offset ?? edit.offset);
    const end = Math.max(edit.offset + edit.content.length, object ? object.offset + object.length : 0);
    return { changed, range: { offset: start, length: end - start } };
  }
  const at = edit.offset + comment[0].length;
  const content = eol + edit.content.slice(1);
  const changed = `${text.slice(0, edit.offset)},${text.slice(edit.offset, at)}${content}${text.slice(at)}`;
  return { changed, range: { offset: at + 1, length: content.length } };
}

/** In `changed`, the object of `text` that got the new property at `path`: the deepest one on the path that existed. */
function insertedInto(text: string, changed: string, path: JSONPath): Range | undefined {
  const { findNodeAtLocation, parseTree } = parser();
  const before = parseTree(text, [], { allowTrailingComma: true });
  const after = parseTree(changed, [], { allowTrailingComma: true });
  if (!before || !after) return undefined;
  let depth = path.length - 1;
  while (depth > 0 && !findNodeAtLocation(before, path.slice(0, depth))) depth--;
  return findNodeAtLocation(after, path.slice(0, depth));
}

/** A comment after a property, on its line. */
const TRAILING_COMMENT = /^[ \t]*(?:\/\/[^\n]*|\/\*[^\n]*?\*\/)/;

/**
 * The property at `path` taken out as the user would: with its lines when it has lines of its own (a comment after
 * it on its line goes too), else with the space after it; its own comma goes with it, and the last one's comma before
 * it does. jsonc-parser's `modify` pulls the next property up onto the line of the `{` instead (or re-indents
 * everything when asked to format). Undefined when nothing is left around it: `modify` removes it then.
 */
function removeProperty(text: string, path: JSONPath): string | undefined {
  const { parseTree, findNodeAtLocation } = parser();
  const property = findNodeAtLocation(parseTree(text, [], { allowTrailingComma: true })!, path)?.parent;
  const siblings = property?.parent?.children;
  if (property?.type !== "property" || !siblings) return undefined;
  const index = siblings.indexOf(property);
  const end = property.offset + property.length;
  const comma = commaAfter(text, end);
  const previous = index === siblings.length - 1 && index > 0 ? siblings[index - 1]! : undefined;
  const previousEnd = previous ? previous.offset + previous.length : undefined;
  const lineStart = text.lastIndexOf("\n", property.offset - 1) + 1;
  const restOfLine = LINE_END.exec(text.slice(comma ?? end))?.[0];
  if (text.slice(lineStart, property.offset).trim() === "" && restOfLine !== undefined) {
    const without = text.slice(0, lineStart) + text.slice((comma ?? end) + restOfLine.length);
    const previousComma = previousEnd === undefined ? undefined : commaAfter(text, previousEnd);
    return previousComma === undefined ? without : without.slice(0, previousComma - 1) + without.slice(previousComma);
  }
  if (comma !== undefined) return text.slice(0, property.offset) + text.slice(comma).replace(/^[ \t]+/, "");
  if (previousEnd !== undefined) return text.slice(0, previousEnd) + text.slice(end);
  return undefined;
}

/** The rest of a line after a property: blanks, perhaps a comment, the line break. */
const LINE_END = /^[ \t]*(?:\/\/[^\n]*|\/\*[^\n]*?\*\/[ \t]*)?\r?\n/;

/** Whitespace and comments, then a comma. */
const COMMA_AHEAD = /^(?:\s|\/\/[^\n]*|\/\*[\s\S]*?\*\/)*,/;

/** The offset just past the comma that follows `offset` (whitespace and comments between), if one does. */
function commaAfter(text: string, offset: number): number | undefined {
  const match = COMMA_AHEAD.exec(text.slice(offset));
  return match ? offset + match[0].length : undefined;
}

/** The file's own indentation and line ends (two spaces for a new file). */
function formattingOf(text: string): FormattingOptions {
  const indent = /^([ \t]+)\S/m.exec(text)?.[1];
  const eol = detectEol(text);
  if (indent?.startsWith("\t")) return { insertSpaces: false, tabSize: 4, eol };
  return { insertSpaces: true, tabSize: indent?.length ?? 2, eol };
}

function detectEol(text: string): string {
  return text.includes("\r\n") ? "\r\n" : "\n";
}

function reason(error: unknown): string {
  return errorCode(error) ?? errorMessage(error);
}

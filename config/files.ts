/**
 * Reading config files. A file that does not exist is simply absent; anything else that goes wrong (permissions,
 * a directory in its place, a syntax error) is a problem naming the file, with line and column when known (or end of file).
 */
import { readFileSync } from "node:fs";
import type { ParseError } from "jsonc-parser";
import { configProblem } from "./problems.ts";
import { errorCode, errorMessage, isJsonObject } from "../util/guards.ts";
import { lazyRequire } from "../util/lazy-load.ts";
import type { ConfigProblem } from "../types.ts";

export type FileRead = { status: "absent" } | { status: "error"; problem: ConfigProblem } | { status: "ok"; data: Record<string, unknown> };

const ABSENT_CODES = new Set(["ENOENT", "ENOTDIR"]);

export type ConfigFormat = "json" | "toml";

/**
 * JSON files are read as JSONC (comments and trailing commas), because VS Code and Cursor write their `mcp.json`
 * that way; a strict JSON file reads the same. An empty file is an empty config.
 */
export function readConfigFile(file: string, format: ConfigFormat): FileRead {
  let text: string;
  try {
    text = readFileSync(file, "utf8").replace(/^\uFEFF/, "");
  } catch (error) {
    const code = errorCode(error);
    if (code !== undefined && ABSENT_CODES.has(code)) return { status: "absent" };
    return failure(file, `cannot read the file (${code ?? errorMessage(error)})`);
  }
  if (text.trim() === "") return { status: "ok", data: {} };
  const parsed = format === "json" ? parseJson(text) : parseTomlText(text);
  if ("error" in parsed) return failure(file, parsed.error);
  if (!isJsonObject(parsed.value)) return failure(file, `the top level must be ${format === "json" ? "a JSON object" : "a TOML table"}`);
  return { status: "ok", data: parsed.value };
}

/**
 * The JSONC and TOML parsers are loaded on first use: most configs are plain JSON and no Codex file is imported, and
 * loading both would add ~20 ms to every Pi start. (`require`, because config loading is synchronous.)
 */
const jsoncParser = lazyRequire<typeof import("jsonc-parser")>("jsonc-parser");
const tomlParser = lazyRequire<typeof import("smol-toml")>("smol-toml");

function failure(file: string, text: string): FileRead {
  return { status: "error", problem: configProblem("error", { file }, text) };
}

function parseJson(text: string): { value: unknown } | { error: string } {
  // The native parser first: `~/.claude.json` can be megabytes, and JSONC parsing is an order of magnitude slower.
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    // Comments, trailing commas, or a real error: the JSONC parser accepts the first two and locates the third.
  }
  const jsonc = jsoncParser();
  const errors: ParseError[] = [];
  const value: unknown = jsonc.parse(text, errors, { allowTrailingComma: true });
  const first = errors[0];
  if (!first) return { value };
  return { error: `invalid JSON at ${syntaxErrorPlace(text, first.offset)}: ${describeJsonError(jsonc.printParseErrorCode(first.error))}` };
}

/** `CommaExpected` → `comma expected`. */
function describeJsonError(code: string): string {
  return code.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase();
}

/** `line 4, column 5`; `end of file` for what the text ended without (a close brace), where no line or column helps. */
export function syntaxErrorPlace(text: string, offset: number): string {
  if (offset >= text.length) return "end of file";
  const before = text.slice(0, offset);
  const lineStart = before.lastIndexOf("\n") + 1;
  return `line ${before.split("\n").length}, column ${offset - lineStart + 1}`;
}

function parseTomlText(text: string): { value: unknown } | { error: string } {
  const toml = tomlParser();
  try {
    return { value: toml.parse(text) };
  } catch (error) {
    if (!(error instanceof toml.TomlError)) throw error;
    // smol-toml appends a code excerpt after a blank line; the first line is the reason.
    const reason = error.message.split("\n")[0]!.replace(/^Invalid TOML document: /, "");
    return { error: `invalid TOML at line ${error.line}, column ${error.column}: ${reason}` };
  }
}

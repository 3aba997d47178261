/**
 * How the MCP commands read and complete their arguments: the prompt commands (`/mcp__<server>__<prompt>`) and
 * `/mcp-resource` take them alike, positional in the declared order (the last one taking the words left over) or
 * `name=value`, quotes for spaces; a required one left out is asked for through Pi's UI.
 *
 * Completion (`getArgumentCompletions`, awaited on every host) offers the values the server suggests for the argument
 * being typed (`completion/complete`, with the values already typed as its context), then `name=` for each argument
 * not given yet. Pi replaces the whole argument text with the item chosen, so each item is the text typed so far with
 * its last word completed (quoted when the value has spaces or quotes).
 */
import type { ExtensionCommandContext } from "@mariozechner/pi-coding-agent";
import type { CompletionRequest } from "../server-manager.ts";
import type { McpExtensionState } from "../state.ts";
import type { McpPrompt, McpPromptArgument } from "../types.ts";
import { waitAtMost } from "../util/abort.ts";
import { debugLog } from "../util/debug-log.ts";

export type Values = { values: Record<string, string> } | { error: string };

/** A word that sets an argument by name: `name=value`. */
const NAMED_VALUE = /^([^=\s]+)=([\s\S]*)$/;

/**
 * Positional words fill the arguments not named, in order, the last one taking the words left over (a last argument of
 * several words needs no quotes); `name=value` sets one by name.
 */
export function readArguments(declared: readonly McpPromptArgument[], text: string): Values {
  const words = splitWords(text);
  if ("error" in words) return words;
  const values: Record<string, string> = {};
  const positional: string[] = [];
  for (const word of words.words) {
    const named = NAMED_VALUE.exec(word);
    if (named && declared.some((arg) => arg.name === named[1])) values[named[1]!] = named[2]!;
    else positional.push(word);
  }
  const open = declared.filter((arg) => !(arg.name in values));
  if (positional.length > 0 && open.length === 0) {
    return { error: declared.length === 0 ? "it takes no arguments." : `too many arguments ("${positional.join(" ")}").` };
  }
  positional.forEach((word, index) => {
    const arg = open[Math.min(index, open.length - 1)]!;
    values[arg.name] = index < open.length ? word : `${values[arg.name]} ${word}`;
  });
  return { values };
}

/** Words separated by spaces; "double" or 'single' quotes keep spaces (and `\"` inside double quotes). */
function splitWords(text: string): { words: string[] } | { error: string } {
  const { words, quote } = scanWords(text);
  return quote ? { error: `a ${quote} quote is not closed.` } : { words: words.map((word) => word.text) };
}

interface ScannedWords {
  /** Each word without its quotes, and where it starts in the text. */
  words: { text: string; start: number }[];
  /** The quote still open at the end of the text. */
  quote?: string;
  /** The text ends inside its last word (no space after it). */
  endsInWord: boolean;
}

function scanWords(text: string): ScannedWords {
  const words: ScannedWords["words"] = [];
  let word: ScannedWords["words"][number] | undefined;
  let quote: string | undefined;
  for (let index = 0; index < text.length; index++) {
    const char = text[index]!;
    const space = /\s/.test(char);
    if (!word && !space) {
      word = { text: "", start: index };
      words.push(word);
    }
    if (quote) {
      if (char === quote) quote = undefined;
      else if (char === "\\" && quote === '"' && text[index + 1] === '"') word!.text += text[++index];
      else word!.text += char;
    } else if (char === '"' || char === "'") quote = char;
    else if (space) word = undefined;
    else word!.text += char;
  }
  return { words, quote, endsInWord: word !== undefined };
}

/** Required arguments not given: asked for one by one where there is a UI; reported where there is none. */
export async function askMissing(prompt: McpPrompt, values: Record<string, string>, ctx: ExtensionCommandContext): Promise<Values> {
  const missing = (prompt.arguments ?? []).filter((arg) => arg.required && !(arg.name in values));
  if (missing.length === 0) return { values };
  if (!ctx.hasUI)
    return { error: `missing required ${missing.length === 1 ? "argument" : "arguments"} ${missing.map((arg) => arg.name).join(", ")}.` };
  const asked = { ...values };
  for (const arg of missing) {
    const answer = await ctx.ui.input(`${prompt.name}: ${arg.name}${arg.description ? ` (${arg.description})` : ""}`, arg.name);
    if (answer === undefined) return { error: `cancelled (no ${arg.name} given).` };
    asked[arg.name] = answer;
  }
  return { values: asked };
}

/** Values shown at most: a server may send 100, and a long list helps nobody type. */
const MAX_VALUES_SHOWN = 30;
/**
 * How long the list waits for a server's suggestions (connecting it first if it is not running: the user is about to
 * use it). Pi's editor keeps taking keys meanwhile, but shows no list; past this, the argument names alone are offered.
 */
const SUGGESTION_WAIT_MS = 2_000;

/** What asking a server for suggestions uses of the session. */
export type SuggestionContext = Pick<McpExtensionState, "manager" | "lifecycle" | "servers" | "shutDown">;

/**
 * The server's suggestions (`completion/complete`), or none: from a server disabled, without the capability (never
 * asked), failing, or slower than SUGGESTION_WAIT_MS. The server is connected if it is not.
 */
export async function serverSuggestions(
  state: SuggestionContext | undefined,
  serverName: string,
  request: CompletionRequest,
): Promise<string[]> {
  if (!state || state.shutDown || state.servers.get(serverName)?.enabled === false) return [];
  try {
    const connect = () => state.lifecycle.ensureConnected(serverName);
    const values = state.manager.complete(serverName, request, { connect, timeoutMs: SUGGESTION_WAIT_MS });
    return (await waitAtMost(values, SUGGESTION_WAIT_MS)) ?? [];
  } catch (error) {
    debugLog(`${serverName}: completing ${request.argument.name}`, error);
    return [];
  }
}

/** An item of Pi's autocomplete list. */
export interface CompletionItem {
  value: string;
  label: string;
  description?: string;
}

/** The server's suggestions for `argument` starting with `value`, the other arguments' values given as `context`. */
export type ValueSuggestions = (argument: string, value: string, context: Record<string, string>) => Promise<string[]>;

/** The items for `prefix` (the argument text before the cursor); null for none, as Pi wants it. */
export async function completeArguments(
  declared: readonly McpPromptArgument[],
  prefix: string,
  suggest: ValueSuggestions,
): Promise<CompletionItem[] | null> {
  const { before, word } = lastWord(prefix);
  const given = readArguments(declared, before);
  const typed = "values" in given ? given.values : {};
  const named = NAMED_VALUE.exec(word);
  const namedArg = named ? declared.find((arg) => arg.name === named[1]) : undefined;
  // The argument the word fills: the one it names, or the first not given yet (the last one takes the words left over).
  const target = namedArg ?? declared.find((arg) => !(arg.name in typed));
  const value = namedArg ? named![2]! : word;
  const items: CompletionItem[] = [];
  if (target) {
    const context = Object.fromEntries(Object.entries(typed).filter(([name]) => name !== target.name));
    const values = await suggest(target.name, value, context);
    for (const suggestion of values.slice(0, MAX_VALUES_SHOWN)) {
      items.push({
        value: `${before}${namedArg ? `${namedArg.name}=` : ""}${quoted(suggestion)}`,
        label: suggestion,
        description: target.name,
      });
    }
  }
  if (!namedArg) {
    for (const arg of declared) {
      if (arg.name in typed || !`${arg.name}=`.startsWith(word)) continue;
      const about = `${arg.required ? "required" : "optional"}${arg.description ? `: ${arg.description}` : ""}`;
      items.push({ value: `${before}${arg.name}=`, label: `${arg.name}=`, description: about });
    }
  }
  return items.length > 0 ? items : null;
}

/**
 * The text before the word being typed, and that word without its quotes (an opening quote may be unclosed: the
 * value is still being typed). After a space outside quotes, the word is empty.
 */
export function lastWord(text: string): { before: string; word: string } {
  const { words, endsInWord } = scanWords(text);
  const last = endsInWord ? words.at(-1) : undefined;
  return last ? { before: text.slice(0, last.start), word: last.text } : { before: text, word: "" };
}

/** A value as one word: quoted when it has spaces or quotes. */
function quoted(value: string): string {
  return /[\s"']/.test(value) ? `"${value.replace(/"/g, '\\"')}"` : value;
}

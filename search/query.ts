/**
 * Reads a ToolSearch request as weighted catalog terms: its own words (stemmed, stop words out), words it runs
 * together or splits differently from the catalog, other words of their families (`creation` / `create`), the
 * nearest catalog word for a typo, synonyms, what the shape of a request asks for (`which tickets…` → a list), and
 * the intents its words name (search/intents.ts).
 */
import { isStopWord, splitWords, stem, termOf, termsOf } from "./words.ts";
import { phraseSynonymsAt, synonymsOf } from "./synonyms.ts";
import { intentTermsOf, isIntentTerm } from "./intents.ts";
import type { Vocabulary } from "./term-reader.ts";

const MAX_QUERY_WORDS = 48;
/** How much a query word counts when it reaches a tool only through a typo's correction. */
const TYPO_WEIGHT = 0.6;
/** How much a query word counts when it reaches a tool through another word of its family (`creation` / `create`). */
const RELATIVE_WEIGHT = 0.5;
/** Each correction scans the vocabulary: a request of made-up words must not cost more than a few. */
const MAX_CORRECTIONS = 6;
/** No catalog word is longer (see search/term-reader.ts); longer query words are not looked into. */
const MAX_WORD_LENGTH = 40;
/** Weight of what a token's shape tells (a file name is about files) next to what its words say. */
const CUE_WEIGHT = 0.5;
/**
 * Weight of an intent one word of the request names (search/intents.ts), next to the words themselves, when the
 * catalog knows all the request's words; up to UNKNOWN_WORDS_INTENT_WEIGHT more as the share it does not know grows.
 */
const INTENT_WEIGHT = 0.25;
const UNKNOWN_WORDS_INTENT_WEIGHT = 1;
/** A request that names an intent twice is about it; more than that is a long request, not a surer one. */
const MAX_INTENT_CUES = 2;

/**
 * Tokens whose shape says what the request is about, whatever their value: `notes.txt` is about a file, `#general`
 * about a channel, `9am` about a time. `keep`: the token's own words still count (`wrangler.toml` names a tool's
 * subject; `#incidents` or `10:30` would only mislead).
 */
const TOKEN_CUES: readonly { pattern: RegExp; terms: string[]; weight: number; keep: boolean }[] = [
  { pattern: /\b(?:https?:\/\/|www\.)\S+/gi, terms: ["url"], weight: 1, keep: false },
  { pattern: /\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g, terms: ["email"], weight: CUE_WEIGHT, keep: false },
  { pattern: /\b[\w-]+(?:\.[\w-]+)*\.(?:com|org|net|io|dev|app|ai|co)\b/gi, terms: ["url"], weight: 1, keep: true },
  { pattern: /(?:^|[\s/])[\w./-]*\.[a-z][a-z0-9]{1,4}\b(?!\.)/gi, terms: ["file"], weight: CUE_WEIGHT, keep: true },
  { pattern: /(?<![\w&])#[a-z][\w-]*/gi, terms: ["channel"], weight: CUE_WEIGHT, keep: false },
  { pattern: /(?<![\w.])@[a-z][\w.-]*/gi, terms: ["user"], weight: CUE_WEIGHT, keep: false },
  { pattern: /\b\d+(?:\.\d+)?\s?%/g, terms: ["percent"], weight: 1, keep: false },
  { pattern: /\b\d{1,2}(?::\d\d)?\s?[ap]\.?m\b\.?|\b\d{1,2}:\d\d\b/gi, terms: ["time"], weight: CUE_WEIGHT, keep: false },
  {
    pattern: /\b\d+\s?(?:h|hrs?|hours?|mins?|minutes?|secs?|seconds?|days?|weeks?|months?)\b/gi,
    terms: ["time"],
    weight: CUE_WEIGHT,
    keep: true,
  },
];
/**
 * `check whether`, `see if`, `find out`: asking to learn something, not to check, see or find anything in particular
 * (a tool that finds places or files is not what "find out who won" asks for).
 */
const WHETHER = new Set(["whether", "if"]);
const OUT = new Set(["out"]);
const ASKING: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  ["check", WHETHER],
  ["see", WHETHER],
  ["ask", WHETHER],
  ["wonder", WHETHER],
  ["find", OUT],
  ["figure", OUT],
]);
/** What the shape of a request asks for, whatever the tool's nouns: weaker than a word the request says. */
const SHAPE_WEIGHT = 0.5;
const WHICH = new Set(["which", "what"]);
const PLURAL = /[^su]s$/;
const NOT_PLURALS = new Set(["is", "was", "has", "does", "goes", "this", "its", "his"]);
const IS = new Set(["is", "are"]);
const UP = new Set(["up", "down", "running", "working", "alive", "online", "reachable", "responding", "healthy"]);
const TYPING = new Set(["type", "enter", "fill"]);
const INPUTS = new Set(["field", "fields", "box", "input", "textbox", "textarea", "form"]);
const PRESSING = new Set(["press", "hit", "tap", "push"]);
const BUTTONS = new Set(["button", "buttons", "link", "checkbox", "tab"]);
const REQUEST_SHAPES: readonly { asks: (words: readonly string[]) => boolean; terms: string[] }[] = [
  // `which tickets…`, `what tables…`: things in the plural, so a list of them.
  {
    asks: (words) => words.some((word, i) => WHICH.has(word) && PLURAL.test(words[i + 1] ?? "") && !NOT_PLURALS.has(words[i + 1])),
    terms: termsOf("list"),
  },
  // `is the api up?`, `are the workers still running?`: a health or status check.
  { asks: (words) => IS.has(words[0]) && words.some((word) => UP.has(word)), terms: termsOf("health status") },
  // `type hello into the username field`, `enter my email in the form`: filling an input, with words in between.
  {
    asks: (words) => words.some((word) => TYPING.has(word)) && words.some((word) => INPUTS.has(word)),
    terms: termsOf("fill input type"),
  },
  // `press the submit button`, `tap the second tab`: a click, not a key press.
  {
    asks: (words) => words.some((word) => PRESSING.has(word)) && words.some((word) => BUTTONS.has(word)),
    terms: termsOf("click"),
  },
];
const NUMBER = /^\d+$/;
/** `to-do`, `pop-up`, `re-run`: written apart, meant as one word. */
const HYPHENATED = /\b[a-z]+(?:-[a-z]+)+\b/gi;

/** How many tools contain a term: a typo's likelier correction is the more common word. */
export type TermFrequency = (term: number) => number;

/**
 * The query's term ids with their weights: its own words, words it runs together or splits differently from the
 * catalog (`who am i` / `whoami`, `flowchart` / `flow chart`), other words of their families, the nearest catalog
 * word for a typo, synonyms, what its shape asks for, and its intents. Only terms the catalog contains
 * are kept.
 */
export function analyzeQuery(text: string, vocabulary: Vocabulary, frequency: TermFrequency): Map<number, number> {
  const weights = new Map<number, number>();
  const add = (term: string, weight: number) => {
    const id = vocabulary.idOf(term);
    if (id !== undefined && weight > (weights.get(id) ?? 0)) weights.set(id, weight);
  };
  let rest = text;
  for (const { pattern, terms, weight, keep } of TOKEN_CUES) {
    rest = rest.replace(pattern, (token) => {
      for (const term of terms) add(term, weight);
      return keep ? token : " ";
    });
  }
  for (const [compound] of rest.matchAll(HYPHENATED)) add(stem(compound.replaceAll("-", "").toLowerCase()), 1);
  const words = splitWords(rest).slice(0, MAX_QUERY_WORDS);
  let corrections = 0;
  words.forEach((word, i) => {
    for (const length of [2, 3]) {
      const joined = words.slice(i, i + length).join("");
      if (i + length <= words.length && joined.length >= 5) add(stem(joined), 1);
    }
    for (const [synonym, weight] of phraseSynonymsAt(words, i)) add(synonym, weight);
    const term = termOf(word);
    if (term === undefined || word.length > MAX_WORD_LENGTH || NUMBER.test(word)) return;
    if (ASKING.get(word)?.has(words[i + 1])) return;
    const relatives = vocabulary.relativesOf(term);
    for (const relative of relatives) add(relative, RELATIVE_WEIGHT);
    if (vocabulary.idOf(term) !== undefined) add(term, 1);
    else if (relatives.length === 0 && corrections++ < MAX_CORRECTIONS) {
      for (const [known, weight] of nearestKnownTerms(word, term, vocabulary, frequency)) add(known, weight);
    }
    for (const [synonym, weight] of synonymsOf(term)) add(synonym, weight);
  });
  for (const { asks, terms } of REQUEST_SHAPES) if (asks(words)) for (const term of terms) add(term, SHAPE_WEIGHT);
  addIntents(
    words.filter((word) => !isStopWord(word)),
    vocabulary,
    add,
  );
  return weights;
}

/**
 * The intents the request's words name. They count for more when the catalog lacks many of its words: there the
 * words alone find little, and the intent is most of what is known of the request.
 */
function addIntents(words: readonly string[], vocabulary: Vocabulary, add: (term: string, weight: number) => void): void {
  const weight = INTENT_WEIGHT + UNKNOWN_WORDS_INTENT_WEIGHT * unknownShare(words, vocabulary);
  for (const [intent, count] of intentTermsOf(words)) add(intent, weight * Math.min(count, MAX_INTENT_CUES));
}

/**
 * The share (0 to 1) of a request's content words no tool of the catalog uses: how little its words alone can find,
 * so how much other evidence (intents, an embedding) should count.
 */
export function unknownWordShare(text: string, vocabulary: Vocabulary): number {
  return unknownShare(
    splitWords(text)
      .slice(0, MAX_QUERY_WORDS)
      .filter((word) => !isStopWord(word)),
    vocabulary,
  );
}

/** Of `words` (content words), the share the catalog does not contain. */
function unknownShare(words: readonly string[], vocabulary: Vocabulary): number {
  const unknown = words.filter((word) => vocabulary.idOf(termOf(word)!) === undefined).length;
  return unknown / Math.max(words.length, 1);
}

/** For a word the catalog does not contain: the two catalog words it is made of, else the closest spelling. */
function nearestKnownTerms(word: string, term: string, vocabulary: Vocabulary, frequency: TermFrequency): [string, number][] {
  for (let cut = 4; cut <= word.length - 4; cut++) {
    const left = stem(word.slice(0, cut));
    const right = stem(word.slice(cut));
    if (vocabulary.idOf(left) !== undefined && vocabulary.idOf(right) !== undefined)
      return [
        [left, 1],
        [right, 1],
      ];
  }
  if (term.length < 5 || !/^[a-z]+$/.test(term)) return [];
  // Ties go to the more common word: it is the likelier meaning of a misspelling.
  let best = -1;
  let bestDistance = term.length >= 8 ? 2 : 1;
  vocabulary.terms.forEach((known, id) => {
    if (Math.abs(known.length - term.length) > bestDistance || isIntentTerm(known)) return;
    const distance = editDistance(term, known, bestDistance);
    if (distance > bestDistance) return;
    if (best < 0 || distance < bestDistance || frequency(id) > frequency(best)) {
      best = id;
      bestDistance = distance;
    }
  });
  return best < 0 ? [] : [[vocabulary.terms[best], TYPO_WEIGHT]];
}

// Rows of the edit-distance table, reused: a correction compares a word with thousands of catalog terms.
const rows = [0, 1, 2].map(() => new Int32Array(MAX_WORD_LENGTH + 2));

/** Optimal-string-alignment distance (a swap of two neighbours counts once), or `limit + 1` once it exceeds `limit`. */
function editDistance(a: string, b: string, limit: number): number {
  if (b.length > MAX_WORD_LENGTH) return limit + 1;
  let [beforePrevious, previous, current] = rows;
  for (let j = 0; j <= b.length; j++) previous[j] = j;
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      let value = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost);
      const swapped = i > 1 && j > 1 && a.charCodeAt(i - 1) === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === b.charCodeAt(j - 1);
      if (swapped) value = Math.min(value, beforePrevious[j - 2] + 1);
      current[j] = value;
      rowMin = Math.min(rowMin, value);
    }
    if (rowMin > limit) return limit + 1;
    [beforePrevious, previous, current] = [previous, current, beforePrevious];
  }
  return previous[b.length];
}

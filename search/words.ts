/**
 * Text analysis shared by the tool index and its queries: words out of identifiers and prose, stems (British
 * spellings in their American form), word families the stems leave apart, stop words. Both sides go through the
 * same functions so that a query word and a tool word meet on the same term.
 */
import { stemmer } from "stemmer";

const SEPARATOR = 0;
const UPPER = 1;
const LOWER = 2;
const DIGIT = 3;
const OTHER_LETTER = 4;
const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;
const NON_ASCII = /[\u0080-\uffff]/;
const COMBINING_MARKS = /[\u0300-\u036f]/g;
const ASCII_KINDS = new Uint8Array(128);
for (let code = 0; code < 128; code++) {
  if (code >= 97 && code <= 122) ASCII_KINDS[code] = LOWER;
  else if (code >= 65 && code <= 90) ASCII_KINDS[code] = UPPER;
  else if (code >= 48 && code <= 57) ASCII_KINDS[code] = DIGIT;
}

function charKind(text: string, i: number): number {
  const code = text.charCodeAt(i);
  if (code < 128) return ASCII_KINDS[code];
  return LETTER_OR_DIGIT.test(text[i]) ? OTHER_LETTER : SEPARATOR;
}

/** Accented letters become their base letter (`café` → `cafe`), so that both spellings meet. */
export function foldAccents(text: string): string {
  return NON_ASCII.test(text) ? text.normalize("NFKD").replace(COMBINING_MARKS, "") : text;
}

/**
 * Visits the words of an identifier or a sentence as `[start, end)` ranges of `text`: camelCase (`ghSearchRepos`,
 * `HTTPServer`), snake_case, kebab-case, dots and slashes all split. Letters and digits stay together (`r2`, `d1`,
 * `o200k`) because that is how products name themselves. A single pass over the characters that creates nothing:
 * this runs over every description and parameter of the catalog.
 */
export function forEachWord(text: string, visit: (start: number, end: number) => void): void {
  const length = text.length;
  let i = 0;
  while (i < length) {
    let kind = charKind(text, i);
    if (kind === SEPARATOR) {
      i++;
      continue;
    }
    let start = i;
    let previous = kind;
    let beforePrevious = SEPARATOR;
    for (i++; i < length; i++) {
      kind = charKind(text, i);
      if (kind === SEPARATOR) break;
      if (kind === UPPER && (previous === LOWER || previous === DIGIT)) {
        visit(start, i); // fooBar, d1Query
        start = i;
        beforePrevious = SEPARATOR;
      } else if (kind === LOWER && previous === UPPER && beforePrevious === UPPER && i - 1 > start) {
        visit(start, i - 1); // HTTPServer
        start = i - 1;
        beforePrevious = previous;
      } else {
        beforePrevious = previous;
      }
      previous = kind;
    }
    visit(start, i);
  }
}

/** The words of a text (see `forEachWord`), accents folded, lower case. */
export function splitWords(text: string): string[] {
  const source = foldAccents(text);
  const words: string[] = [];
  forEachWord(source, (start, end) => words.push(source.slice(start, end).toLowerCase()));
  return words;
}

/**
 * Words that carry no intent in a request ("can you please show me ...") or in a tool description. Only function
 * words and request filler: verbs such as get, list or create stay, because they tell tools apart.
 */
const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    "a about above after again against all also am an and any are aren as at be because been before being below " +
    "between both but by can cannot could did do does doing don down during each either else etc ever few for from " +
    "further had has have having he her here hers herself him himself his how i if in into is it its itself just " +
    "let lets like may me might mine most much must my myself no nor not now of off on once only or other our " +
    "ours ourselves out over own per please same shall she should so some such than that the their theirs them " +
    "themselves then there these they this those through to too under until up upon us very via was we were what " +
    "when where whether which while who whom whose why will with within without would yet you your yours yourself " +
    "yourselves want wants need needs ok okay hey hi thanks thank kindly able using use used s t d m ll re ve " +
    "instead still already anymore really actually maybe give know anything something everything nothing anyone " +
    "someone everyone anybody somebody everybody anywhere somewhere everywhere"
  ).split(" "),
);

/** Stems already computed: catalogs repeat the same few thousand words over and over. Bounded. */
const stems = new Map<string, string>();
const MAX_REMEMBERED_STEMS = 50_000;

/**
 * Porter stem of a lower-case word in its American spelling; identifiers with digits (`r2`, `o200k`) are left as
 * they are.
 */
export function stem(word: string): string {
  let stemmed = stems.get(word);
  if (stemmed === undefined) {
    stemmed = word.length > 2 && /^[a-z]+$/.test(word) ? stemmer(americanSpelling(word)) : word;
    if (stems.size >= MAX_REMEMBERED_STEMS) stems.clear();
    stems.set(word, stemmed);
  }
  return stemmed;
}

/**
 * What Porter's stems leave apart in a word family: `creation` / `create`, `modify` / `modification`,
 * `describe` / `description`, `summary` / `summarize`, `deploy` / `deployment`. The key of a stem with its last
 * derivational ending taken off; none for short stems, whose endings are more often part of the word.
 */
const DERIVATIONAL_ENDING = /(?:ion|i|y)$/;
const MIN_FAMILY_KEY_LENGTH = 5;

export function familyKey(term: string): string | undefined {
  if (!/^[a-z]+$/.test(term)) return undefined;
  const key = term
    .replace(/script$/, "scrib")
    .replace(/ison$/, "")
    .replace(DERIVATIONAL_ENDING, "");
  return key.length >= MIN_FAMILY_KEY_LENGTH ? key : undefined;
}

/**
 * British endings in their American spelling, so that both meet (`organise` / `organize`, `colour` / `color`,
 * `centre` / `center`, `analyse` / `analyze`): requests are written by people of either habit. Each ending needs
 * letters before it, so short words (`hour`, `four`, `rise`) keep theirs.
 */
const BRITISH_ENDINGS: readonly [RegExp, string][] = [
  [/(?<=[a-z]{3})is(e|ed|es|ing|ation|ations|er|ers)$/, "iz$1"],
  [/(?<=[a-z]{2})ys(e|ed|es|ing)$/, "yz$1"],
  [/(?<=[a-z]{2}[lvbmni])our(s|ed|ing|ite|ites|able)?$/, "or$1"],
  [/(?<=[a-z]{3}[tb])re(s|d)?$/, "er$1"],
];
function americanSpelling(word: string): string {
  for (const [ending, american] of BRITISH_ENDINGS) if (ending.test(word)) return word.replace(ending, american);
  return word;
}

export function isStopWord(word: string): boolean {
  return STOP_WORDS.has(word);
}

/** A lower-case word's index term; none for a stop word. */
export function termOf(word: string): string | undefined {
  return isStopWord(word) ? undefined : stem(word);
}

/** Index terms of a text: split, stop words out, stemmed. Repeats kept (term frequency counts). */
export function termsOf(text: string): string[] {
  const terms: string[] = [];
  for (const word of splitWords(text)) {
    const term = termOf(word);
    if (term !== undefined) terms.push(term);
  }
  return terms;
}

/**
 * Reads catalog text as term ids. A catalog of 50k tools has millions of words but only thousands of distinct
 * ones, so each word is looked up character by character in a trie instead of becoming a string: only a word seen
 * for the first time is sliced, stemmed and interned. On request it also hands out the words themselves, unstemmed
 * (what search/intents.ts reads intents from), so that no text is split twice.
 */
import { familyKey, foldAccents, forEachWord, termOf } from "./words.ts";

export interface Vocabulary {
  /** Term by id. */
  readonly terms: readonly string[];
  idOf(term: string): number | undefined;
  /** The other catalog terms of a term's word family (search/words.ts's `familyKey`): `creat` for `creation`. */
  relativesOf(term: string): readonly string[];
}

/** Growable list of 32-bit integers (a plain array of millions of numbers costs several times the memory). */
export class IntList {
  private data = new Int32Array(1024);
  length = 0;

  push(value: number): void {
    if (this.length === this.data.length) {
      const grown = new Int32Array(this.data.length * 2);
      grown.set(this.data);
      this.data = grown;
    }
    this.data[this.length++] = value;
  }

  toInt32Array(): Int32Array {
    return this.data.slice(0, this.length);
  }
}

const NOT_A_TERM = -1;
const UNSEEN = -1;
/** a–z (either case) and 0–9: the characters of nearly every catalog word. Other words take the slower path. */
const ALPHABET = 36;
/** Longer "words" are identifiers, hashes or encoded data: nobody searches for them, and they would bloat the trie. */
const MAX_WORD_LENGTH = 40;

/** Trie slot of each ASCII character; -1 for the rest. */
const SLOTS = new Int8Array(128).fill(-1);
for (let code = 0; code < 128; code++) {
  if (code >= 97 && code <= 122) SLOTS[code] = code - 97;
  else if (code >= 65 && code <= 90) SLOTS[code] = code - 65;
  else if (code >= 48 && code <= 57) SLOTS[code] = code - 48 + 26;
}

/** The catalog's terms by their family key (search/words.ts's `familyKey`). */
function familiesOf(terms: readonly string[]): Map<string, string[]> {
  const families = new Map<string, string[]>();
  for (const term of terms) {
    const key = familyKey(term);
    if (key === undefined) continue;
    const family = families.get(key);
    if (family) family.push(term);
    else families.set(key, [term]);
  }
  return families;
}

export class TermReader {
  private readonly terms: string[] = [];
  private readonly termIds = new Map<string, number>();
  /** Each distinct word of the catalog, lower case, by its number, and its term's id (NOT_A_TERM for a stop word). */
  private readonly wordTexts: string[] = [];
  private readonly wordTermIds: number[] = [];
  private readonly otherWordNumbers = new Map<string, number>();
  private children = new Int32Array(1024 * ALPHABET);
  /** The number of the word that ends at each trie node, once seen. */
  private wordNumbers = new Int32Array(1024).fill(UNSEEN);
  private nodeCount = 1;

  /**
   * Appends the term ids of the words of `text` to `out`; stop words have none. Given `words`, also appends there
   * the words that are not stop words, lower case and unstemmed: search/intents.ts's `contentWords` of the text.
   */
  appendTermIds(text: string, out: IntList, words?: string[]): void {
    const source = foldAccents(text);
    forEachWord(source, (start, end) => {
      if (end - start > MAX_WORD_LENGTH) {
        // No term, but a word all the same: a phrase does not run across it.
        words?.push(source.slice(start, end).toLowerCase());
        return;
      }
      const word = this.wordNumber(source, start, end);
      const id = this.wordTermIds[word];
      if (id === NOT_A_TERM) return;
      out.push(id);
      words?.push(this.wordTexts[word]);
    });
  }

  /** The id of a term that is not read out of text (search/intents.ts's pseudo-terms), added on first use. */
  termId(term: string): number {
    let id = this.termIds.get(term);
    if (id === undefined) {
      id = this.terms.length;
      this.terms.push(term);
      this.termIds.set(term, id);
    }
    return id;
  }

  /** What queries need once the catalog is read; the trie is left behind. */
  vocabulary(): Vocabulary {
    const { terms, termIds } = this;
    let families: Map<string, string[]> | undefined;
    return {
      terms,
      idOf: (term) => termIds.get(term),
      relativesOf(term) {
        const key = familyKey(term);
        if (key === undefined) return [];
        // Built on first use, so that building the index costs what it did before.
        families ??= familiesOf(terms);
        return (families.get(key) ?? []).filter((relative) => relative !== term);
      },
    };
  }

  private wordNumber(source: string, start: number, end: number): number {
    let node = 0;
    let children = this.children;
    for (let i = start; i < end; i++) {
      const code = source.charCodeAt(i);
      const slot = code < 128 ? SLOTS[code] : -1;
      if (slot < 0) return this.otherWordNumber(source.slice(start, end).toLowerCase());
      let child = children[node * ALPHABET + slot];
      if (child === 0) {
        child = this.newNode();
        children = this.children;
        children[node * ALPHABET + slot] = child;
      }
      node = child;
    }
    let word = this.wordNumbers[node];
    if (word === UNSEEN) {
      word = this.newWord(source.slice(start, end).toLowerCase());
      this.wordNumbers[node] = word;
    }
    return word;
  }

  private otherWordNumber(text: string): number {
    let word = this.otherWordNumbers.get(text);
    if (word === undefined) {
      word = this.newWord(text);
      this.otherWordNumbers.set(text, word);
    }
    return word;
  }

  private newWord(text: string): number {
    const term = termOf(text);
    this.wordTexts.push(text);
    this.wordTermIds.push(term === undefined ? NOT_A_TERM : this.termId(term));
    return this.wordTexts.length - 1;
  }

  private newNode(): number {
    if (this.nodeCount === this.wordNumbers.length) {
      const children = new Int32Array(this.children.length * 2);
      children.set(this.children);
      this.children = children;
      const wordNumbers = new Int32Array(this.wordNumbers.length * 2).fill(UNSEEN);
      wordNumbers.set(this.wordNumbers);
      this.wordNumbers = wordNumbers;
    }
    return this.nodeCount++;
  }
}

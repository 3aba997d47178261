/**
 * Ranks tools for a ToolSearch request: BM25F over each tool's name parts, server name, description, parameter
 * names and parameter descriptions, its server's configured `description` (Pi 1.x's built-in ranks by it too), and
 * the intents its name and description name (search/intents.ts), for the
 * weighted terms search/query.ts reads out of the request, with a boost for names the request spells out.
 */
import { foldAccents } from "./words.ts";
import { analyzeQuery, unknownWordShare } from "./query.ts";
import { intentTermsOf, isIntentTerm } from "./intents.ts";
import { shareSlots, TOOLS_PER_SEARCH } from "./slots.ts";
import { IntList, TermReader } from "./term-reader.ts";
import type { ToolMetadata } from "../types.ts";
import { isJsonObject } from "../util/guards.ts";

export interface SearchHit {
  tool: ToolMetadata;
  score: number;
}

export interface ToolSearchIndex {
  /**
   * At most `limit` (default `TOOLS_PER_SEARCH`, at most 100) tools, best first (a request naming several intents
   * shares the first five among them: search/slots.ts); ties broken by tool name so that the same catalog always
   * answers the same way. Never throws.
   */
  search(query: string, limit?: number): SearchHit[];
  /** The share (0 to 1) of the request's content words no tool uses (search/query.ts `unknownWordShare`). */
  unknownWordShare(query: string): number;
  readonly size: number;
}

/** An intent shared by a request and a tool: weaker than a shared word, but words miss most of what people mean. */
const INTENT_FIELD_WEIGHT = 1;
/** An intent a tool's name names counts as if its description named it twice: a name says surely what it is for. */
const NAME_INTENT_REPEATS = 2;

// Fields, in the order `fieldTexts` returns them, then the intents its name and description name (search/intents.ts).
// Weight: how much a word there says about the tool. Length normalisation (BM25's b): 0 ignores the field's length,
// 1 fully divides by it.
// A server's description is about all its tools, so a word there says less about any one of them than its own
// description does.
const FIELD_WEIGHTS = [3, 1.5, 1, 0.5, 0.3, 0.5, INTENT_FIELD_WEIGHT] as const;
const FIELD_LENGTH_NORMS = [0.3, 0, 0.75, 0.75, 0.75, 0.75, 0] as const;
const NAME_FIELD = 0;
const DESCRIPTION_FIELD = 2;
const INTENT_FIELD = 6;
const FIELD_COUNT = FIELD_WEIGHTS.length;

const K1 = 1.5;
const MAX_LIMIT = 100;
/** Untrusted input: a request is a sentence, anything longer is cut. */
const MAX_QUERY_CHARS = 1_000;
/** Bounded work per tool whatever a server sends: past these, text is usage examples and boilerplate. */
const MAX_DESCRIPTION_CHARS = 1_000;
const MAX_PARAMETER_DESCRIPTION_CHARS = 300;
const MAX_PARAMETERS = 200;
const MAX_SCHEMA_DEPTH = 4;
/** Score multiplier for a tool whose whole name the query covers (`r2 put object` for `r2_put_object`). */
const NAME_COVERAGE_BOOST = 0.5;
/** The best-scoring tools that compete for ToolSearch's slots (`TOOLS_PER_SEARCH`). */
const SLOT_CANDIDATES = 20;
const NOT_LETTER_OR_DIGIT = /[^\p{L}\p{N}]+/gu;

/** `serverDescriptions`: server name → its configured `description`. */
export function buildSearchIndex(
  tools: readonly ToolMetadata[],
  serverDescriptions: ReadonlyMap<string, string> = new Map(),
): ToolSearchIndex {
  const reader = new TermReader();
  const catalog = readCatalog(tools, reader, serverDescriptions);
  const vocabulary = reader.vocabulary();
  const postings = buildPostings(catalog, vocabulary.terms.length);
  const names = nameTermsOf(catalog);
  const exactNames = exactNameLookup(tools);

  return {
    size: tools.length,
    unknownWordShare: (query) => (typeof query === "string" ? unknownWordShare(query.slice(0, MAX_QUERY_CHARS), vocabulary) : 0),
    search(query, limit = TOOLS_PER_SEARCH) {
      const count = Math.min(Math.floor(limit), MAX_LIMIT);
      if (typeof query !== "string" || !(count > 0) || tools.length === 0) return [];
      const text = query.slice(0, MAX_QUERY_CHARS);
      const scores = new Float64Array(tools.length);
      const terms = analyzeQuery(text, vocabulary, (term) => postings.start[term + 1] - postings.start[term]);
      const termWeights = new Float64Array(vocabulary.terms.length);
      for (const [term, weight] of terms) {
        termWeights[term] = weight;
        addTermScores(scores, postings, term, weight);
      }
      boostNameCoverage(scores, names, termWeights);
      boostExactNames(scores, exactNames, text);
      const docs = topDocs(tools, scores, Math.max(count, SLOT_CANDIDATES));
      const intents = [...terms].filter(([term]) => isIntentTerm(vocabulary.terms[term]));
      const ordered = intents.length < 2 ? docs : shareSlotsAmongIntents(docs, scores, postings, intents);
      return ordered.slice(0, count).map((doc) => ({ tool: tools[doc], score: scores[doc] }));
    },
  };
}

/**
 * Every tool's fields as term ids, in compressed-row form: the terms of field f of doc d are
 * `termIds[fieldStart[d * FIELD_COUNT + f] .. fieldStart[d * FIELD_COUNT + f + 1]]`.
 */
interface CatalogTerms {
  docCount: number;
  termIds: Int32Array;
  fieldStart: Int32Array;
}

function readCatalog(tools: readonly ToolMetadata[], reader: TermReader, serverDescriptions: ReadonlyMap<string, string>): CatalogTerms {
  const termIds = new IntList();
  const fieldStart = new Int32Array(tools.length * FIELD_COUNT + 1);
  tools.forEach((tool, doc) => {
    // What the tool says it is for (its name and description, each the first text of its field) is kept as words
    // to read its intents from; its parameters describe inputs, not purposes.
    const nameWords: string[] = [];
    const descriptionWords: string[] = [];
    const intentWords: Partial<Record<number, string[]>> = {
      [NAME_FIELD]: nameWords,
      [DESCRIPTION_FIELD]: descriptionWords,
    };
    fieldTexts(tool, serverDescriptions.get(tool.serverName)).forEach((texts, field) => {
      texts.forEach((text, i) => reader.appendTermIds(text, termIds, i === 0 ? intentWords[field] : undefined));
      fieldStart[doc * FIELD_COUNT + field + 1] = termIds.length;
    });
    appendIntents(nameWords, NAME_INTENT_REPEATS, reader, termIds);
    appendIntents(descriptionWords, 1, reader, termIds);
    fieldStart[doc * FIELD_COUNT + INTENT_FIELD + 1] = termIds.length;
  });
  return { docCount: tools.length, termIds: termIds.toInt32Array(), fieldStart };
}

function appendIntents(words: readonly string[], repeats: number, reader: TermReader, termIds: IntList): void {
  for (const [intent, count] of intentTermsOf(words)) {
    const id = reader.termId(intent);
    for (let n = 0; n < count * repeats; n++) termIds.push(id);
  }
}

/** The texts of each field of a tool, in FIELD_WEIGHTS order; the description comes first in its field. */
function fieldTexts(tool: ToolMetadata, serverDescription: string | undefined): string[][] {
  const parameterNames: string[] = [];
  const parameterDescriptions: string[] = [];
  collectParameters(tool.inputSchema, 0, parameterNames, parameterDescriptions);
  // A server may omit the description even though the type says string.
  const description = String(tool.description ?? "").slice(0, MAX_DESCRIPTION_CHARS);
  return [
    [tool.originalName],
    [tool.serverName],
    tool.resourceUri ? [description, tool.resourceUri] : [description],
    parameterNames,
    parameterDescriptions,
    serverDescription ? [serverDescription.slice(0, MAX_DESCRIPTION_CHARS)] : [],
  ];
}

/** Parameter names and descriptions, nested objects and array items included; shared `$defs` are not the tool's own. */
function collectParameters(schema: unknown, depth: number, names: string[], descriptions: string[]): void {
  if (!isJsonObject(schema) || depth > MAX_SCHEMA_DEPTH || names.length >= MAX_PARAMETERS) return;
  if (isJsonObject(schema.properties)) {
    for (const [name, property] of Object.entries(schema.properties)) {
      if (names.length >= MAX_PARAMETERS) return;
      names.push(name);
      if (isJsonObject(property) && typeof property.description === "string") {
        descriptions.push(property.description.slice(0, MAX_PARAMETER_DESCRIPTION_CHARS));
      }
      collectParameters(property, depth + 1, names, descriptions);
    }
  }
  collectParameters(schema.items, depth + 1, names, descriptions);
  for (const key of ["anyOf", "oneOf", "allOf"]) {
    const variants = schema[key];
    if (!Array.isArray(variants)) continue;
    for (const variant of variants) collectParameters(variant, depth + 1, names, descriptions);
  }
}

/**
 * Inverted index in compressed-row form: the docs of term t are `docs[start[t] .. start[t + 1]]`, each with its
 * BM25F term frequency (field-weighted, length-normalised, summed over fields).
 */
interface Postings {
  start: Int32Array;
  docs: Int32Array;
  tfs: Float32Array;
  idf: Float64Array;
}

function buildPostings(catalog: CatalogTerms, termCount: number): Postings {
  const { docCount, termIds, fieldStart } = catalog;
  const documentFrequency = new Int32Array(termCount);
  const lastDoc = new Int32Array(termCount).fill(-1);
  for (let doc = 0; doc < docCount; doc++) {
    for (let p = fieldStart[doc * FIELD_COUNT]; p < fieldStart[(doc + 1) * FIELD_COUNT]; p++) {
      if (lastDoc[termIds[p]] !== doc) documentFrequency[termIds[p]]++;
      lastDoc[termIds[p]] = doc;
    }
  }
  const start = new Int32Array(termCount + 1);
  for (let id = 0; id < termCount; id++) start[id + 1] = start[id] + documentFrequency[id];
  const docs = new Int32Array(start[termCount]);
  const tfs = new Float32Array(start[termCount]);
  const cursor = start.slice(0, termCount);
  const averageLength = averageFieldLengths(catalog);
  const tf = new Float64Array(termCount);
  const touched: number[] = [];
  for (let doc = 0; doc < docCount; doc++) {
    for (let field = 0; field < FIELD_COUNT; field++) {
      const from = fieldStart[doc * FIELD_COUNT + field];
      const to = fieldStart[doc * FIELD_COUNT + field + 1];
      const norm = 1 - FIELD_LENGTH_NORMS[field] + (FIELD_LENGTH_NORMS[field] * (to - from)) / averageLength[field];
      const weight = FIELD_WEIGHTS[field] / norm;
      for (let p = from; p < to; p++) {
        if (tf[termIds[p]] === 0) touched.push(termIds[p]);
        tf[termIds[p]] += weight;
      }
    }
    for (const id of touched) {
      docs[cursor[id]] = doc;
      tfs[cursor[id]++] = tf[id];
      tf[id] = 0;
    }
    touched.length = 0;
  }
  const idf = new Float64Array(termCount);
  for (let id = 0; id < termCount; id++) {
    idf[id] = Math.log(1 + (docCount - documentFrequency[id] + 0.5) / (documentFrequency[id] + 0.5));
  }
  return { start, docs, tfs, idf };
}

function averageFieldLengths({ docCount, fieldStart }: CatalogTerms): number[] {
  const total = new Array<number>(FIELD_COUNT).fill(0);
  for (let doc = 0; doc < docCount; doc++) {
    for (let field = 0; field < FIELD_COUNT; field++) {
      total[field] += fieldStart[doc * FIELD_COUNT + field + 1] - fieldStart[doc * FIELD_COUNT + field];
    }
  }
  return total.map((sum) => Math.max(sum / Math.max(docCount, 1), 1));
}

/** Each tool's name terms, kept for the name-coverage boost: `termIds[start[d] .. start[d + 1]]`. */
interface NameTerms {
  start: Int32Array;
  termIds: Int32Array;
}

function nameTermsOf({ docCount, termIds, fieldStart }: CatalogTerms): NameTerms {
  const start = new Int32Array(docCount + 1);
  const ids = new IntList();
  for (let doc = 0; doc < docCount; doc++) {
    for (let p = fieldStart[doc * FIELD_COUNT + NAME_FIELD]; p < fieldStart[doc * FIELD_COUNT + NAME_FIELD + 1]; p++) {
      ids.push(termIds[p]);
    }
    start[doc + 1] = ids.length;
  }
  return { start, termIds: ids.toInt32Array() };
}

function addTermScores(scores: Float64Array, postings: Postings, term: number, weight: number): void {
  const { start, docs, tfs, idf } = postings;
  const termWeight = weight * idf[term] * (K1 + 1);
  for (let p = start[term]; p < start[term + 1]; p++) scores[docs[p]] += (termWeight * tfs[p]) / (tfs[p] + K1);
}

/** A name the query covers whole is what the user asked for; part of a name is weaker evidence. */
function boostNameCoverage(scores: Float64Array, names: NameTerms, termWeights: Float64Array): void {
  for (let doc = 0; doc < scores.length; doc++) {
    const from = names.start[doc];
    const to = names.start[doc + 1];
    if (scores[doc] <= 0 || to === from) continue;
    let covered = 0;
    for (let p = from; p < to; p++) covered += termWeights[names.termIds[p]];
    scores[doc] *= 1 + (NAME_COVERAGE_BOOST * covered) / (to - from);
  }
}

/** A name as typed in any style: `take_screenshot`, `take-screenshot`, `TakeScreenshot`, `chrome_devtools__take_screenshot`… */
function normalizeName(text: string): string {
  return foldAccents(text).replace(NOT_LETTER_OR_DIGIT, "").toLowerCase();
}

/** The tools each normalised name belongs to, by Pi name and by MCP name. */
interface ExactNames {
  piNames: Map<string, number[]>;
  mcpNames: Map<string, number[]>;
}

function exactNameLookup(tools: readonly ToolMetadata[]): ExactNames {
  const piNames = new Map<string, number[]>();
  const mcpNames = new Map<string, number[]>();
  const add = (lookup: Map<string, number[]>, name: string, doc: number) => {
    const docs = lookup.get(name);
    if (docs) docs.push(doc);
    else if (name) lookup.set(name, [doc]);
  };
  tools.forEach((tool, doc) => {
    add(piNames, normalizeName(tool.name), doc);
    add(mcpNames, normalizeName(tool.originalName), doc);
  });
  return { piNames, mcpNames };
}

/**
 * Puts the tools the query names above everything the words found. A Pi name outranks an MCP name: one server's
 * `n8n_validate_workflow` spells another tool's Pi name `n8n__validate_workflow`.
 */
function boostExactNames(scores: Float64Array, exactNames: ExactNames, query: string): void {
  const name = normalizeName(query);
  const strength = new Map<number, number>();
  for (const doc of exactNames.mcpNames.get(name) ?? []) strength.set(doc, 1);
  for (const doc of exactNames.piNames.get(name) ?? []) strength.set(doc, 2);
  if (strength.size === 0) return;
  const bonus = maxOf(scores) + 1;
  for (const [doc, times] of strength) scores[doc] += times * bonus;
}

function maxOf(scores: Float64Array): number {
  let max = 0;
  for (const score of scores) if (score > max) max = score;
  return max;
}

/** A request naming several intents shares the first slots among them (search/slots.ts). */
function shareSlotsAmongIntents(docs: number[], scores: Float64Array, postings: Postings, intents: [number, number][]): number[] {
  const candidates = docs.map((doc) => ({
    score: scores[doc],
    serves: intents.map(([term]) => {
      const tf = termFrequency(postings, term, doc);
      return tf / (tf + 1);
    }),
  }));
  const order = shareSlots(
    candidates,
    intents.map(([, weight]) => weight),
    TOOLS_PER_SEARCH,
  );
  return order.map((i) => docs[i]);
}

/** A term's BM25F frequency in a doc, 0 if absent: a binary search, as each term's docs are in ascending order. */
function termFrequency({ start, docs, tfs }: Postings, term: number, doc: number): number {
  let low = start[term];
  let high = start[term + 1] - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (docs[middle] === doc) return tfs[middle];
    if (docs[middle] < doc) low = middle + 1;
    else high = middle - 1;
  }
  return 0;
}

/** The `limit` best docs by a bounded insertion: a catalog of 50k tools may give most of them some score. */
function topDocs(tools: readonly ToolMetadata[], scores: Float64Array, limit: number): number[] {
  const ranksAbove = (a: number, b: number) => scores[a] > scores[b] || (scores[a] === scores[b] && tools[a].name < tools[b].name);
  const top: number[] = [];
  for (let doc = 0; doc < scores.length; doc++) {
    if (scores[doc] <= 0 || (top.length === limit && !ranksAbove(doc, top[limit - 1]))) continue;
    let at = Math.min(top.length, limit - 1);
    for (; at > 0 && ranksAbove(doc, top[at - 1]); at--) top[at] = top[at - 1];
    top[at] = doc;
  }
  return top;
}

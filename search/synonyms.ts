/**
 * What people say for what tool descriptions call something else: synonym groups of general software vocabulary,
 * looked up by a query's (stemmed) words and two- or three-word phrases.
 */
import { splitWords, stem, termsOf } from "./words.ts";

/**
 * General software vocabulary only, not tuned to any one server. A query word or phrase from a group also searches
 * for the rest of its group: at nearly full weight for true equivalents (abbreviations, `folder` / `directory`), at
 * half weight for related words (`make` / `create`), which may lead somewhere else.
 */
const EQUIVALENT_WEIGHT = 0.9;
const RELATED_WEIGHT = 0.5;

const EQUIVALENTS: readonly string[][] = [
  ["directory", "folder", "dir"],
  ["issue", "ticket"],
  ["repository", "repo"],
  ["pull request", "pr"],
  ["merge request", "mr"],
  ["kubernetes", "k8s", "kube", "kubectl"],
  ["javascript", "js"],
  ["typescript", "ts"],
  ["database", "db"],
  ["documentation", "docs", "doc"],
  ["organization", "org"],
  ["environment", "env"],
  // Not "settings": it stems to "set", which would make every "set" mean configuration.
  ["configuration", "config"],
  ["lint", "linter", "linting"],
  ["dispute", "chargeback"],
  ["elevation", "altitude"],
  ["event", "meeting", "appointment"],
  ["screencast", "video"],
  ["flag", "toggle"],
  ["reaction", "emoji"],
  ["email", "mail"],
  ["auth", "authenticate", "authentication", "login", "signin", "oauth"],
  ["relation", "relationship"],
  ["diff", "difference"],
  ["mute", "silence", "snooze"],
  ["hover", "mouseover"],
  ["percent", "percentage"],
];

const RELATED: readonly string[][] = [
  ["create", "make", "new", "add"],
  ["delete", "remove", "erase", "drop", "destroy", "purge"],
  ["get", "fetch", "retrieve", "read", "obtain", "show"],
  ["search", "find", "lookup", "query", "look"],
  ["update", "edit", "modify", "change", "patch"],
  ["run", "execute", "start", "launch", "trigger"],
  // Not "terminate": it stems as "terminal" does.
  ["stop", "kill", "halt"],
  ["list", "enumerate", "show", "browse"],
  ["navigate", "go", "visit", "open"],
  ["rollback", "revert", "undo"],
  ["cancel", "abort"],
  ["screenshot", "picture", "photo", "capture"],
  // Not "periodic": it stems as "period" does.
  ["schedule", "nightly", "recurring", "cron", "daily", "weekly"],
  ["chart", "plot", "diagram"],
  ["note", "comment"],
  ["memory", "remember", "memorize"],
  ["page", "tab"],
  // Not "business": it stems as "busy" does.
  ["place", "restaurant", "cafe", "shop", "hotel", "venue"],
  ["geocode", "coordinates", "latitude", "longitude", "lat", "lng"],
  ["user", "member", "people", "person"],
  ["error", "exception", "crash", "failure"],
  ["multiple", "several", "many", "bulk", "batch"],
  ["sprint", "iteration"],
  ["watch", "follow", "subscribe"],
  ["emulate", "simulate", "fake", "mock", "spoof", "pretend"],
  ["column", "field", "property", "attribute"],
  ["analytics", "stats", "statistics", "metrics", "traffic"],
  ["dialog", "popup", "modal", "confirm"],
  ["attach", "upload"],
  ["downtime", "maintenance"],
  ["website", "site", "webpage"],
];

/**
 * One way only: the words or phrases on the left lead to the terms on the right, never back (`forget` means delete,
 * but a request to delete is not about forgetting). Shell commands, idioms, and everyday words for what tools name
 * in their own terms.
 */
const IMPLIED: readonly [sources: string[], targets: string, weight: number][] = [
  [["mkdir"], "create directory", EQUIVALENT_WEIGHT],
  [["ls"], "list directory", EQUIVALENT_WEIGHT],
  [["grep"], "search", EQUIVALENT_WEIGHT],
  [["mv"], "move", EQUIVALENT_WEIGHT],
  [["how many"], "count number", RELATED_WEIGHT],
  [["at once", "in bulk", "in one go"], "multiple bulk batch", RELATED_WEIGHT],
  [["forget", "evict", "throw away", "get rid of"], "delete remove", RELATED_WEIGHT],
  [["store", "save", "persist"], "create add", RELATED_WEIGHT],
  [["see", "view"], "get list show", RELATED_WEIGHT],
  [["finish", "end"], "stop close complete", RELATED_WEIGHT],
  [["set up"], "create", RELATED_WEIGHT],
  [["turn on", "switch on", "turn off", "switch off", "enable", "disable"], "toggle", RELATED_WEIGHT],
  [["logged in", "signed in"], "login", EQUIVALENT_WEIGHT],
  [["mouse over"], "hover", EQUIVALENT_WEIGHT],
  [["rename"], "move update", RELATED_WEIGHT],
  [["replace", "substitute", "swap"], "edit update", RELATED_WEIGHT],
  [["append", "prepend"], "write edit add", RELATED_WEIGHT],
  [["remember", "memorize", "keep in mind"], "knowledge graph", RELATED_WEIGHT],
  [["history"], "log", RELATED_WEIGHT],
  [["how far"], "distance", RELATED_WEIGHT],
  [["structure"], "tree schema", RELATED_WEIGHT],
  [["details", "metadata", "properties"], "info", RELATED_WEIGHT],
  [["type into", "type in", "enter text", "fill in", "fill out"], "fill type input", RELATED_WEIGHT],
  [["text box", "textbox", "text field", "input box"], "input field", RELATED_WEIGHT],
  [["share price", "equities", "ticker symbol"], "stock", RELATED_WEIGHT],
  [["money back"], "refund", EQUIVALENT_WEIGHT],
  [["bill", "billing"], "invoice", RELATED_WEIGHT],
  [["plan"], "subscription", RELATED_WEIGHT],
  [["bug", "defect"], "issue", RELATED_WEIGHT],
  [["standup", "sync up", "one on one"], "meeting event", RELATED_WEIGHT],
  [["meeting", "appointment"], "event", RELATED_WEIGHT],
  [["google", "googling", "look up online", "find out", "learn about", "read up on"], "web search", RELATED_WEIGHT],
  [["latest on", "news about", "news on"], "news web search", RELATED_WEIGHT],
  [["replicas", "copies"], "scale", RELATED_WEIGHT],
  [["green light", "sign off", "lgtm"], "approve", RELATED_WEIGHT],
  [["code style"], "lint", RELATED_WEIGHT],
  [["sea level"], "elevation", RELATED_WEIGHT],
  [["big", "bigger", "biggest", "large", "larger", "largest", "huge"], "size", RELATED_WEIGHT],
  [["latency", "p50", "p95", "p99", "throughput"], "metric performance", RELATED_WEIGHT],
  [["spend", "spending", "consumption", "credits"], "usage cost", RELATED_WEIGHT],
  [["server", "machine"], "host", RELATED_WEIGHT],
  [["compare"], "diff", RELATED_WEIGHT],
  [["doc", "docs"], "document", RELATED_WEIGHT],
  [["foot"], "walking", RELATED_WEIGHT],
  [
    ["today", "tomorrow", "tonight", "yesterday", "weekend", "morning", "afternoon", "evening", "noon", "midnight"],
    "time date",
    RELATED_WEIGHT,
  ],
  [["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"], "time date", RELATED_WEIGHT],
];

type Synonyms = Map<string, Map<string, number>>;
/** The most words of a phrase in the lists above (`in one go`). */
const MAX_PHRASE_WORDS = 3;

/** Group words by their key: a word's stem, or a phrase's stems joined by spaces (see `phraseKey`). */
const SYNONYMS: Synonyms = new Map();
addGroups(SYNONYMS, EQUIVALENTS, EQUIVALENT_WEIGHT);
addGroups(SYNONYMS, RELATED, RELATED_WEIGHT);
for (const [sources, targets, weight] of IMPLIED) addImplied(SYNONYMS, sources, termsOf(targets), weight);

function addGroups(synonyms: Synonyms, groups: readonly string[][], weight: number): void {
  for (const group of groups) {
    const targets = group.map(termsOf);
    group.forEach((source, i) => {
      const related = relatedOf(synonyms, source);
      targets.forEach((terms, j) => {
        if (j === i) return;
        for (const term of terms) if (!targets[i].includes(term) && !related.has(term)) related.set(term, weight);
      });
    });
  }
}

function addImplied(synonyms: Synonyms, sources: readonly string[], targets: readonly string[], weight: number): void {
  for (const source of sources) {
    const related = relatedOf(synonyms, source);
    for (const term of targets) if ((related.get(term) ?? 0) < weight) related.set(term, weight);
  }
}

/** The terms a word or phrase leads to, created empty on first use. */
function relatedOf(synonyms: Synonyms, source: string): Map<string, number> {
  const key = keyOf(source);
  let related = synonyms.get(key);
  if (!related) synonyms.set(key, (related = new Map()));
  return related;
}

/** A word's stem; for a phrase, every word's stem (stop words too: "how many", "at once"), joined by spaces. */
function keyOf(source: string): string {
  return phraseKey(splitWords(source));
}

function phraseKey(words: readonly string[]): string {
  return words.map(stem).join(" ");
}

const NO_SYNONYMS: ReadonlyMap<string, number> = new Map();

/** Terms that mean the same as a (stemmed) query term, with the weight a match through them deserves. */
export function synonymsOf(term: string): ReadonlyMap<string, number> {
  return SYNONYMS.get(term) ?? NO_SYNONYMS;
}

/** The longest phrase of a group that starts at `words[start]`: its group's terms and weights. */
export function phraseSynonymsAt(words: readonly string[], start: number): ReadonlyMap<string, number> {
  for (let length = MAX_PHRASE_WORDS; length >= 2; length--) {
    if (start + length > words.length) continue;
    const synonyms = SYNONYMS.get(phraseKey(words.slice(start, start + length)));
    if (synonyms) return synonyms;
  }
  return NO_SYNONYMS;
}

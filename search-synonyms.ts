/**
 * What people say for what tool descriptions call something else: synonym groups of general software vocabulary,
 * looked up by a query's (stemmed) terms.
 */
import { termsOf } from "./search-text.ts";

/**
 * Words people use for what tool descriptions call something else. General software vocabulary only, not tuned to
 * any one server. A single query word from a group also searches for the rest of its group: at nearly full weight
 * for true equivalents (abbreviations, `folder` / `directory`), at half weight for related words (`make` / `create`),
 * which may lead somewhere else.
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
  ["configuration", "config", "settings"],
  ["lint", "linter", "linting"],
  ["dispute", "chargeback"],
  ["elevation", "altitude"],
  ["event", "meeting", "appointment"],
  ["screencast", "video"],
  ["flag", "toggle"],
  ["reaction", "emoji"],
  ["email", "mail"],
  ["auth", "authenticate", "authentication", "login", "signin", "oauth"],
];

const RELATED: readonly string[][] = [
  ["create", "make", "new", "add"],
  ["delete", "remove", "erase", "drop", "destroy", "purge"],
  ["get", "fetch", "retrieve", "read", "obtain", "show"],
  ["search", "find", "lookup", "query", "look"],
  ["update", "edit", "modify", "change", "patch"],
  ["run", "execute", "start", "launch", "trigger"],
  ["stop", "kill", "terminate", "halt"],
  ["list", "enumerate", "show", "browse"],
  ["navigate", "go", "visit", "open"],
  ["rollback", "revert", "undo"],
  ["cancel", "abort"],
  ["screenshot", "picture", "photo", "capture"],
  ["schedule", "nightly", "recurring", "periodic", "cron", "daily", "weekly"],
  ["chart", "plot", "diagram"],
  ["note", "comment"],
  ["memory", "remember", "memorize"],
  ["page", "tab"],
  ["place", "restaurant", "cafe", "shop", "hotel", "venue", "business"],
  ["geocode", "coordinates", "latitude", "longitude"],
  ["user", "member", "people", "person"],
  ["error", "exception", "crash", "failure"],
  ["multiple", "several", "many", "bulk", "batch"],
];

const SYNONYMS: ReadonlyMap<string, ReadonlyMap<string, number>> = buildSynonyms([
  [EQUIVALENTS, EQUIVALENT_WEIGHT],
  [RELATED, RELATED_WEIGHT],
]);

function buildSynonyms(tiers: readonly [readonly string[][], number][]): Map<string, Map<string, number>> {
  const synonyms = new Map<string, Map<string, number>>();
  for (const [groups, weight] of tiers) {
    for (const group of groups) {
      const phrases = group.map(termsOf);
      phrases.forEach((phrase, i) => {
        if (phrase.length !== 1) return; // a phrase is only ever a target: the query already contains its words
        let related = synonyms.get(phrase[0]);
        if (!related) synonyms.set(phrase[0], (related = new Map()));
        phrases.forEach((other, j) => {
          if (j === i) return;
          for (const term of other) if (term !== phrase[0] && !related.has(term)) related.set(term, weight);
        });
      });
    }
  }
  return synonyms;
}

const NO_SYNONYMS: ReadonlyMap<string, number> = new Map();

/** Terms that mean the same as a (stemmed) query term, with the weight a match through them deserves. */
export function synonymsOf(term: string): ReadonlyMap<string, number> {
  return SYNONYMS.get(term) ?? NO_SYNONYMS;
}

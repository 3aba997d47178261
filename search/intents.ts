/**
 * What a request is for, at the level of a whole kind of task (web search, the weather, stock prices, travel…),
 * and which tools serve it. A request and a tool often share no word and still the same intent: "is bitcoin going
 * up" and "real-time insights on stocks and cryptocurrencies". Each intent is a set of general English cue words;
 * a tool belongs to the intents its name and description name, a request to the intents its words name, and the
 * index matches them through one pseudo-term per intent (see search/tool-index.ts).
 *
 * The cue words are general vocabulary of each kind of task, written for the task, not for any one catalog or
 * request set; a word that means different things in different catalogs ("property", "home", "match") is left out.
 * So are kinds of task whose cue words are what one server already names all its tools by (a browser server's
 * `browser_click`, `browser_type`…): there the intent only repeats the words, and lifts that server's every tool
 * over another server's tool for the asked action.
 */
import { isStopWord, splitWords } from "./words.ts";

/**
 * Cue words and phrases of each intent, in the singular (a word's plural is a cue too); a phrase is matched on
 * consecutive words, stop words left out.
 */
const INTENT_CUES: Readonly<Record<string, readonly string[]>> = {
  "web search": ["web search", "search engine", "search the web", "google search", "internet", "browse the web", "crawler"],
  "web page": ["url", "link", "webpage", "web page", "website", "scrape", "scraper", "crawl", "html", "domain"],
  files: ["file", "folder", "directory", "pdf", "document", "spreadsheet", "docx", "csv"],
  database: ["database", "sql", "postgres", "mysql", "sqlite"],
  messaging: ["message", "email", "mail", "inbox", "sms", "text message", "slack", "notification"],
  markets: [
    "stock",
    "share price",
    "stock market",
    "shares",
    "invest",
    "investment",
    "investing",
    "investor",
    "portfolio",
    "crypto",
    "cryptocurrency",
    "bitcoin",
    "ethereum",
    "blockchain",
    "coin",
    "trading",
    "trader",
    "financial",
    "finance",
    "dividend",
    "etf",
    "mutual fund",
    "bond",
    "forex",
    "nasdaq",
    "dow jones",
    "economy",
    "economic",
    "inflation",
    "interest rate",
    "market cap",
    "wealth",
    "currency",
    "exchange rate",
  ],
  prices: ["price", "pricing", "cost", "cheap", "cheapest", "deal", "discount", "coupon", "sale", "quote", "afford", "budget", "bargain"],
  shopping: ["buy", "shop", "shopping", "purchase", "product", "retailer", "cart", "gadget", "gift"],
  weather: [
    "weather",
    "forecast",
    "temperature",
    "rain",
    "snow",
    "wind",
    "humidity",
    "sunny",
    "cloudy",
    "storm",
    "umbrella",
    "celsius",
    "fahrenheit",
    "precipitation",
  ],
  places: [
    "map",
    "driving directions",
    "walking directions",
    "navigate",
    "navigation",
    "distance",
    "nearby",
    "near me",
    "location",
    "commute",
    "transit",
    "neighborhood",
    "coordinates",
  ],
  language: [
    "translate",
    "translation",
    "translator",
    "foreign language",
    "pronounce",
    "pronunciation",
    "fluent",
    "vocabulary",
    "spanish",
    "french",
    "german",
    "japanese",
    "mandarin",
    "chinese",
    "korean",
  ],
  calendar: ["calendar", "meeting", "schedule", "appointment", "reminder", "remind", "agenda"],
  news: ["news", "headline", "article", "breaking news", "current events", "journalism"],
  travel: [
    "travel",
    "trip",
    "flight",
    "hotel",
    "accommodation",
    "vacation",
    "holiday",
    "tour",
    "tourism",
    "tourist",
    "itinerary",
    "booking",
    "airport",
    "airline",
    "resort",
    "sightseeing",
    "attraction",
    "abroad",
    "getaway",
  ],
  housing: [
    "house",
    "apartment",
    "condo",
    "rent",
    "rental",
    "renting",
    "mortgage",
    "real estate",
    "bedroom",
    "landlord",
    "lease",
    "tenant",
    "realtor",
    "housing",
  ],
  learning: [
    "course",
    "lesson",
    "learn",
    "learning",
    "tutor",
    "teacher",
    "teach",
    "curriculum",
    "education",
    "educational",
    "school",
    "student",
    "skill",
  ],
  jobs: [
    "job",
    "career",
    "resume",
    "cv",
    "interview",
    "hire",
    "hiring",
    "recruit",
    "recruiting",
    "employment",
    "employer",
    "freelance",
    "freelancer",
    "talent",
    "salary",
  ],
  fitness: ["workout", "exercise", "fitness", "gym", "training plan", "diet", "calorie", "nutrition", "weight loss", "muscle", "healthy"],
  cooking: ["recipe", "cook", "cooking", "meal", "dish", "ingredient", "bake", "cuisine"],
  music: ["music", "song", "playlist", "album", "artist", "band", "melody", "lyrics", "chord"],
  video: ["video", "movie", "film", "tv", "television", "tv show", "watch", "streaming", "episode", "youtube", "footage"],
  images: ["image", "photo", "picture", "pic", "photography", "graphic", "illustration", "drawing"],
  research: [
    "paper",
    "research",
    "academic",
    "scholar",
    "scholarly",
    "journal",
    "citation",
    "bibliography",
    "scientific",
    "study",
    "thesis",
    "literature",
  ],
  companies: [
    "company",
    "business",
    "corporate",
    "corporation",
    "firm",
    "enterprise",
    "revenue",
    "earnings",
    "profit",
    "ceo",
    "directors",
    "headquarters",
  ],
  marketing: ["seo", "keyword", "ranking", "marketing", "ads", "advertising", "advert", "campaign", "audience", "promotion", "ppc"],
  games: ["game", "play", "player", "puzzle", "board game", "gaming"],
  sports: [
    "sport",
    "football",
    "soccer",
    "basketball",
    "baseball",
    "hockey",
    "tennis",
    "league",
    "tournament",
    "championship",
    "standings",
    "nba",
    "nfl",
    "nhl",
    "mlb",
  ],
  space: [
    "outer space",
    "space exploration",
    "nasa",
    "planet",
    "mars",
    "moon",
    "galaxy",
    "astronaut",
    "telescope",
    "astronomy",
    "orbit",
    "rocket",
    "solar system",
    "universe",
  ],
  law: ["law", "legal", "lawyer", "statute", "regulation", "court", "legislation"],
  astrology: [
    "horoscope",
    "zodiac",
    "astrology",
    "astrological",
    "tarot",
    "aries",
    "taurus",
    "gemini",
    "leo",
    "virgo",
    "libra",
    "scorpio",
    "sagittarius",
    "capricorn",
    "aquarius",
    "pisces",
  ],
  code: ["coding", "programming", "source code", "developer", "github", "repository", "software", "script", "debug"],
  math: ["calculate", "calculator", "calculation", "math", "formula", "equation", "compute", "arithmetic"],
  time: ["timezone", "time zone", "clock", "current time"],
  tickets: [
    "issue",
    "ticket",
    "bug",
    "bug report",
    "backlog",
    "sprint",
    "epic",
    "user story",
    "assignee",
    "jira",
    "kanban",
    "work item",
    "milestone",
  ],
  containers: [
    "docker",
    "container",
    "kubernetes",
    "k8s",
    "pod",
    "cluster",
    "namespace",
    "helm",
    "cloud",
    "aws",
    "azure",
    "gcp",
    "serverless",
    "virtual machine",
  ],
  docs: ["documentation", "docs", "api reference", "reference docs", "manual", "readme", "code example"],
  terminal: ["terminal", "shell", "command line", "cli", "bash", "powershell", "shell command"],
  writing: ["rewrite", "paraphrase", "rephrase", "proofread", "essay", "copywriting", "wording", "polish", "blog", "grammar"],
};

/** Pseudo-terms cannot be words: `#` never survives word splitting. */
const INTENT_PREFIX = "#";

/** Whether an index term is an intent, not a word (a typo is never corrected to one). */
export function isIntentTerm(term: string): boolean {
  return term.startsWith(INTENT_PREFIX);
}

/** A cue as its words, and the intent terms it names. */
interface Cue {
  words: readonly string[];
  intents: string[];
}

/** Cues by their first word, longest first: most words of a text start none, and cost one lookup. */
const CUES_BY_FIRST_WORD = new Map<string, Cue[]>();
for (const [intent, cues] of Object.entries(INTENT_CUES)) {
  for (const text of cues.flatMap((cue) => [cue, pluralOf(cue)])) {
    const words = contentWords(text);
    const candidates = CUES_BY_FIRST_WORD.get(words[0]) ?? [];
    let cue = candidates.find((known) => known.words.join(" ") === words.join(" "));
    if (!cue) candidates.push((cue = { words, intents: [] }));
    if (!cue.intents.includes(INTENT_PREFIX + intent)) cue.intents.push(INTENT_PREFIX + intent);
    CUES_BY_FIRST_WORD.set(
      words[0],
      candidates.sort((a, b) => b.words.length - a.words.length),
    );
  }
}

/** The regular plural of a word or of a phrase's last word (`company` → `companies`); near enough for cue words. */
function pluralOf(cue: string): string {
  if (/[^aeiou]y$/.test(cue)) return `${cue.slice(0, -1)}ies`;
  return /(?:s|x|ch|sh)$/.test(cue) ? `${cue}es` : `${cue}s`;
}

/**
 * The lower-case words of a text that are not stop words, unstemmed: stems would merge what cues keep apart
 * (`news` and `new`, `marketing` and `market`).
 */
export function contentWords(text: string): string[] {
  return splitWords(text).filter((word) => !isStopWord(word));
}

/**
 * The intent terms of a text given as its content words in order (see `contentWords`), each with how many cues
 * named it. A phrase cue counts once, not also as its words.
 */
export function intentTermsOf(words: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (let i = 0; i < words.length; ) {
    const cue = CUES_BY_FIRST_WORD.get(words[i])?.find((candidate) => startsAt(words, i, candidate.words));
    if (!cue) {
      i++;
      continue;
    }
    for (const intent of cue.intents) counts.set(intent, (counts.get(intent) ?? 0) + 1);
    i += cue.words.length;
  }
  return counts;
}

function startsAt(words: readonly string[], start: number, phrase: readonly string[]): boolean {
  return phrase.every((word, i) => words[start + i] === word);
}

/**
 * Optional semantic re-ranking (`settings.search.embeddings`): ToolSearch's lexical ranking, re-ordered with vectors
 * from an embeddings endpoint the user runs, so a request in words no tool uses can still reach the right tool.
 *
 * - Tool vectors are computed in the background once startup is over, in batches (one request at a time), and kept
 *   in `mcp-embeddings.json` (search/embeddings-cache.ts): a later session asks only for new or changed tools. The
 *   vectors kept there are read as soon as the session knows its tools (`update`), so re-ranking works from the first
 *   search, whatever the eager servers are still doing.
 * - A request waits for its own vector at most `timeoutMs`; late, failing or before any tool has a vector, it gets
 *   the lexical order unchanged. A failing endpoint is reported once (and shown by /mcp status), then left alone
 *   for RETRY_AFTER_MS instead of being asked on every search.
 * - Combining (kept simple on purpose): the candidates are the lexical top RERANK_DEPTH and the semantic top
 *   RERANK_DEPTH. Each gets a lexical share (its score ÷ the best lexical score; 0 outside the lexical list) and a
 *   semantic share (its cosine placed between the RERANK_DEPTH-th best and the best cosine, clamped to 0..1; a tool
 *   without a vector yet takes its lexical share), and is ranked by a weighted mean of the two. The lexical share
 *   weighs most when the catalog knows the request's words (an exact word is surer than a similar meaning) and less
 *   as the share of words no tool uses grows (there the words find little, and meaning is most of what is known).
 *   A tool both rankings like comes first; one only the embedding finds can enter the answer; an exact name keeps
 *   its lexical lead.
 */
import { DEFAULT_EMBEDDINGS_TIMEOUT_MS, requestEmbeddings } from "./embeddings-client.ts";
import { embeddingKey, loadEmbeddings, saveEmbeddings } from "./embeddings-cache.ts";
import { errorMessage } from "../util/guards.ts";
import type { SearchHit } from "./tool-index.ts";
import { compareStrings } from "../util/text.ts";
import type { EmbeddingsSettings, McpSettings, ToolMetadata } from "../types.ts";

/** How many of each ranking are combined. */
export const RERANK_DEPTH = 20;
/**
 * The lexical share's weight is LEXICAL_WEIGHT when every content word of the request is in the catalog, and
 * LEXICAL_WEIGHT - UNKNOWN_WORDS_LEXICAL_DISCOUNT when none is. Fitted on the dev parts with a real sentence encoder
 * (bench/search-quality-semantic.ts).
 */
const LEXICAL_WEIGHT = 0.8;
const UNKNOWN_WORDS_LEXICAL_DISCOUNT = 0.6;
/** Texts per background request: a local model embeds a batch in about a second, and Pi's loop is never held long. */
const BATCH_SIZE = 32;
/** A background batch is bigger work than one request's few words: a slow local model may need a minute. */
const BATCH_TIMEOUT_FACTOR = 10;
const BATCH_MIN_TIMEOUT_MS = 60_000;
const RETRY_AFTER_MS = 60_000;
const MAX_TEXT_CHARS = 1_000;

export type SemanticReporter = (message: string) => void;

export class SemanticRanker {
  private readonly settings: EmbeddingsSettings;
  private readonly agentDir: string;
  private readonly report: SemanticReporter;
  private readonly timeoutMs: number;
  private readonly stopping = new AbortController();
  /** Every vector known, by embeddingKey: from the file and computed in this session. */
  private vectors = new Map<string, Float32Array>();
  private tools: readonly ToolMetadata[] = [];
  private keys: string[] = [];
  private started = false;
  private loading: Promise<void> | undefined;
  private filling: Promise<void> | undefined;
  private fillAgain = false;
  private lastError: string | undefined;
  /** The last problem told: the same one is told once per session, however often it comes back. */
  private reportedError: string | undefined;
  private retryAt = 0;

  constructor(settings: EmbeddingsSettings, agentDir: string, report: SemanticReporter) {
    this.settings = settings;
    this.agentDir = agentDir;
    this.report = report;
    this.timeoutMs = settings.timeoutMs ?? DEFAULT_EMBEDDINGS_TIMEOUT_MS;
  }

  /** Startup is over: from now on, tools without a vector get one in the background. */
  start(tools: Iterable<ToolMetadata>): void {
    this.started = true;
    this.update(tools);
  }

  /** The tools changed (or are first known): the file's vectors are read; new tools get vectors once started. */
  update(tools: Iterable<ToolMetadata>): void {
    this.tools = [...tools];
    this.keys = this.tools.map((tool) => embeddingKey(this.settings.model, toolText(tool)));
    void this.loadCache();
    if (this.started) this.scheduleFill();
  }

  /** Ends requests in flight; resolves once what was computed is saved. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.filling;
  }

  /**
   * `lexical` (the index's top RERANK_DEPTH, best first) re-ordered; unchanged whenever the endpoint does not help in
   * time. `unknownWordShare`: the share of the request's content words no tool uses (ToolSearchIndex).
   */
  async rerank(query: string, lexical: readonly SearchHit[], unknownWordShare: number, signal?: AbortSignal): Promise<SearchHit[]> {
    if (!this.usable()) return [...lexical];
    await this.loadCache();
    // Tools left without a vector by an earlier failure are tried again once the endpoint may be back.
    if (this.started && !this.filling && this.keys.some((key) => !this.vectors.has(key))) this.scheduleFill();
    if (!this.keys.some((key) => this.vectors.has(key))) return [...lexical];
    let queryVector: Float32Array;
    try {
      [queryVector] = await requestEmbeddings(this.settings, [query.slice(0, MAX_TEXT_CHARS)], this.timeoutMs, signal);
      this.succeeded();
    } catch (error) {
      if (!signal?.aborted) this.failed(error);
      return [...lexical];
    }
    return this.combine(unit(queryVector), lexical, LEXICAL_WEIGHT - UNKNOWN_WORDS_LEXICAL_DISCOUNT * unknownWordShare);
  }

  /** One line for /mcp status. */
  statusLine(): string {
    const embedded = new Set(this.keys.filter((key) => this.vectors.has(key))).size;
    const total = new Set(this.keys).size;
    const where = new URL(this.settings.url).origin;
    const state = this.lastError ? ` · failing: ${this.lastError}` : this.filling ? " · embedding" : "";
    return `Semantic re-ranking: ${this.settings.model} at ${where} · ${embedded} of ${total} tool texts embedded${state}`;
  }

  private usable(): boolean {
    return this.lastError === undefined || Date.now() >= this.retryAt;
  }

  private scheduleFill(): void {
    if (this.filling) {
      this.fillAgain = true;
      return;
    }
    this.filling = this.fill().finally(() => {
      this.filling = undefined;
      if (this.fillAgain && !this.stopping.signal.aborted) {
        this.fillAgain = false;
        this.scheduleFill();
      }
    });
  }

  /** The vectors kept in `mcp-embeddings.json`, read once (a local file: a search may wait for it). */
  private loadCache(): Promise<void> {
    this.loading ??= loadEmbeddings(this.agentDir).then(({ vectors, problems }) => {
      for (const [key, vector] of vectors) if (!this.vectors.has(key)) this.vectors.set(key, unit(vector));
      for (const problem of problems) this.report(`MCP embeddings cache: ${problem}`);
    });
    return this.loading;
  }

  private async fill(): Promise<void> {
    await this.loadCache();
    if (!this.usable()) return;
    const missing = new Map<string, string>();
    this.tools.forEach((tool, index) => {
      if (!this.vectors.has(this.keys[index])) missing.set(this.keys[index], toolText(tool));
    });
    const computed = new Map<string, Float32Array>();
    const entries = [...missing];
    for (let start = 0; start < entries.length && !this.stopping.signal.aborted; start += BATCH_SIZE) {
      const batch = entries.slice(start, start + BATCH_SIZE);
      try {
        const vectors = await requestEmbeddings(
          this.settings,
          batch.map(([, text]) => text),
          Math.max(this.timeoutMs * BATCH_TIMEOUT_FACTOR, BATCH_MIN_TIMEOUT_MS),
          this.stopping.signal,
        );
        this.succeeded();
        batch.forEach(([key], index) => {
          computed.set(key, vectors[index]);
          this.vectors.set(key, unit(vectors[index]));
        });
      } catch (error) {
        if (!this.stopping.signal.aborted) this.failed(error);
        break;
      }
    }
    if (computed.size === 0) return;
    // Everything this session uses is saved (and marked used), not only what is new.
    const used = new Map(this.keys.filter((key) => this.vectors.has(key)).map((key) => [key, this.vectors.get(key)!]));
    const skipped = await saveEmbeddings(this.agentDir, used);
    if (skipped) this.report(`MCP embeddings cache not updated: ${skipped}`);
  }

  private succeeded(): void {
    this.lastError = undefined;
  }

  private failed(error: unknown): void {
    this.lastError = errorMessage(error);
    this.retryAt = Date.now() + RETRY_AFTER_MS;
    if (this.lastError === this.reportedError) return;
    this.reportedError = this.lastError;
    this.report(`MCP semantic re-ranking unavailable, ToolSearch uses its lexical ranking: ${this.lastError}`);
  }

  private combine(query: Float32Array, lexical: readonly SearchHit[], lexicalWeight: number): SearchHit[] {
    const similarity = this.tools.map((_, index) => {
      const vector = this.vectors.get(this.keys[index]);
      return vector && vector.length === query.length ? dot(query, vector) : undefined;
    });
    const semanticTop = similarity
      .map((score, index) => ({ index, score: score ?? Number.NEGATIVE_INFINITY }))
      .filter((hit) => Number.isFinite(hit.score))
      .sort((a, b) => b.score - a.score)
      .slice(0, RERANK_DEPTH);
    if (semanticTop.length === 0) return [...lexical];
    const best = semanticTop[0].score;
    const floor = semanticTop[semanticTop.length - 1].score;
    const semanticShare = (score: number) => (best > floor ? Math.min(1, Math.max(0, (score - floor) / (best - floor))) : 1);
    const bestLexical = lexical[0]?.score ?? 0;
    const lexicalShare = new Map(lexical.map((hit) => [hit.tool, bestLexical > 0 ? hit.score / bestLexical : 0]));
    const indexOf = new Map(this.tools.map((tool, index) => [tool, index]));
    const candidates = new Set([...lexical.map((hit) => hit.tool), ...semanticTop.map((hit) => this.tools[hit.index])]);
    const lexicalOrder = new Map(lexical.map((hit, rank) => [hit.tool, rank]));
    return [...candidates]
      .map((tool) => {
        const lexicalPart = lexicalShare.get(tool) ?? 0;
        const cosine = similarity[indexOf.get(tool) ?? -1];
        const semanticPart = cosine === undefined ? lexicalPart : semanticShare(cosine);
        return { tool, score: lexicalWeight * lexicalPart + (1 - lexicalWeight) * semanticPart };
      })
      .sort(
        (a, b) =>
          b.score - a.score ||
          (lexicalOrder.get(a.tool) ?? RERANK_DEPTH) - (lexicalOrder.get(b.tool) ?? RERANK_DEPTH) ||
          compareStrings(a.tool.name, b.tool.name),
      );
  }
}

/** What is embedded for a tool: its server, its name and its description. */
function toolText(tool: ToolMetadata): string {
  return `${tool.serverName} ${tool.originalName}: ${String(tool.description ?? "")}`.slice(0, MAX_TEXT_CHARS);
}

/** Scaled to length 1, so a dot product is the cosine. */
function unit(vector: Float32Array): Float32Array {
  let sum = 0;
  for (const x of vector) sum += x * x;
  const norm = Math.sqrt(sum);
  return norm > 0 ? vector.map((x) => x / norm) : vector;
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i] * b[i];
  return sum;
}

/**
 * The ranker of a session with `settings.search.embeddings`, else none: the vectors kept from earlier sessions serve
 * the tools known now (from the cache) right away; new vectors are computed once startup is over.
 */
export function semanticRankerFor(
  settings: McpSettings,
  agentDir: string,
  warn: (message: string) => void,
  knownTools: Iterable<ToolMetadata>,
): SemanticRanker | undefined {
  const embeddings = settings.search?.embeddings;
  if (!embeddings) return undefined;
  const ranker = new SemanticRanker(embeddings, agentDir, warn);
  ranker.update(knownTools);
  return ranker;
}

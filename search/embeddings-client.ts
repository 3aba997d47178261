/**
 * One request to an OpenAI-compatible embeddings endpoint (`POST …/embeddings`, as Ollama, LM Studio, llama.cpp's
 * server, vLLM and OpenAI answer it): texts in, one vector per text out. Every request is bounded by a timeout, and
 * every way it can fail (refused, slow, an HTTP error, an answer that is not the expected JSON) is an
 * EmbeddingsError whose message names the endpoint and what went wrong, so a caller can fall back and say why once.
 */
import { errorMessage, isJsonObject } from "../util/guards.ts";
import { oneLine } from "../util/text.ts";
import type { EmbeddingsSettings } from "../types.ts";

export const DEFAULT_EMBEDDINGS_TIMEOUT_MS = 2_000;
/** How much of an answer that is not the expected one its error quotes. */
const ERROR_BODY_CHARS = 120;

export class EmbeddingsError extends Error {}

/** The URL requests go to: the configured one, with `/embeddings` appended to a base URL (`…/v1`). */
export function embeddingsUrl(settings: EmbeddingsSettings): string {
  const url = new URL(settings.url);
  if (!url.pathname.replace(/\/+$/, "").endsWith("/embeddings")) url.pathname = `${url.pathname.replace(/\/+$/, "")}/embeddings`;
  return url.toString();
}

/** One vector per text, in order. Throws EmbeddingsError. */
export async function requestEmbeddings(
  settings: EmbeddingsSettings,
  texts: readonly string[],
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<Float32Array[]> {
  const url = embeddingsUrl(settings);
  const where = `embeddings endpoint ${new URL(url).origin}`;
  const timeout = AbortSignal.timeout(timeoutMs);
  const headers: Record<string, string> = { "content-type": "application/json" };
  const apiKey = settings.apiKeyEnv ? process.env[settings.apiKeyEnv] : undefined;
  if (apiKey) headers.authorization = `Bearer ${apiKey}`;
  let body: unknown;
  try {
    const response = await fetch(url, {
      method: "POST",
      headers,
      body: JSON.stringify({ model: settings.model, input: texts }),
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
    const text = await response.text();
    if (!response.ok) throw new EmbeddingsError(`${where}: HTTP ${response.status} ${oneLine(text, ERROR_BODY_CHARS, "excerpt")}`);
    body = parseJson(text, where);
  } catch (error) {
    if (error instanceof EmbeddingsError) throw error;
    if (timeout.aborted) throw new EmbeddingsError(`${where} did not answer within ${timeoutMs} ms`);
    throw new EmbeddingsError(`${where}: ${causeOf(error)}`);
  }
  return vectorsOf(body, texts.length, where);
}

function parseJson(text: string, where: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new EmbeddingsError(`${where}: the answer is not JSON (${oneLine(text, ERROR_BODY_CHARS, "excerpt")})`);
  }
}

/** `{ data: [{ embedding: number[], index? }] }`, one entry per text, all of one dimension. */
function vectorsOf(body: unknown, count: number, where: string): Float32Array[] {
  const data = isJsonObject(body) && Array.isArray(body.data) ? body.data : undefined;
  if (!data) throw new EmbeddingsError(`${where}: the answer has no "data" list`);
  if (data.length !== count) throw new EmbeddingsError(`${where}: ${data.length} vectors for ${count} texts`);
  const vectors = new Array<Float32Array>(count);
  data.forEach((item, position) => {
    const index = isJsonObject(item) && typeof item.index === "number" ? item.index : position;
    const embedding = isJsonObject(item) ? item.embedding : undefined;
    if (!Array.isArray(embedding) || embedding.length === 0 || !embedding.every((x) => typeof x === "number" && Number.isFinite(x))) {
      throw new EmbeddingsError(`${where}: entry ${position} has no "embedding" list of numbers`);
    }
    if (!(index >= 0 && index < count) || vectors[index]) throw new EmbeddingsError(`${where}: entry ${position} has a bad "index"`);
    vectors[index] = Float32Array.from(embedding as number[]);
  });
  if (vectors.some((vector) => vector.length !== vectors[0].length)) throw new EmbeddingsError(`${where}: vectors of different lengths`);
  return vectors;
}

/** fetch's "fetch failed" hides the reason (ECONNREFUSED, ENOTFOUND) in its cause. */
function causeOf(error: unknown): string {
  const cause = error instanceof Error ? error.cause : undefined;
  return cause ? `${errorMessage(error)} (${errorMessage(cause)})` : errorMessage(error);
}

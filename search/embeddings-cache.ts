/**
 * `<agentDir>/mcp-embeddings.json`: tool vectors from the user's embeddings endpoint, kept between sessions so a
 * second start asks the endpoint only for tools that are new or changed. An entry is keyed by a hash of the model
 * and the exact text embedded: a changed description or another model is another key, so nothing is ever stale.
 * Beside the metadata cache, private (0600), written atomically under the same kind of lock (several Pi processes
 * may share it), merged with what other processes wrote, and bounded (least recently used entries go first).
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { updateFileLocked } from "../util/file-lock.ts";
import { errorCode, errorMessage, isJsonObject } from "../util/guards.ts";

export const EMBEDDINGS_CACHE_FILE_NAME = "mcp-embeddings.json";
const CACHE_VERSION = 1;
/**
 * Several times the tools a large setup has (1,000), across models; at 768 dimensions ~20 MB, read in one go at
 * session start (in the background) without holding Pi's loop long.
 */
const MAX_ENTRIES = 5_000;

interface StoredVector {
  /** Float32, little-endian, base64. */
  vector: string;
  usedAt: number;
}

export interface EmbeddingsSnapshot {
  vectors: Map<string, Float32Array>;
  /** Why the file was ignored (empty when all was well or there was no file). */
  problems: string[];
}

export function embeddingsCachePath(agentDir: string): string {
  return join(agentDir, EMBEDDINGS_CACHE_FILE_NAME);
}

export function embeddingKey(model: string, text: string): string {
  return createHash("sha256").update(model).update("\0").update(text).digest("hex");
}

/** Never throws: an unreadable or malformed file is an empty cache (rebuilt on the next write), with a problem. */
export async function loadEmbeddings(agentDir: string): Promise<EmbeddingsSnapshot> {
  const path = embeddingsCachePath(agentDir);
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    return {
      vectors: new Map(),
      problems: errorCode(error) === "ENOENT" ? [] : [`${path}: cannot be read (${errorMessage(error)}); ignored`],
    };
  }
  const stored = parseStored(text);
  if (!stored) return { vectors: new Map(), problems: [`${path}: not a valid embeddings cache; ignored, rebuilt on the next write`] };
  const vectors = new Map<string, Float32Array>();
  for (const [key, entry] of stored) vectors.set(key, decodeVector(entry.vector));
  return { vectors, problems: [] };
}

/** Adds these vectors (and marks them used now), keeps other processes' entries. Returns why it was skipped, if it was. */
export async function saveEmbeddings(agentDir: string, vectors: ReadonlyMap<string, Float32Array>): Promise<string | undefined> {
  const now = Date.now();
  return updateFileLocked(embeddingsCachePath(agentDir), (current) => {
    const entries = new Map(current === undefined ? [] : (parseStored(current) ?? []));
    for (const [key, vector] of vectors) entries.set(key, { vector: encodeVector(vector), usedAt: now });
    const kept = [...entries].sort(([, a], [, b]) => b.usedAt - a.usedAt).slice(0, MAX_ENTRIES);
    return JSON.stringify({ version: CACHE_VERSION, vectors: Object.fromEntries(kept) });
  });
}

/** The file's entries, or undefined when it is not ours (another version, malformed). Bad entries are dropped. */
function parseStored(text: string): Map<string, StoredVector> | undefined {
  let file: unknown;
  try {
    file = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isJsonObject(file) || file.version !== CACHE_VERSION || !isJsonObject(file.vectors)) return undefined;
  const entries = new Map<string, StoredVector>();
  for (const [key, entry] of Object.entries(file.vectors)) {
    if (isJsonObject(entry) && typeof entry.vector === "string" && typeof entry.usedAt === "number" && entry.vector.length > 0) {
      entries.set(key, { vector: entry.vector, usedAt: entry.usedAt });
    }
  }
  return entries;
}

function encodeVector(vector: Float32Array): string {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString("base64");
}

function decodeVector(text: string): Float32Array {
  const bytes = Buffer.from(text, "base64");
  // Copied: a Buffer's bytes may sit at an offset not aligned for Float32Array.
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + (bytes.byteLength - (bytes.byteLength % 4))));
}

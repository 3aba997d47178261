/**
 * Keeps what the model is not shown of a result — the whole text of a result past the output limits, binary data
 * it cannot take (audio, blobs, images too large) — in a file it can read with Pi's `read`, `grep` or `bash`, so a
 * large result is previewed instead of lost.
 *
 * The files live in `<agentDir>/mcp-results/`: a directory only the user can open (0700) holding files only the user
 * can read (0600), in the user's own agent directory rather than the shared temp directory (no other user can
 * create or swap it beforehand, and a reboot does not empty it under a session that names its files). A file holds
 * the server's result and nothing else (no config, arguments or credentials). Each write prunes the directory:
 * files older than a week go, then the oldest until the total is within 100 MB, so it never grows without bound.
 */
import { randomBytes } from "node:crypto";
import { chmod, lstat, mkdir, readdir, stat, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { lazyLoad } from "../util/lazy-load.ts";
import { ignored } from "../util/debug-log.ts";

export const RESULT_DIR_NAME = "mcp-results";
/** Files older than this are removed at the next write. */
export const MAX_RESULT_AGE_MS = 7 * 24 * 60 * 60_000;
/** The directory's total size; the oldest files go first, and a single result larger than this is not kept. */
export const MAX_RESULT_DIR_BYTES = 100 * 1024 * 1024;

export interface SpillLimits {
  maxAgeMs: number;
  maxTotalBytes: number;
}

const DEFAULT_LIMITS: SpillLimits = { maxAgeMs: MAX_RESULT_AGE_MS, maxTotalBytes: MAX_RESULT_DIR_BYTES };

export function resultDir(agentDir: string): string {
  return join(agentDir, RESULT_DIR_NAME);
}

/**
 * Writes `data` to a new private file named after `label` (a server and tool name) with the extension of
 * `mimeType`; its path, or undefined when it cannot be kept (too large, no space, the directory is not ours).
 */
export async function keepInFile(
  dir: string,
  data: string | Buffer,
  mimeType: string,
  label: string,
  limits: SpillLimits = DEFAULT_LIMITS,
): Promise<string | undefined> {
  const size = typeof data === "string" ? Buffer.byteLength(data, "utf8") : data.length;
  if (size > limits.maxTotalBytes) return undefined;
  try {
    await ensurePrivateDir(dir);
    const name = `${timestamp()}-${safeName(label)}-${randomBytes(3).toString("hex")}.${await extensionOf(mimeType)}`;
    const path = join(dir, name);
    await writeFile(path, data, { mode: 0o600, flag: "wx" });
    await prune(dir, name, limits);
    return path;
  } catch {
    return undefined;
  }
}

/** Creates the directory 0700, or checks an existing one is a real directory of this user and makes it 0700. */
async function ensurePrivateDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const info = await lstat(dir);
  if (!info.isDirectory()) throw new Error(`${dir} is not a directory`);
  const uid = process.getuid?.();
  if (uid !== undefined && info.uid !== uid) throw new Error(`${dir} belongs to another user`);
  if ((info.mode & 0o777) !== 0o700) await chmod(dir, 0o700);
}

/** Drops files past the age limit, then the oldest until the total fits; `keep` (just written) stays. */
async function prune(dir: string, keep: string, limits: SpillLimits): Promise<void> {
  const now = Date.now();
  const files = await Promise.all(
    (await readdir(dir)).map(async (name) => {
      const info = await stat(join(dir, name)).catch(() => undefined);
      return info?.isFile() ? { name, size: info.size, mtimeMs: info.mtimeMs } : undefined;
    }),
  );
  let total = 0;
  const newestFirst = files.filter((file) => file !== undefined).sort((a, b) => b.mtimeMs - a.mtimeMs);
  const doomed: string[] = [];
  for (const file of newestFirst) {
    const tooOld = now - file.mtimeMs > limits.maxAgeMs;
    if (file.name !== keep && (tooOld || total + file.size > limits.maxTotalBytes)) doomed.push(file.name);
    else total += file.size;
  }
  // Another Pi process may be pruning too: a file already gone is fine.
  await Promise.all(doomed.map((name) => unlink(join(dir, name)).catch(ignored(`removing the old result file ${name}`))));
}

function timestamp(): string {
  return new Date().toISOString().replace(/[:.]/g, "-");
}

/** Names from servers can hold anything: keep letters, digits, `-` and `_`, and not too many. */
function safeName(label: string): string {
  return label.replace(/[^A-Za-z0-9_-]+/g, "_").slice(0, 60) || "result";
}

/** Loaded on the first file only: its media-type table is large and most sessions never need it. */
const mimeTypes = lazyLoad(() => import("mime-types"));

/** Audio types whose first extension in the media-type table is not the one players and people expect. */
const USUAL_EXTENSIONS: Readonly<Record<string, string>> = {
  "audio/mpeg": "mp3",
  "audio/ogg": "ogg",
  "audio/flac": "flac",
  "audio/aac": "aac",
};

/** The usual extension of a media type (`image/png` → `png`, `text/plain` → `txt`), `bin` for what is unknown. */
async function extensionOf(mimeType: string): Promise<string> {
  const type = mimeType.toLowerCase();
  if (Object.hasOwn(USUAL_EXTENSIONS, type)) return USUAL_EXTENSIONS[type]!;
  const extension = (await mimeTypes()).extension(mimeType);
  return extension === false ? "bin" : extension;
}

/**
 * Replacing a file all at once: the content goes to a private temp file beside it, which is then renamed over the
 * target, so a reader (or a crash) never sees half a file. The temp file never outlives the call.
 */
import { randomBytes } from "node:crypto";
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { ignored } from "./debug-log.ts";

export interface AtomicWriteOptions {
  /** Default 0600: these files are the user's own. */
  mode?: number;
  /** Last chance to give up (throw) after the content is written and before it replaces the target. */
  beforeRename?: () => void;
}

export async function writeFileAtomic(path: string, content: string | Uint8Array, options: AtomicWriteOptions = {}): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temp = `${path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  try {
    await writeFile(temp, content, { mode: options.mode ?? 0o600, flag: "wx" });
    options.beforeRename?.();
    await rename(temp, path);
  } finally {
    await rm(temp, { force: true }).catch(ignored(`removing the temporary file ${temp}`));
  }
}

/** Changes whenever the file is rewritten (or appears, or goes away): whether what was read from it still holds. */
import { statSync } from "node:fs";

export function fileStamp(path: string): string {
  try {
    const stats = statSync(path);
    return `${stats.mtimeMs}:${stats.size}`;
  } catch {
    return "absent";
  }
}

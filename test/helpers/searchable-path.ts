/**
 * PATH for a test that starts a command found nowhere. With a directory on PATH that this user may not search (root's,
 * when the tests run as another user with root's environment), the system reports such a command as EACCES instead
 * of ENOENT; without those directories it says "not found" whoever runs the tests.
 */
import { accessSync, constants } from "node:fs";
import { delimiter } from "node:path";

export function searchablePath(): string {
  const dirs = (process.env.PATH ?? "").split(delimiter).filter((dir) => dir !== "");
  return dirs.filter(isSearchable).join(delimiter);
}

function isSearchable(dir: string): boolean {
  try {
    accessSync(dir, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

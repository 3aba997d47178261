/**
 * Whether a command can be found on PATH, the way a shell looks for it (on Windows with the extensions of
 * PATHEXT), without running it: a runtime that is missing is named before a config entry that needs it is written.
 */
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, join } from "node:path";

export function findExecutable(command: string, env: NodeJS.ProcessEnv = process.env, platform = process.platform): string | undefined {
  const windows = platform === "win32";
  const pathValue = (windows ? Object.entries(env).find(([key]) => key.toUpperCase() === "PATH")?.[1] : env.PATH) ?? "";
  const extensions = windows ? ["", ...(env.PATHEXT ?? ".COM;.EXE;.BAT;.CMD").split(";").filter(Boolean)] : [""];
  for (const dir of pathValue.split(windows ? ";" : delimiter)) {
    if (dir === "") continue;
    for (const extension of extensions) {
      const candidate = join(dir, command + extension);
      if (isExecutableFile(candidate, windows)) return candidate;
    }
  }
  return undefined;
}

function isExecutableFile(path: string, windows: boolean): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    if (!windows) accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Paths written in a config file or a setting, read for the platform they were written on. */
import path from "node:path";

/** `~` and `~/…` (also `~\…` on Windows) at the start of a path; `~user` is left alone. */
export function expandHome(text: string, homeDir: string, platform: NodeJS.Platform): string {
  if (text === "~") return homeDir;
  const separators = platform === "win32" ? ["/", "\\"] : ["/"];
  if (text.startsWith("~") && separators.includes(text.charAt(1))) return pathModule(platform).join(homeDir, text.slice(2));
  return text;
}

export function pathModule(platform: NodeJS.Platform): path.PlatformPath {
  return platform === "win32" ? path.win32 : path.posix;
}

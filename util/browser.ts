/**
 * Opening a web page in the user's browser, best effort: `$BROWSER` when set (a command, `%s` standing for the URL,
 * else the URL is its last argument), otherwise the platform's opener. The URL is always an argument of its own,
 * never passed through a shell. Nothing here waits for the browser or fails loudly: the caller shows the URL too.
 */
import { spawn } from "node:child_process";
import { ignored } from "./debug-log.ts";

/** True when an opener was started (not that a page appeared). */
export function openInBrowser(url: string, env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): boolean {
  const [command, ...args] = browserCommand(url, env, platform);
  if (!command) return false;
  try {
    const child = spawn(command, args, { detached: true, stdio: "ignore", windowsHide: true });
    child.on("error", ignored(`starting the browser opener ${command} (the URL is on screen anyway)`));
    child.unref();
    return true;
  } catch {
    return false;
  }
}

export function browserCommand(url: string, env: NodeJS.ProcessEnv, platform: NodeJS.Platform): string[] {
  const configured = env.BROWSER?.trim();
  if (configured) {
    const words = configured.split(/\s+/);
    return words.includes("%s") ? words.map((word) => (word === "%s" ? url : word)) : [...words, url];
  }
  // rundll32 rather than `cmd /c start`: cmd would read the URL's `&` as a command separator.
  if (platform === "win32") return ["rundll32", "url.dll,FileProtocolHandler", url];
  return [platform === "darwin" ? "open" : "xdg-open", url];
}

/**
 * Would a browser opened here reach the user? Not over SSH (the opener would start one on the remote machine, or
 * fail), unless `$BROWSER` says what to run.
 */
export function browserReachesUser(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.BROWSER?.trim()) return true;
  return !env.SSH_CONNECTION && !env.SSH_TTY;
}

/**
 * Opening a web page in the user's browser, best effort: `$BROWSER` when set (a command, `%s` standing for the URL,
 * else the URL is its last argument), otherwise the platform's opener. The URL is always an argument of its own,
 * never passed through a shell. Nothing here waits for the browser or fails loudly: the caller shows the URL too,
 * and may learn whether the opener failed (`openInBrowserOutcome`), or why none would reach the user (`noBrowserHere`).
 */
import { spawn } from "node:child_process";
import { ignored } from "./debug-log.ts";

/** True when an opener was started (not that a page appeared). */
export function openInBrowser(url: string, env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): boolean {
  return startOpener(url, env, platform, () => {});
}

/**
 * Opens the page as `openInBrowser` does, and settles with why it could not (the opener did not start, or exited with
 * an error: `xdg-open exited with status 3`), or with nothing once the opener exited with 0. It stays pending while
 * the opener runs: one may run as long as the browser it started, so the caller bounds the wait.
 */
export function openInBrowserOutcome(
  url: string,
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): Promise<string | undefined> {
  return new Promise((resolve) => {
    if (!startOpener(url, env, platform, resolve)) resolve("there is no opener to run");
  });
}

function startOpener(
  url: string,
  env: NodeJS.ProcessEnv,
  platform: NodeJS.Platform,
  outcome: (failure: string | undefined) => void,
): boolean {
  const [command, ...args] = browserCommand(url, env, platform);
  if (!command) return false;
  try {
    const child = spawn(command, args, { detached: true, stdio: "ignore", windowsHide: true });
    child.on("error", (error: NodeJS.ErrnoException) => {
      ignored(`starting the browser opener ${command} (the URL is on screen anyway)`)(error);
      outcome(error.code === "ENOENT" ? `${command} was not found` : `${command} did not start: ${error.message}`);
    });
    child.on("exit", (code, signal) =>
      outcome(code === 0 ? undefined : `${command} exited with ${code === null ? signal : `status ${code}`}`),
    );
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

/** Where a browser needs a display to open on (X11 or Wayland): xdg-open finds none without one. */
const NEEDS_DISPLAY: ReadonlySet<NodeJS.Platform> = new Set(["linux", "freebsd", "openbsd", "netbsd"]);

/**
 * Why a browser opened here would not reach the user, or nothing when it would: over SSH (the opener would start one
 * on the remote machine, or fail), or without a display (a server, a container: xdg-open has nothing to open it on).
 * `$BROWSER` overrides both: it says what to run. WSL opens Windows' browser without a display of its own.
 */
export function noBrowserHere(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string | undefined {
  if (env.BROWSER?.trim()) return undefined;
  if (env.SSH_CONNECTION || env.SSH_TTY) return "over SSH";
  if (NEEDS_DISPLAY.has(platform) && !env.DISPLAY && !env.WAYLAND_DISPLAY && !env.WSL_DISTRO_NAME) {
    return "no display: neither DISPLAY nor WAYLAND_DISPLAY is set, and no BROWSER";
  }
  return undefined;
}

/**
 * A real headless Chromium for the tests of views (MCP Apps): Debian's `chromium` (`apt-get install -y chromium`, as
 * .ci/run does), or the one `$CHROMIUM` names, driven by playwright-core. A test that needs it and finds none fails
 * with one line saying what to install: it is never skipped.
 */
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

const CANDIDATES = ["/usr/bin/chromium", "/usr/bin/chromium-browser"];

export function chromiumPath(env: NodeJS.ProcessEnv = process.env): string {
  const path = env.CHROMIUM?.trim() || CANDIDATES.find((candidate) => existsSync(candidate));
  if (!path || !existsSync(path))
    throw new Error("No Chromium for the MCP Apps tests: install it with `apt-get install -y chromium` (or set CHROMIUM=<path>)");
  return path;
}

/** One browser per test file: it is slow to start. On this closed network its own connections are turned off. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: [
      // As root, Chromium refuses to start with its sandbox.
      ...(process.getuid?.() === 0 ? ["--no-sandbox"] : []),
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/**
 * Having npm itself install (or re-check with the registry) the specs of an npx command line into their `_npx`
 * directory, exactly as npx would, without running the program: `npm exec --package … -- node --version`.
 */
import spawn from "cross-spawn";
import { SharedByKey } from "../util/async-work.ts";
import { formatSeconds } from "../util/format-time.ts";
import type { NpxInvocation } from "./invocation.ts";
import { type NpxFallback, npxFallback } from "./resolution.ts";
import { killProcessGroupNow } from "../util/process-tree.ts";

const NPM_INSTALL_TIMEOUT_MS = 120_000;
const STDERR_TAIL_CHARS = 2_000;

export type InstallOutcome = { kind: "installed" } | NpxFallback;

export interface NpmInstallRequest {
  invocation: Pick<NpxInvocation, "npmCommand" | "packages" | "yes" | "npmOptions">;
  installDir: string;
  cache: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/** Installs in progress, per install directory. */
const installs = new SharedByKey<InstallOutcome>();

/** Concurrent requests for one install directory share one npm run. */
export function installWithNpm(request: NpmInstallRequest): Promise<InstallOutcome> {
  return installs.run(request.installDir, () => runNpmExec(request));
}

function runNpmExec({ invocation, cache, cwd, env }: NpmInstallRequest): Promise<InstallOutcome> {
  const { npmCommand, packages, yes, npmOptions } = invocation;
  // Without --yes npx installs when stdin is not a terminal unless npm's `yes` config says no: stdin is not one here.
  const yesOption = yes === undefined ? [] : [`--yes=${yes}`];
  const args = ["exec", ...yesOption, `--cache=${cache}`, ...npmOptions, ...packages.map((p) => `--package=${p}`)];
  args.push("--", "node", "--version");
  return new Promise((resolve) => {
    let stderr = "";
    const windows = process.platform === "win32";
    // Its own process group, so a timeout ends npm's install scripts too.
    const child = spawn(npmCommand, args, { cwd, env, stdio: ["ignore", "ignore", "pipe"], detached: !windows, windowsHide: true });
    const timer = setTimeout(() => {
      stderr += `\ntimed out after ${formatSeconds(NPM_INSTALL_TIMEOUT_MS)}`;
      if (windows || !child.pid) child.kill("SIGKILL");
      else killProcessGroupNow(child.pid);
    }, NPM_INSTALL_TIMEOUT_MS);
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (stderr = (stderr + chunk).slice(-STDERR_TAIL_CHARS)));
    child.on("error", (error) => {
      clearTimeout(timer);
      resolve(npxFallback(`could not start ${npmCommand}: ${error.message}`));
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve(code === 0 ? { kind: "installed" } : npxFallback(`npm exec failed (${code}): ${lastLines(stderr)}`));
    });
  });
}

function lastLines(text: string): string {
  return text.trim().split(/\r?\n/).slice(-3).join(" | ");
}

/**
 * Where npm keeps things: its cache (whose `_npx/<hash>` directories hold what npx installed) and its global
 * prefix, found the way npm itself finds them, and the `_npx` directory npm picks for a list of package specs.
 */
import spawn from "cross-spawn";
import { createHash } from "node:crypto";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import type npa from "npm-package-arg";
import { lazyRequire } from "../util/lazy-load.ts";
import { expandHome } from "../util/paths.ts";
import { compareStrings } from "../util/text.ts";

/** npm's own spec parser, loaded with the first npx server (not at Pi startup: lazy servers resolve nothing then). */
export const parseSpec = lazyRequire<typeof npa>("npm-package-arg");

export interface NpmLocations {
  cache: string;
  globalPrefix: string;
}

export interface NpmLocationQuery {
  npmCommand: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** A `--cache` given on the command line wins over every config source. */
  cacheOverride?: string;
}

const CONFIG_QUERY_TIMEOUT_MS = 15_000;

/** `npm config get` answers, one per npm + directory + npm-relevant environment (asking costs a process start). */
const configQueries = new Map<string, Promise<NpmConfigAnswer>>();

interface NpmConfigAnswer {
  cache?: string;
  prefix?: string;
}

export async function findNpmLocations(query: NpmLocationQuery): Promise<NpmLocations> {
  const { cwd, env } = query;
  const cacheOverride = query.cacheOverride ?? npmEnvConfig(env, "cache");
  const prefixFromEnv = npmEnvConfig(env, "prefix");
  const configured = cacheOverride && prefixFromEnv ? {} : await askNpmConfig(query);
  const cache = cacheOverride ?? configured.cache;
  const prefix = prefixFromEnv ?? configured.prefix;
  return {
    cache: cache ? toAbsolutePath(cache, cwd, env) : defaultCache(env),
    globalPrefix: prefix ? toAbsolutePath(prefix, cwd, env) : defaultGlobalPrefix(env),
  };
}

/**
 * An `npm_config_<key>` variable as npm reads it: any letter case (npm sets the lowercase form for the processes it
 * starts, so a Pi started through npm has those), the last non-empty one wins.
 */
export function npmEnvConfig(env: NodeJS.ProcessEnv, key: string): string | undefined {
  const wanted = `npm_config_${key}`;
  let found: string | undefined;
  for (const [name, value] of Object.entries(env)) {
    if (value && name.toLowerCase() === wanted) found = value;
  }
  return found;
}

/** npm's `_npx` directory for these specs: see libnpmexec (npm 11) — the hash covers the specs as typed. */
export function npxInstallDir(cache: string, packages: readonly string[], cwd: string): string {
  const hashed = packages
    .map((spec) => {
      const parsed = parseSpec()(spec, cwd);
      // A directory spec counts by its resolved path, so `npx .` differs per directory.
      return parsed.type === "directory" && parsed.fetchSpec ? parsed.fetchSpec : spec;
    })
    // npm's own order (not compareStrings): the hash must be the directory npx itself picked.
    .sort((a, b) => a.localeCompare(b, "en"))
    .join("\n");
  const hash = createHash("sha512").update(hashed).digest("hex").slice(0, 16);
  return join(cache, "_npx", hash);
}

function askNpmConfig(query: NpmLocationQuery): Promise<NpmConfigAnswer> {
  const key = JSON.stringify([query.npmCommand, query.cwd, npmRelevantEnv(query.env)]);
  let answer = configQueries.get(key);
  if (!answer) {
    answer = runNpmConfigGet(query);
    configQueries.set(key, answer);
  }
  return answer;
}

/** The variables that can change npm's config answer (its own settings and where its config files live). */
function npmRelevantEnv(env: NodeJS.ProcessEnv): [string, string | undefined][] {
  return Object.entries(env)
    .filter(([name]) => /^(npm_config_.*|home|userprofile|appdata|localappdata|prefix)$/i.test(name))
    .sort(([a], [b]) => compareStrings(a, b));
}

function runNpmConfigGet({ npmCommand, cwd, env }: NpmLocationQuery): Promise<NpmConfigAnswer> {
  return new Promise((resolvePromise) => {
    let stdout = "";
    const child = spawn(npmCommand, ["config", "get", "cache", "prefix"], {
      cwd,
      env,
      stdio: ["ignore", "pipe", "ignore"],
      timeout: CONFIG_QUERY_TIMEOUT_MS,
      windowsHide: true,
    });
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    // No npm (or a broken one): npm's documented defaults apply, as they would for npx.
    child.on("error", () => resolvePromise({}));
    child.on("close", (code) => resolvePromise(code === 0 ? parseConfigLines(stdout) : {}));
  });
}

/** `npm config get cache prefix` prints `cache=…` and `prefix=…` lines. */
function parseConfigLines(output: string): NpmConfigAnswer {
  const values = new Map<string, string>();
  for (const line of output.split(/\r?\n/)) {
    const separator = line.indexOf("=");
    if (separator > 0) values.set(line.slice(0, separator).trim(), line.slice(separator + 1).trim());
  }
  return { cache: values.get("cache") || undefined, prefix: values.get("prefix") || undefined };
}

function toAbsolutePath(value: string, cwd: string, env: NodeJS.ProcessEnv): string {
  return resolve(cwd, expandHome(value, homeDir(env), process.platform));
}

function homeDir(env: NodeJS.ProcessEnv): string {
  return (process.platform === "win32" ? env.USERPROFILE : env.HOME) || homedir();
}

/** npm's defaults: `~/.npm`, or `%LocalAppData%\npm-cache` on Windows. */
function defaultCache(env: NodeJS.ProcessEnv): string {
  if (process.platform !== "win32") return join(homeDir(env), ".npm");
  return join(env.LOCALAPPDATA || join(homeDir(env), "AppData", "Local"), "npm-cache");
}

/** npm's default global prefix: `$PREFIX`, else derived from the node binary's location. */
function defaultGlobalPrefix(env: NodeJS.ProcessEnv): string {
  if (env.PREFIX) return env.PREFIX;
  return process.platform === "win32" ? dirname(process.execPath) : dirname(dirname(process.execPath));
}

/**
 * Starts `npx pkg …` servers without npx: the command becomes `node <bin> …` inside npm's own `_npx` install, picked
 * exactly as npx would pick it (same install directory, version rules, bin choice, `-p` commands). That removes the
 * ~90 MB npm parent process each npx server keeps alive and npx's registry round trip on every start.
 * Whenever the answer is not certain, the original command is kept.
 */
import { resolve } from "node:path";
import { findNpmLocations, npmEnvConfig, npxInstallDir } from "./npm-locations.ts";
import { type SpawnForm, isPresent } from "./npx-bins.ts";
import { inspectInstall, readRequestedPackages } from "./npx-install-inspect.ts";
import { type NpxInvocation, parseNpxInvocation } from "./npx-invocation.ts";
import { installWithNpm } from "./npx-npm-install.ts";
import { npxCacheFile, readCachedResolution, storeResolution } from "./npx-resolver-cache.ts";
import { findShadowingInstall } from "./npx-shadowing.ts";

export interface ResolvedCommand {
  command: string;
  args: string[];
}

export interface NpxResolveOptions {
  agentDir: string;
  /** The server's environment (npm's cache and prefix settings are read from it). Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** The server's working directory (npx looks at the project there first). Default `process.cwd()`. */
  cwd?: string;
  /** Told why an npx command is left as it is. */
  onFallback?: (reason: string) => void;
}

type Resolution = SpawnForm | { fallback: string };

/** Resolutions in progress, so servers starting together with one command share the work. */
const inFlight = new Map<string, Promise<Resolution>>();

/**
 * `npx [-y] pkg[@spec] args…` (also `npm exec`, `npx.cmd`, `cmd /c npx …`, a path to npx) → the command that runs
 * the same program directly; `undefined`: run the original command unchanged.
 */
export async function resolveNpxCommand(
  command: string,
  args: readonly string[],
  options: NpxResolveOptions,
): Promise<ResolvedCommand | undefined> {
  const parsed = parseNpxInvocation(command, args);
  if (!parsed) return undefined;
  if ("unsupported" in parsed) return fallBack(options, parsed.unsupported);
  const { invocation } = parsed;
  const context: ResolveContext = {
    agentDir: options.agentDir,
    env: options.env ?? process.env,
    cwd: resolve(options.cwd ?? process.cwd()),
  };
  let resolution: Resolution;
  try {
    resolution = await sharedResolution(invocation, context);
  } catch (error) {
    resolution = { fallback: `resolution failed: ${error instanceof Error ? error.message : String(error)}` };
  }
  if ("fallback" in resolution) return fallBack(options, resolution.fallback);
  return { command: resolution.command, args: [...resolution.args, ...invocation.args] };
}

interface ResolveContext {
  agentDir: string;
  env: NodeJS.ProcessEnv;
  cwd: string;
}

function fallBack(options: NpxResolveOptions, reason: string): undefined {
  options.onFallback?.(reason);
  return undefined;
}

function sharedResolution(invocation: NpxInvocation, context: ResolveContext): Promise<Resolution> {
  const key = resolutionKey(invocation, context);
  let pending = inFlight.get(key);
  if (!pending) {
    pending = resolveProgram(key, invocation, context).finally(() => inFlight.delete(key));
    inFlight.set(key, pending);
  }
  return pending;
}

/** Everything that can change the answer, except the program's own arguments. */
function resolutionKey({ args: _programArgs, ...invocation }: NpxInvocation, { env, cwd }: ResolveContext): string {
  return JSON.stringify({ ...invocation, cwd, envCache: npmEnvConfig(env, "cache"), envPrefix: npmEnvConfig(env, "prefix") });
}

async function resolveProgram(key: string, invocation: NpxInvocation, context: ResolveContext): Promise<Resolution> {
  const cacheFile = npxCacheFile(context.agentDir);
  const cached = await readCachedResolution(cacheFile, key, Date.now());
  if (cached && (await isPresent(cached.binPath))) return { command: cached.command, args: cached.args };

  const resolution = await resolveFromInstall(invocation, context);
  if ("fallback" in resolution) return resolution;
  const { program, binPath, validUntil } = resolution;
  // Failing to remember only costs the shortcut next time.
  await storeResolution(cacheFile, key, { ...program, binPath, validUntil }, Date.now()).catch(() => undefined);
  return program;
}

async function resolveFromInstall(
  invocation: NpxInvocation,
  { env, cwd }: ResolveContext,
): Promise<{ program: SpawnForm; binPath: string; validUntil: number } | { fallback: string }> {
  const requested = await readRequestedPackages(invocation.packages, cwd);
  if (typeof requested === "string") return { fallback: requested };
  const { cache, globalPrefix } = await findNpmLocations({
    npmCommand: invocation.npmCommand,
    cwd,
    env,
    cacheOverride: invocation.cache,
  });
  const shadowedBy = await findShadowingInstall({
    cwd,
    globalPrefix,
    packageNames: requested.map((wanted) => wanted.name),
    commandWord: invocation.command === undefined ? invocation.packages[0] : undefined,
  });
  if (shadowedBy) return { fallback: `npx would not use its own install: ${shadowedBy}` };

  const installDir = npxInstallDir(cache, invocation.packages, cwd);
  let state = await inspectInstall(installDir, requested, invocation, { now: Date.now(), justRefreshed: false });
  if (state.kind === "needs-npm") {
    const outcome = await installWithNpm({ invocation, installDir, cache, cwd, env });
    if (!outcome.ok) return { fallback: outcome.reason };
    state = await inspectInstall(installDir, requested, invocation, { now: Date.now(), justRefreshed: true });
  }
  return state.kind === "ready" ? state : { fallback: state.reason };
}

/**
 * Starts `npx pkg …` servers without npx: the command becomes `node <bin> …` inside npm's own `_npx` install, picked
 * exactly as npx would pick it (same install directory, version rules, bin choice, `-p` commands). That removes the
 * ~90 MB npm parent process each npx server keeps alive and npx's registry round trip on every start.
 * Whenever the answer is not certain, the original command is kept, and the answer says why (npx/resolution.ts).
 */
import { resolve } from "node:path";
import { SharedByKey } from "./util/async-work.ts";
import { errorMessage } from "./util/guards.ts";
import { findNpmLocations, npmEnvConfig, npxInstallDir } from "./npx/npm-locations.ts";
import { type SpawnForm, isPresent } from "./npx/bins.ts";
import { inspectInstall, readRequestedPackages } from "./npx/install-inspect.ts";
import { type NpxInvocation, parseNpxInvocation } from "./npx/invocation.ts";
import { installWithNpm } from "./npx/npm-install.ts";
import { type NpxFallback, type NpxResolution, isNpxFallback, npxFallback } from "./npx/resolution.ts";
import { npxCacheFile, readCachedResolution, storeResolution } from "./npx/resolution-cache.ts";
import { findShadowingInstall } from "./npx/shadowing.ts";
import { ignored } from "./util/debug-log.ts";

/** What a resolution ends in, for the connection code that starts the resolved command. */
export type { NpxResolution } from "./npx/resolution.ts";
export { describeNpxResolution } from "./npx/resolution.ts";

export interface NpxResolveOptions {
  agentDir: string;
  /** The server's environment (npm's cache and prefix settings are read from it). Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** The server's working directory (npx looks at the project there first). Default `process.cwd()`. */
  cwd?: string;
}

/** The program npx would run, before the configured arguments, and the bin file it starts. */
type Program = SpawnForm & { binPath: string };

/** Resolutions in progress, so servers starting together with one command share the work. */
const inFlight = new SharedByKey<Program | NpxFallback>();

/**
 * `npx [-y] pkg[@spec] args…` (also `npm exec`, `npx.cmd`, `cmd /c npx …`, a path to npx) → the command that runs
 * the same program directly, or a fallback saying why the original command must run; `undefined`: not an npx command.
 */
export async function resolveNpxCommand(
  command: string,
  args: readonly string[],
  options: NpxResolveOptions,
): Promise<NpxResolution | undefined> {
  const invocation = parseNpxInvocation(command, args);
  if (invocation === undefined || isNpxFallback(invocation)) return invocation;
  const context: ResolveContext = {
    agentDir: options.agentDir,
    env: options.env ?? process.env,
    cwd: resolve(options.cwd ?? process.cwd()),
  };
  let program: Program | NpxFallback;
  try {
    program = await sharedResolution(invocation, context);
  } catch (error) {
    program = npxFallback(`resolution failed: ${errorMessage(error)}`);
  }
  if (isNpxFallback(program)) return program;
  return { kind: "resolved", command: program.command, args: [...program.args, ...invocation.args], binPath: program.binPath };
}

interface ResolveContext {
  agentDir: string;
  env: NodeJS.ProcessEnv;
  cwd: string;
}

function sharedResolution(invocation: NpxInvocation, context: ResolveContext): Promise<Program | NpxFallback> {
  const key = resolutionKey(invocation, context);
  return inFlight.run(key, () => resolveProgram(key, invocation, context));
}

/** Everything that can change the answer, except the program's own arguments. */
function resolutionKey({ args: _programArgs, ...invocation }: NpxInvocation, { env, cwd }: ResolveContext): string {
  return JSON.stringify({ ...invocation, cwd, envCache: npmEnvConfig(env, "cache"), envPrefix: npmEnvConfig(env, "prefix") });
}

async function resolveProgram(key: string, invocation: NpxInvocation, context: ResolveContext): Promise<Program | NpxFallback> {
  const cacheFile = npxCacheFile(context.agentDir);
  const cached = await readCachedResolution(cacheFile, key, Date.now());
  if (cached && (await isPresent(cached.binPath))) return { command: cached.command, args: cached.args, binPath: cached.binPath };

  const installed = await resolveFromInstall(invocation, context);
  if (isNpxFallback(installed)) return installed;
  const { program, binPath, validUntil } = installed;
  // Failing to remember only costs the shortcut next time.
  await storeResolution(cacheFile, key, { ...program, binPath, validUntil }, Date.now()).catch(ignored("storing an npx resolution"));
  return { ...program, binPath };
}

async function resolveFromInstall(
  invocation: NpxInvocation,
  { env, cwd }: ResolveContext,
): Promise<{ program: SpawnForm; binPath: string; validUntil: number } | NpxFallback> {
  const requested = await readRequestedPackages(invocation.packages, cwd);
  if (isNpxFallback(requested)) return requested;
  const { cache, globalPrefix } = await findNpmLocations({
    npmCommand: invocation.npmCommand,
    cwd,
    env,
    cacheOverride: invocation.cache,
  });
  const shadowed = await findShadowingInstall({
    cwd,
    globalPrefix,
    packageNames: requested.map((wanted) => wanted.name),
    commandWord: invocation.command === undefined ? invocation.packages[0] : undefined,
  });
  if (shadowed) return shadowed;

  const installDir = npxInstallDir(cache, invocation.packages, cwd);
  let state = await inspectInstall(installDir, requested, invocation, { now: Date.now(), justRefreshed: false });
  if (state.kind === "needs-npm") {
    const outcome = await installWithNpm({ invocation, installDir, cache, cwd, env });
    if (isNpxFallback(outcome)) return outcome;
    state = await inspectInstall(installDir, requested, invocation, { now: Date.now(), justRefreshed: true });
  }
  return state.kind === "needs-npm" ? npxFallback(state.reason) : state;
}

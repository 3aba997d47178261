/**
 * One `_npx/<hash>` install directory: does it hold what npx would run for the requested specs, current enough to
 * run without asking the registry, and which program is that.
 */
import { readFile, realpath, stat } from "node:fs/promises";
import { join } from "node:path";
import type npa from "npm-package-arg";
import semver from "semver";
import {
  type InstalledPackage,
  type SpawnForm,
  isPresent,
  linkedBinTarget,
  readInstalledPackage,
  selectBinName,
  spawnFormFor,
} from "./bins.ts";
import { errorMessage } from "../util/guards.ts";
import type { NpxInvocation } from "./invocation.ts";
import { type NpxFallback, npxFallback } from "./resolution.ts";
import { parseSpec } from "./npm-locations.ts";

/** How long an install of a tag, bare name or range is run without npm re-checking it with the registry. */
export const NPX_REVALIDATION_TTL_MS = 24 * 60 * 60 * 1000;

/** A spec from the command line, with the package name it installs under. */
export interface RequestedPackage {
  spec: string;
  parsed: npa.Result;
  name: string;
}

export type InstallState =
  | { kind: "ready"; program: SpawnForm; binPath: string; validUntil: number }
  /** npx would install or re-check with the registry first: npm has to run. */
  | { kind: "needs-npm"; reason: string }
  /** npx might run something we cannot pin down: leave it to npx. */
  | NpxFallback;

export interface InspectOptions {
  now: number;
  /** npm has just installed or re-checked these specs, so the install is current whatever the file dates say. */
  justRefreshed: boolean;
}

/** Parses the specs, or says why not: git, URL, tarball and alias specs are left to npx. */
export async function readRequestedPackages(specs: readonly string[], cwd: string): Promise<RequestedPackage[] | NpxFallback> {
  const requested: RequestedPackage[] = [];
  for (const spec of specs) {
    let parsed: npa.Result;
    try {
      parsed = parseSpec()(spec, cwd);
    } catch (error) {
      return npxFallback(`invalid package spec ${spec}: ${errorMessage(error)}`);
    }
    const name = parsed.type === "directory" ? await directoryPackageName(parsed) : registryName(parsed);
    if (!name) return npxFallback(`unsupported package spec ${spec} (${parsed.type})`);
    requested.push({ spec, parsed, name });
  }
  return requested;
}

function registryName(parsed: npa.Result): string | undefined {
  const registryKinds = ["version", "range", "tag"];
  return registryKinds.includes(parsed.type) && parsed.name ? parsed.name : undefined;
}

async function directoryPackageName(parsed: npa.Result): Promise<string | undefined> {
  try {
    const manifest = JSON.parse(await readFile(join(parsed.fetchSpec ?? "", "package.json"), "utf8"));
    return typeof manifest?.name === "string" ? manifest.name : undefined;
  } catch {
    return undefined;
  }
}

export async function inspectInstall(
  installDir: string,
  requested: readonly RequestedPackage[],
  invocation: Pick<NpxInvocation, "command" | "preferOffline">,
  options: InspectOptions,
): Promise<InstallState> {
  // npm is installing into it right now; let npm finish (it waits for its own lock).
  if (await isPresent(join(installDir, "concurrency.lock"))) return { kind: "needs-npm", reason: "an install is in progress" };
  const installed: InstalledPackage[] = [];
  for (const wanted of requested) {
    const pkg = await readInstalledPackage(installDir, wanted.name);
    if (!pkg) return { kind: "needs-npm", reason: `${wanted.spec} is not installed in ${installDir}` };
    if (!(await matchesSpec(pkg, wanted.parsed))) {
      return { kind: "needs-npm", reason: `${installDir} holds ${pkg.name}@${pkg.version}, not ${wanted.spec}` };
    }
    installed.push(pkg);
  }
  const validUntil = await currentUntil(installDir, requested, invocation.preferOffline, options);
  if (validUntil <= options.now) {
    return { kind: "needs-npm", reason: "npx would re-check the registry (install older than 24 h)" };
  }
  const binPath = await programPath(installDir, installed, invocation.command);
  if (typeof binPath !== "string") return binPath;
  return { kind: "ready", program: await spawnFormFor(binPath), binPath, validUntil };
}

/** What npx accepts from its install without reinstalling (libnpmexec `missingFromTree` on the npx tree). */
async function matchesSpec(pkg: InstalledPackage, parsed: npa.Result): Promise<boolean> {
  switch (parsed.type) {
    case "version":
      return pkg.version === semver.valid(parsed.fetchSpec, true);
    case "range":
      return parsed.rawSpec === "*" || semver.satisfies(pkg.version, parsed.fetchSpec ?? "");
    case "directory":
      // npm links a directory spec: it must still be that directory.
      return (await realpath(pkg.dir).catch(() => "")) === (await realpath(parsed.fetchSpec ?? "").catch(() => undefined));
    default:
      // A tag: only the registry knows what it points at; freshness decides.
      return true;
  }
}

/**
 * Until when the install may run without the registry. Exact versions, `pkg@*` and directories never change.
 * Tags, bare names and ranges: npx asks the registry on every start; we accept the install for 24 h after npm last
 * wrote it (`package-lock.json`, a lower bound of its last check) or after we had npm re-check it, and with
 * `--prefer-offline` as npx would.
 */
async function currentUntil(
  installDir: string,
  requested: readonly RequestedPackage[],
  preferOffline: boolean,
  { now, justRefreshed }: InspectOptions,
): Promise<number> {
  const renewed = now + NPX_REVALIDATION_TTL_MS;
  if (justRefreshed || preferOffline || !requested.some(followsRegistry)) return renewed;
  const written = await stat(join(installDir, "package-lock.json")).then(
    (s) => s.mtimeMs,
    () => 0,
  );
  return Math.min(renewed, written + NPX_REVALIDATION_TTL_MS);
}

function followsRegistry({ spec, parsed, name }: RequestedPackage): boolean {
  if (parsed.type === "tag") return true;
  return parsed.type === "range" && (parsed.rawSpec !== "*" || spec === name);
}

/** The file npx would start, or why we cannot tell. */
async function programPath(
  installDir: string,
  installed: readonly InstalledPackage[],
  command: string | undefined,
): Promise<string | NpxFallback> {
  if (command !== undefined) {
    const target = await linkedBinTarget(installDir, command, installed);
    // Not a bin of the install: npx would run it from PATH (e.g. `node`) with the install's bins on PATH.
    return target ?? npxFallback(`${command} is not a bin of the installed packages`);
  }
  const [pkg] = installed;
  const binName = selectBinName(pkg);
  if (!binName) return npxFallback(`${pkg.name} has no bin npx could choose`);
  const declared = await realpath(join(pkg.dir, ...pkg.bins[binName].split("/"))).catch(() => undefined);
  const linked = await linkedBinTarget(installDir, binName, [pkg]).catch(() => undefined);
  if (!declared || declared !== linked) {
    return npxFallback(`node_modules/.bin/${binName} does not lead to ${pkg.name}'s bin`);
  }
  return declared;
}

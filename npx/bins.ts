/**
 * The programs an npx install provides: a package's `bin` map as npm normalises it, the bin npx picks, where
 * `node_modules/.bin/<name>` leads, and how to start a bin without a shell.
 */
import { open, readFile, realpath, stat } from "node:fs/promises";
import { basename, extname, join, posix } from "node:path";
import { isJsonObject } from "../util/guards.ts";

/** A package as installed under `<installDir>/node_modules/<name>`. */
export interface InstalledPackage {
  dir: string;
  name: string;
  version: string;
  /** Bin name → path relative to `dir`, normalised like npm does. */
  bins: Record<string, string>;
}

export interface SpawnForm {
  command: string;
  args: string[];
}

const JS_EXTENSIONS = new Set([".js", ".mjs", ".cjs"]);
const SHEBANG_BYTES = 512;

/** Reads `<installDir>/node_modules/<name>/package.json`; undefined when the package is not (fully) there. */
export async function readInstalledPackage(installDir: string, name: string): Promise<InstalledPackage | undefined> {
  const dir = join(installDir, "node_modules", ...name.split("/"));
  let manifest: unknown;
  try {
    manifest = JSON.parse(await readFile(join(dir, "package.json"), "utf8"));
  } catch {
    return undefined;
  }
  if (!isJsonObject(manifest) || typeof manifest.name !== "string" || typeof manifest.version !== "string") return undefined;
  return { dir, name: manifest.name, version: manifest.version, bins: normalizeBins(manifest) };
}

/**
 * npm's bin normalisation (npm-normalize-package-bin): a string `bin` is named after the package, keys are reduced
 * to their last path segment (so a scoped name becomes its unscoped part), targets cannot climb out of the package.
 */
export function normalizeBins(manifest: Record<string, unknown>): Record<string, string> {
  const { bin, name } = manifest;
  let entries: [string, unknown][];
  if (typeof bin === "string") entries = typeof name === "string" ? [[name, bin]] : [];
  else if (Array.isArray(bin)) entries = bin.map((target) => [String(target), target]);
  else if (isJsonObject(bin)) entries = Object.entries(bin);
  else entries = [];

  const bins: Record<string, string> = {};
  for (const [key, target] of entries) {
    if (typeof target !== "string") continue;
    const cleanKey = posix.join("/", posix.basename(key.replace(/\\|:/g, "/"))).slice(1);
    const cleanTarget = posix.join("/", target.replace(/\\/g, "/")).slice(1);
    if (cleanKey && cleanTarget) bins[cleanKey] = cleanTarget;
  }
  return bins;
}

/**
 * The bin npx runs for a package given without `--package` (libnpmexec's get-bin-from-manifest): the only target
 * if all bins point at one file, else the bin named like the unscoped package, else none (npx fails too).
 */
export function selectBinName(pkg: Pick<InstalledPackage, "name" | "bins">): string | undefined {
  const names = Object.keys(pkg.bins);
  if (new Set(Object.values(pkg.bins)).size === 1) return names[0];
  const unscoped = pkg.name.replace(/^@[^/]+\//, "");
  return names.includes(unscoped) ? unscoped : undefined;
}

/**
 * The file npx would start for `binName` from this install's `node_modules/.bin`, or undefined if there is none.
 * POSIX: `.bin` entries are symlinks, so the link itself tells. Windows: they are cmd-shims, so the target is taken
 * from the `bin` maps of the packages that may have put it there, and only if they agree on one file.
 */
export async function linkedBinTarget(
  installDir: string,
  binName: string,
  candidates: readonly InstalledPackage[],
): Promise<string | undefined> {
  const link = join(installDir, "node_modules", ".bin", binName);
  if (!(await isPresent(link))) return undefined;
  if (process.platform !== "win32") return realpath(link);
  const targets = new Set(candidates.flatMap((pkg) => (pkg.bins[binName] ? [join(pkg.dir, ...pkg.bins[binName].split("/"))] : [])));
  return targets.size === 1 ? realpath([...targets][0]) : undefined;
}

/**
 * How to start a bin directly. A node shebang (or, without a shebang, a JS file) → `node [shebang flags] <bin>`,
 * so no `sh`/cmd-shim sits in between and `#!/usr/bin/env -S node --flag` keeps its flags; anything else (another
 * interpreter, a native binary) is started as the file itself.
 */
export async function spawnFormFor(binPath: string): Promise<SpawnForm> {
  const interpreter = parseShebang(await readHead(binPath));
  if (interpreter ? interpreter.isNode : JS_EXTENSIONS.has(extname(binPath).toLowerCase())) {
    return { command: "node", args: [...(interpreter?.flags ?? []), binPath] };
  }
  return { command: binPath, args: [] };
}

interface Interpreter {
  isNode: boolean;
  flags: string[];
}

export function parseShebang(head: string): Interpreter | undefined {
  if (!head.startsWith("#!")) return undefined;
  const tokens = head.slice(2).split(/\r?\n/, 1)[0].trim().split(/\s+/);
  let i = 0;
  if (basename(tokens[0] ?? "") === "env") {
    i = 1;
    // `env -S` splits the rest into words; other env options change the environment in ways we do not reproduce.
    while (tokens[i] === "-S" || tokens[i] === "--split-string") i++;
  }
  const program = tokens[i] ?? "";
  const isNode = /^node(js)?(\.exe)?$/i.test(basename(program));
  return { isNode, flags: isNode ? tokens.slice(i + 1) : [] };
}

async function readHead(file: string): Promise<string> {
  const handle = await open(file, "r");
  try {
    const buffer = Buffer.alloc(SHEBANG_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, SHEBANG_BYTES, 0);
    return buffer.subarray(0, bytesRead).toString("utf8");
  } finally {
    await handle.close();
  }
}

export async function isPresent(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

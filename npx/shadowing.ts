/**
 * Whether npx would run something other than its own `_npx` install. npm first looks at the project it is started
 * in (a matching `bin` in its package.json, `node_modules/.bin/<word>` up the directory tree, the package anywhere
 * in its `node_modules`) and, without `--package`, at global installs. We check for any sign of these, more broadly
 * than npm does (every ancestor directory, any installed version): when in doubt, npx itself decides.
 */
import { readFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { isPresent, normalizeBins } from "./bins.ts";
import { type NpxFallback, npxFallback } from "./resolution.ts";

export interface ShadowQuery {
  cwd: string;
  globalPrefix: string;
  packageNames: readonly string[];
  /** Without `--package`, npx first tries the word as typed as a command name (local, then global). */
  commandWord?: string;
}

/** A fallback naming what would take precedence over the `_npx` install, or undefined if nothing would. */
export async function findShadowingInstall(query: ShadowQuery): Promise<NpxFallback | undefined> {
  const shadowedBy = await findPrecedingInstall(query);
  return shadowedBy === undefined ? undefined : npxFallback(`npx would not use its own install: ${shadowedBy}`);
}

async function findPrecedingInstall(query: ShadowQuery): Promise<string | undefined> {
  for (const dir of ancestors(query.cwd)) {
    const found = await findInProject(dir, query);
    if (found) return found;
  }
  return query.commandWord === undefined ? undefined : findGlobalInstall(query, query.commandWord);
}

async function findInProject(dir: string, { packageNames, commandWord }: ShadowQuery): Promise<string | undefined> {
  const modules = join(dir, "node_modules");
  if (commandWord !== undefined) {
    if (await isPresent(join(modules, ".bin", commandWord))) return `${join(modules, ".bin", commandWord)} exists`;
    if (await declaresBin(join(dir, "package.json"), commandWord)) return `${dir}/package.json has a "${commandWord}" bin`;
  }
  const hiddenLockfile = await readFile(join(modules, ".package-lock.json"), "utf8").catch(() => "");
  for (const name of packageNames) {
    if (hiddenLockfile.includes(`node_modules/${name}"`) || (await isPresent(join(modules, ...name.split("/"))))) {
      return `${name} is installed in ${modules}`;
    }
  }
  return undefined;
}

async function findGlobalInstall(query: ShadowQuery, commandWord: string): Promise<string | undefined> {
  const windows = process.platform === "win32";
  const globalBin = windows ? query.globalPrefix : join(query.globalPrefix, "bin");
  const globalModules = windows ? join(query.globalPrefix, "node_modules") : join(query.globalPrefix, "lib", "node_modules");
  if (await isPresent(join(globalBin, commandWord))) return `${join(globalBin, commandWord)} is installed globally`;
  for (const name of query.packageNames) {
    if (await isPresent(join(globalModules, ...name.split("/")))) return `${name} is installed globally`;
  }
  return undefined;
}

async function declaresBin(packageJson: string, binName: string): Promise<boolean> {
  try {
    const manifest: unknown = JSON.parse(await readFile(packageJson, "utf8"));
    return typeof manifest === "object" && manifest !== null && Object.hasOwn(normalizeBins({ ...manifest }), binName);
  } catch {
    return false;
  }
}

function* ancestors(start: string): Generator<string> {
  let dir = resolve(start);
  for (;;) {
    yield dir;
    const parent = dirname(dir);
    if (parent === dir) return;
    dir = parent;
  }
}

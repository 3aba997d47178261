/**
 * MCP servers that installed Pi packages ship, as upstream 2.x reads them: a package's `package.json` says
 * `"pi": { "mcp": "./mcp.json" }` (or an array of such paths inside the package), each file holding `mcpServers` in
 * our format. Only packages listed in Pi's settings count (`packages` in `<agentDir>/settings.json`, and in the
 * project's `.pi/settings.json` once the project is trusted); `node_modules` is never scanned. A server is named
 * `<package>__<server>` (both in the letters a server name may use, `@acme/tools` → `acme_tools`), and every file of
 * the user's and the project's own is above it. A package's `settings` and `imports` are not used: they are the user's.
 *
 * Where a package lives on disk is Pi's own answer (`DefaultPackageManager.getInstalledPath`): it differs by host
 * (0.73 installs npm packages globally, 0.87 and 1.x under the agent dir) and by source (npm, git, a local path).
 */
import * as piHost from "@mariozechner/pi-coding-agent";
import { readFileSync, realpathSync, statSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import { readConfigFile } from "./files.ts";
import { type ConfigLayer, ownEntryOptions, parseServerEntry } from "./entry.ts";
import { configProblem } from "./problems.ts";
import type { InterpolationContext } from "./interpolation.ts";
import { describeValue, errorMessage, isJsonObject } from "../util/guards.ts";
import type { ConfigProblem, ProjectConfig } from "../types.ts";

type Scope = "user" | "project";

/** A package as Pi's settings list it. */
interface ListedPackage {
  source: string;
  scope: Scope;
  settingsFile: string;
}

/** What of Pi's package manager this module uses (the host's class, constructed with in-memory settings). */
interface PackageLocator {
  getInstalledPath(source: string, scope: Scope): string | undefined;
}

/** Pi 0.87 and 1.x take options (a project's package storage is refused unless it is trusted); 0.73 takes none. */
const inMemorySettings = piHost.SettingsManager.inMemory as (
  settings: Record<string, unknown>,
  options: { projectTrusted: boolean },
) => piHost.SettingsManager;

/** Per process: the npm global root (Pi 0.73 asks `npm root -g` for it) is looked up once, not at every config load. */
const locators = new Map<string, PackageLocator>();

export interface PackageLoadOptions {
  agentDir: string;
  context: InterpolationContext;
  project: ProjectConfig;
  problems: ConfigProblem[];
}

/**
 * The servers of the listed packages, a layer per config file: the project's packages first (Pi lets a project's
 * entry win over the user's), then the user's. An untrusted project's packages are only noted in `project`.
 */
export function piPackageLayers(options: PackageLoadOptions): ConfigLayer[] {
  const { agentDir, context, project, problems } = options;
  const listed = [
    ...listedPackages(join(context.cwd, ".pi", "settings.json"), "project", problems),
    ...listedPackages(join(agentDir, "settings.json"), "user", problems),
  ];
  if (listed.length === 0) return [];
  const locator = packageLocator(agentDir, context.cwd, npmCommand(join(agentDir, "settings.json")));
  const seen = new Set<string>();
  return listed.flatMap((pkg) => {
    const root = installedRoot(locator, pkg, problems);
    if (!root || seen.has(root)) return [];
    seen.add(root);
    const layers = packageLayers(pkg, root, options);
    if (pkg.scope === "user" || project.trusted) return layers;
    for (const layer of layers) {
      project.files.push(layer.source.path);
      project.servers.push(...layer.entries.map((entry) => entry.name));
    }
    return [];
  });
}

/** `packages` of one settings file: strings, or objects with a `source` (filters narrow Pi's resources, not ours). */
function listedPackages(settingsFile: string, scope: Scope, problems: ConfigProblem[]): ListedPackage[] {
  const read = readConfigFile(settingsFile, "json");
  if (read.status !== "ok") return []; // Pi reports its own settings file's problems
  const packages = read.data.packages;
  if (!Array.isArray(packages)) return [];
  return packages.flatMap((item, index) => {
    const source = typeof item === "string" ? item : isJsonObject(item) && typeof item.source === "string" ? item.source : undefined;
    if (source) return [{ source, scope, settingsFile }];
    problems.push(
      configProblem(
        "warning",
        { file: settingsFile, field: `packages[${index}]` },
        `not a package source (got ${describeValue(item)}); its MCP servers are not loaded`,
      ),
    );
    return [];
  });
}

function npmCommand(settingsFile: string): unknown {
  const read = readConfigFile(settingsFile, "json");
  return read.status === "ok" ? read.data.npmCommand : undefined;
}

function packageLocator(agentDir: string, cwd: string, command: unknown): PackageLocator {
  const key = JSON.stringify([agentDir, cwd, command]);
  let locator = locators.get(key);
  if (!locator) {
    // Only locations are asked of it, for the project's packages too: whether they count is decided here, by trust.
    const settings = Array.isArray(command) ? { npmCommand: command } : {};
    locator = new piHost.DefaultPackageManager({ cwd, agentDir, settingsManager: inMemorySettings(settings, { projectTrusted: true }) });
    locators.set(key, locator);
  }
  return locator;
}

function installedRoot(locator: PackageLocator, pkg: ListedPackage, problems: ConfigProblem[]): string | undefined {
  try {
    const path = locator.getInstalledPath(pkg.source, pkg.scope);
    return path && realpathSync(path);
  } catch (error) {
    problems.push(configProblem("warning", { file: pkg.settingsFile }, `cannot locate package ${pkg.source}: ${errorMessage(error)}`));
    return undefined;
  }
}

function packageLayers(pkg: ListedPackage, root: string, options: PackageLoadOptions): ConfigLayer[] {
  const { problems } = options;
  const manifestFile = join(root, "package.json");
  let manifest: unknown;
  try {
    manifest = JSON.parse(readFileSync(manifestFile, "utf8"));
  } catch {
    return []; // not a package with a manifest (a single file, a folder of resources): nothing declares servers
  }
  if (!isJsonObject(manifest) || !isJsonObject(manifest.pi) || manifest.pi.mcp === undefined) return [];
  const declared = manifest.pi.mcp;
  const paths = typeof declared === "string" ? [declared] : Array.isArray(declared) ? declared : undefined;
  if (!paths?.every((path): path is string => typeof path === "string")) {
    problems.push(
      configProblem(
        "warning",
        { file: manifestFile, field: "pi.mcp" },
        `must be a path or an array of paths (got ${describeValue(declared)}); ignored`,
      ),
    );
    return [];
  }
  const prefix = nameWord(typeof manifest.name === "string" ? manifest.name : "", "package");
  return paths.flatMap((path) => {
    const file = containedFile(root, path);
    if (!file) {
      problems.push(
        configProblem(
          "warning",
          { file: manifestFile, field: "pi.mcp" },
          `${JSON.stringify(path)} is not a file inside the package; ignored`,
        ),
      );
      return [];
    }
    const layer = packageFileLayer(file, prefix, pkg, options);
    return layer ? [layer] : [];
  });
}

function packageFileLayer(
  file: string,
  prefix: string,
  pkg: ListedPackage,
  { context, problems }: PackageLoadOptions,
): ConfigLayer | undefined {
  const read = readConfigFile(file, "json");
  if (read.status === "absent") return undefined;
  if (read.status === "error") {
    problems.push(read.problem);
    return undefined;
  }
  const servers = read.data.mcpServers;
  if (!isJsonObject(servers)) {
    problems.push(
      configProblem(
        "warning",
        { file, field: "mcpServers" },
        `must be an object of servers (got ${describeValue(servers)}); the package's servers are not loaded`,
      ),
    );
    return undefined;
  }
  for (const key of ["settings", "imports"].filter((key) => read.data[key] !== undefined)) {
    problems.push(
      configProblem("warning", { file, field: key }, "ignored: a package brings servers only (settings and imports are yours to set)"),
    );
  }
  // A package the user installed runs code of its own already: its `!command` values run like the user's.
  const entryOptions = ownEntryOptions(file, context, true);
  const entries = Object.entries(servers).map(([name, raw]) => {
    const prefixed = `${prefix}__${nameWord(name, "server")}`;
    return { name: prefixed, parsed: parseServerEntry(prefixed, raw, entryOptions, problems) };
  });
  return { source: { kind: "pi-package", path: file, label: pkg.source }, entries };
}

/** A path of the package, resolved (symlinks too) and inside it; undefined when it leaves the package or is no file. */
function containedFile(root: string, path: string): string | undefined {
  try {
    const real = realpathSync(resolve(root, path));
    const inside = relative(root, real);
    return inside !== "" && !inside.startsWith("..") && !isAbsolute(inside) && statSync(real).isFile() ? real : undefined;
  } catch {
    return undefined;
  }
}

/** Upstream's name rule: runs of other characters become `_`, none at either end (`@acme/tools` → `acme_tools`). */
function nameWord(text: string, fallback: string): string {
  return text.replace(/[^A-Za-z0-9_-]+/g, "_").replace(/^[_-]+|[_-]+$/g, "") || fallback;
}

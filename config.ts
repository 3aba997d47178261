/**
 * Loading the adapter's configuration: our own files (user, shared project, Pi project, and the host-neutral
 * `~/.config/mcp/mcp.json` that upstream 2.x reads too), the other hosts' files named in `imports`, the servers of
 * installed Pi packages (`pi.mcp`) and of Claude Code plugin folders (`claudePlugins`), and those other extensions
 * register (Pi 1.x's `pi.registerMcpServer`, upstream's runtime event), merged by precedence in that order.
 * Synchronous (the extension loads it at module scope) and it never throws: a broken file or server becomes a
 * `ConfigProblem`, and everything else still loads.
 */
import os from "node:os";
import { join } from "node:path";
import { readConfigFile } from "./config/files.ts";
import { type ConfigLayer, type EntryOptions, ownEntryOptions, parseServerEntry } from "./config/entry.ts";
import { parseSettings } from "./config/settings.ts";
import { hostConfigFiles, importHostServers } from "./config/imports.ts";
import { type ClaudePluginRef, loadClaudePlugins, parseClaudePlugins } from "./config/claude-plugins.ts";
import { piPackageLayers } from "./config/pi-packages.ts";
import { RUNTIME_SOURCE_PATH, type RuntimeServer } from "./config/runtime-servers.ts";
import { configProblem } from "./config/problems.ts";
import { describeValue, errorMessage, isJsonObject } from "./util/guards.ts";
import type { InterpolationContext } from "./config/interpolation.ts";
import { expandHome, pathModule } from "./util/paths.ts";
import {
  IMPORT_KINDS,
  type ConfigProblem,
  type ConfigSource,
  type ConfigSourceKind,
  type ImportKind,
  type LoadedConfig,
  type McpSettings,
  type ProjectConfig,
  type ServerDefinition,
  type ServerEntry,
  type SkippedServer,
} from "./types.ts";

/** The parts of the config area that `/mcp enable|disable|add|remove` uses to edit a config file. */
export { describeSource, describeTarget, hideConfigSecretsInDebugLog } from "./config/display.ts";
export { ownEntryOptions, parseServerEntry } from "./config/entry.ts";
export { removeServerEntry, writeImports, writeServerEnabled, writeServerEntry } from "./config/writer.ts";
/** Upstream's runtime registration event (pi-mcp-adapter.ts listens, init.ts keeps the registrations). */
export {
  RUNTIME_REGISTER_EVENT,
  type RuntimeRegistrationHooks,
  RuntimeRegistrations,
  type RuntimeServer,
  SERVER_NAME,
} from "./config/runtime-servers.ts";

export interface LoadConfigOptions {
  /** Pi's agent dir (`getAgentDir()`: `$PI_CODING_AGENT_DIR` or `~/.pi/agent`). */
  agentDir: string;
  /** The project directory. */
  cwd: string;
  /** `--mcp-config <path>`: replaces `<agentDir>/mcp.json`. */
  configPath?: string;
  /** Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Default `%USERPROFILE%` on Windows, else `os.homedir()`. */
  homeDir?: string;
  /** Default `process.platform`. */
  platform?: NodeJS.Platform;
  /**
   * The project's files may configure servers (the session's trust decision, host/project-trust.ts). Default false:
   * they are read only to note what they define (`LoadedConfig.project`); their servers, settings and imports are left
   * out, and their `!command` values never run.
   */
  projectTrusted?: boolean;
  /** Servers other extensions registered with Pi (`pi.registerMcpServer`, Pi 1.x): below every file. */
  registered?: readonly ExtensionServer[];
  /** Servers other extensions registered for this session through upstream's event: below everything else. */
  runtime?: readonly RuntimeServer[];
}

/** A server another extension registered with Pi: its entry is in the `mcpServers` shape. */
export interface ExtensionServer {
  name: string;
  config: unknown;
  /** The extension that registered it: the server's source. */
  extensionPath: string;
}

type OwnFileKind = Extract<ConfigSourceKind, "project" | "project-shared" | "user" | "user-shared">;

/** Files in our format, highest precedence first. */
const OWN_FILES: ReadonlyArray<{ kind: OwnFileKind; label: string }> = [
  { kind: "project", label: ".pi/mcp.json" },
  { kind: "project-shared", label: ".mcp.json" },
  { kind: "user", label: "mcp.json" },
  { kind: "user-shared", label: "~/.config/mcp/mcp.json" },
];

const OWN_TOP_LEVEL_KEYS = new Set(["mcpServers", "mcp-servers", "imports", "settings", "claudePlugins", "$schema"]);
const PROJECT_KINDS: ReadonlySet<ConfigSourceKind> = new Set(["project", "project-shared"]);

interface OwnFile {
  layer: ConfigLayer;
  settings: McpSettings;
  imports: ImportKind[];
  /** Undefined when the file has no `claudePlugins` (a lower file's then apply). */
  claudePlugins?: ClaudePluginRef[];
}

export function loadConfig(options: LoadConfigOptions): LoadedConfig {
  try {
    return loadConfigOrThrow(options);
  } catch (error) {
    // Only a bug gets here; a throw out of the extension factory would make Pi exit, so it is reported instead.
    const message = `unexpected error while loading the MCP configuration: ${errorMessage(error)}`;
    const userFile = options.configPath ?? join(options.agentDir, "mcp.json");
    return { servers: [], settings: {}, problems: [{ level: "error", file: userFile, message }], userFile };
  }
}

function loadConfigOrThrow(options: LoadConfigOptions): LoadedConfig {
  const context = interpolationContext(options);
  const problems: ConfigProblem[] = [];
  const userFile = ownFilePath("user", options, context);
  const project: ProjectConfig = { trusted: options.projectTrusted === true, files: [], servers: [] };
  const ownFiles = OWN_FILES.flatMap(({ kind }) => {
    const file = ownFilePath(kind, options, context);
    // `--mcp-config ~/.config/mcp/mcp.json` makes the shared file the user file: it is read once.
    if (kind === "user-shared" && file === userFile) return [];
    const untrusted = PROJECT_KINDS.has(kind) && !project.trusted;
    const own = untrusted
      ? readUntrustedFile(kind, file, context, project)
      : readOwnFile(kind, file, context, problems, kind === "user" && options.configPath !== undefined);
    if (own && PROJECT_KINDS.has(kind) && !untrusted) noteTrustedFile(own, project, problems);
    return own ? [own] : [];
  });

  const imports = [...new Set([...ownFiles].reverse().flatMap((own) => own.imports))];
  // The highest file that lists plugins decides the list (upstream's rule: a higher `claudePlugins` replaces a lower).
  const plugins = loadClaudePlugins(ownFiles.find((own) => own.claudePlugins)?.claudePlugins ?? [], context, problems);
  const layers = [
    ...ownFiles.map((own) => own.layer),
    ...imports.flatMap((kind) => importHostServers(kind, context, problems, project)),
    ...piPackageLayers({ agentDir: options.agentDir, context, project, problems }),
    ...plugins.layers,
    ...registeredLayers(options.registered ?? [], context, problems),
  ];
  const runtime = runtimeLayer(options.runtime ?? [], layers, context, problems);
  const skipped: SkippedServer[] = [];
  const servers = resolveServers(runtime ? [...layers, runtime] : layers, problems, skipped);
  // Lowest precedence first, so a project file's setting replaces the user's.
  const settings = Object.assign({}, ...[...ownFiles].reverse().map((own) => own.settings)) as McpSettings;
  return {
    servers,
    settings,
    problems,
    userFile,
    ...(skipped.length > 0 ? { skipped } : {}),
    ...(project.files.length > 0 ? { project } : {}),
    ...(plugins.skills.length > 0 ? { pluginSkills: plugins.skills } : {}),
    ...(imports.length > 0 ? { imports } : {}),
  };
}

/**
 * The files of a load that people edit: our own four (a project's, trusted or not: trusting it is decided on what it
 * holds) and, for `imports`, those hosts' files. A session follows a change to any of them.
 */
export function editedConfigFiles(options: LoadConfigOptions, imports: readonly ImportKind[] = []): string[] {
  const context = interpolationContext(options);
  const own = OWN_FILES.map(({ kind }) => ownFilePath(kind, options, context));
  return [...new Set([...own, ...imports.flatMap((kind) => hostConfigFiles(kind, context))])];
}

/** Another tool's config on this machine whose servers the config does not import yet. */
export interface ImportableHost {
  kind: ImportKind;
  servers: string[];
}

/** What `imports` could add: the hosts not imported yet that define servers here (a project's files once trusted). */
export function findImportableHosts(options: LoadConfigOptions, imported: readonly ImportKind[] = []): ImportableHost[] {
  const context = interpolationContext(options);
  const project: ProjectConfig = { trusted: options.projectTrusted === true, files: [], servers: [] };
  return IMPORT_KINDS.filter((kind) => !imported.includes(kind)).flatMap((kind) => {
    const layers = importHostServers(kind, context, [], project);
    const servers = layers.flatMap((layer) => layer.entries.filter((entry) => entry.parsed.kind === "server").map((entry) => entry.name));
    return servers.length > 0 ? [{ kind, servers: [...new Set(servers)] }] : [];
  });
}

/**
 * An untrusted project's own file: only entries that switch a server off are used (a project may always turn a
 * server off, as `/mcp disable --project` writes); whatever else it configures is noted and waits for trust, and its
 * problems are not reported (the file is not in use).
 */
function readUntrustedFile(
  kind: ConfigSourceKind,
  file: string,
  context: InterpolationContext,
  project: ProjectConfig,
): OwnFile | undefined {
  const read = readConfigFile(file, "json");
  if (read.status === "absent") return undefined;
  // A broken file may configure anything: once the project is trusted, its error is reported.
  if (read.status === "error") project.files.push(file);
  if (read.status !== "ok") return undefined;
  const ignored: ConfigProblem[] = [];
  const options: EntryOptions = {
    file,
    context,
    interpolate: false,
    allowOverride: true,
    reportUnknownFields: false,
    defaultsSyntax: true,
    commands: "refused",
  };
  const entries = Object.entries(serverTable(read.data, file, ignored)).map(([name, raw]) => ({
    name,
    parsed: parseServerEntry(name, raw, options, ignored),
  }));
  const disabling = entries.filter(({ parsed }) => parsed.kind === "override" && onlyDisables(parsed.entry));
  const held = entries.filter((entry) => !disabling.includes(entry)).map((entry) => entry.name);
  const configures = ["settings", "imports", "claudePlugins"].some((key) => read.data[key] !== undefined);
  if (held.length > 0 || configures) {
    project.files.push(file);
    project.servers.push(...held);
  }
  return disabling.length > 0 ? { layer: { source: { kind, path: file }, entries: disabling }, settings: {}, imports: [] } : undefined;
}

function onlyDisables(entry: ServerEntry): boolean {
  const set = Object.entries(entry).filter(([, value]) => value !== undefined);
  return set.length === 1 && set[0]![0] === "enabled" && set[0]![1] === false;
}

/** A trusted project's own file is noted like an untrusted one; it may not trust projects (a project cannot trust itself). */
function noteTrustedFile(own: OwnFile, project: ProjectConfig, problems: ConfigProblem[]): void {
  const file = own.layer.source.path;
  const servers = own.layer.entries.map((entry) => entry.name);
  if (servers.length > 0 || Object.keys(own.settings).length > 0 || own.imports.length > 0 || own.claudePlugins) project.files.push(file);
  project.servers.push(...servers);
  if (own.settings.trustProjectServers === undefined) return;
  delete own.settings.trustProjectServers;
  problems.push(
    configProblem(
      "warning",
      { file, field: "settings.trustProjectServers" },
      "is read only from your user files (a project cannot trust itself); ignored",
    ),
  );
}

/** Servers of other extensions, a layer per extension, validated as entries of our files are (problems name the extension). */
function registeredLayers(registered: readonly ExtensionServer[], context: InterpolationContext, problems: ConfigProblem[]): ConfigLayer[] {
  const byExtension = new Map<string, ExtensionServer[]>();
  for (const server of registered) byExtension.set(server.extensionPath, [...(byExtension.get(server.extensionPath) ?? []), server]);
  return [...byExtension].map(([file, servers]) => {
    // Pi trust-gates the extensions themselves, so what they register is the user's own: its `!command` values run.
    const options = ownEntryOptions(file, context);
    const entries = servers.map(({ name, config }) => ({ name, parsed: parseServerEntry(name, config, options, problems) }));
    return { source: { kind: "extension", path: file }, entries };
  });
}

/**
 * Servers registered through upstream's event, as the lowest layer: a name that the config defines is the
 * configured server's (the registration was refused when it came; the file may have gained it since).
 */
function runtimeLayer(
  runtime: readonly RuntimeServer[],
  layers: readonly ConfigLayer[],
  context: InterpolationContext,
  problems: ConfigProblem[],
): ConfigLayer | undefined {
  if (runtime.length === 0) return undefined;
  const defined = new Set(
    layers.flatMap((layer) => layer.entries.filter((entry) => entry.parsed.kind !== "override").map((entry) => entry.name)),
  );
  const options = ownEntryOptions(RUNTIME_SOURCE_PATH, context);
  const entries = runtime.flatMap(({ name, config }) => {
    if (!defined.has(name)) return [{ name, parsed: parseServerEntry(name, config, options, problems) }];
    const text = "registered at runtime by another extension, but a configured server has this name: the configured one is used";
    problems.push(configProblem("warning", { file: RUNTIME_SOURCE_PATH, server: name }, text));
    return [];
  });
  return { source: { kind: "runtime", path: RUNTIME_SOURCE_PATH }, entries };
}

export function interpolationContext(options: LoadConfigOptions): InterpolationContext {
  const env = options.env ?? process.env;
  const platform = options.platform ?? process.platform;
  const homeDir = options.homeDir ?? ((platform === "win32" && env.USERPROFILE) || os.homedir());
  return { env, platform, homeDir, cwd: pathModule(platform).resolve(options.cwd) };
}

function ownFilePath(kind: OwnFileKind, options: LoadConfigOptions, context: InterpolationContext): string {
  const { join, resolve } = pathModule(context.platform);
  switch (kind) {
    case "project":
      return join(context.cwd, ".pi", "mcp.json");
    case "project-shared":
      return join(context.cwd, ".mcp.json");
    case "user-shared":
      return join(context.homeDir, ".config", "mcp", "mcp.json");
    default:
      return options.configPath !== undefined
        ? resolve(context.cwd, expandHome(options.configPath, context.homeDir, context.platform))
        : join(options.agentDir, "mcp.json");
  }
}

/**
 * `given`: the file was named with --mcp-config, so its absence is worth a warning. Its `!command` values may run: it
 * is the user's, or a project's the user trusts (an untrusted project's files go to readUntrustedFile instead).
 */
function readOwnFile(
  kind: ConfigSourceKind,
  file: string,
  context: InterpolationContext,
  problems: ConfigProblem[],
  given: boolean,
): OwnFile | undefined {
  const read = readConfigFile(file, "json");
  if (read.status === "absent") {
    if (given) problems.push(configProblem("warning", { file }, "the file given with --mcp-config does not exist"));
    return undefined;
  }
  if (read.status === "error") {
    problems.push(read.problem);
    return undefined;
  }
  const { data } = read;
  for (const key of Object.keys(data)) {
    if (!OWN_TOP_LEVEL_KEYS.has(key)) problems.push(configProblem("warning", { file, field: key }, "unknown top-level field, ignored"));
  }
  const source: ConfigSource = { kind, path: file };
  const options: EntryOptions = {
    file,
    context,
    interpolate: true,
    allowOverride: true,
    reportUnknownFields: true,
    defaultsSyntax: true,
    commands: "run",
  };
  const entries = Object.entries(serverTable(data, file, problems)).map(([name, raw]) => ({
    name,
    parsed: parseServerEntry(name, raw, options, problems),
  }));
  const claudePlugins = parseClaudePlugins(data.claudePlugins, file, context, problems);
  return {
    layer: { source, entries },
    settings: parseSettings(data.settings, file, context, problems),
    imports: parseImports(data.imports, file, problems),
    ...(claudePlugins ? { claudePlugins } : {}),
  };
}

function serverTable(data: Record<string, unknown>, file: string, problems: ConfigProblem[]): Record<string, unknown> {
  if (data.mcpServers !== undefined && data["mcp-servers"] !== undefined) {
    problems.push(configProblem("warning", { file, field: "mcp-servers" }, `ignored: the file also has "mcpServers"`));
  }
  const key = data.mcpServers !== undefined || data["mcp-servers"] === undefined ? "mcpServers" : "mcp-servers";
  const table = data[key];
  if (table === undefined) return {};
  if (isJsonObject(table)) return table;
  problems.push(
    configProblem("error", { file, field: key }, `must be an object mapping server names to servers (got ${describeValue(table)})`),
  );
  return {};
}

function parseImports(raw: unknown, file: string, problems: ConfigProblem[]): ImportKind[] {
  if (raw === undefined) return [];
  const known = IMPORT_KINDS.map((kind) => `"${kind}"`).join(", ");
  if (!Array.isArray(raw)) {
    problems.push(
      configProblem("error", { file, field: "imports" }, `must be an array of host names (${known}) (got ${describeValue(raw)})`),
    );
    return [];
  }
  return raw.flatMap((item, index) => {
    if (typeof item === "string" && (IMPORT_KINDS as readonly string[]).includes(item)) return [item as ImportKind];
    const got = typeof item === "string" ? JSON.stringify(item) : describeValue(item);
    problems.push(configProblem("warning", { file, field: `imports[${index}]` }, `unknown host ${got}, ignored (known: ${known})`));
    return [];
  });
}

/**
 * Layers come highest precedence first. The first layer that defines a name with a command or url settles it;
 * behaviour-only entries above it (overrides) are applied over it, the highest last. A name that is invalid in a
 * layer is settled too: a lower file must not quietly stand in for a broken or half-applied definition. Names that
 * settle without a server (invalid, a variable not set, an override of nothing) go to `skipped`, with their file.
 */
function resolveServers(layers: readonly ConfigLayer[], problems: ConfigProblem[], skipped: SkippedServer[]): ServerDefinition[] {
  const settled = new Set<string>();
  const overrides = new Map<string, Array<{ source: ConfigSource; entry: ServerEntry }>>();
  const servers: ServerDefinition[] = [];
  for (const layer of layers) {
    for (const { name, parsed } of layer.entries) {
      if (settled.has(name)) continue;
      if (parsed.kind === "override") {
        overrides.set(name, [...(overrides.get(name) ?? []), { source: layer.source, entry: parsed.entry }]);
        continue;
      }
      settled.add(name);
      if (parsed.kind === "invalid") {
        skipped.push({ name, source: layer.source });
        continue;
      }
      const above = overrides.get(name) ?? [];
      const applied = above.reduceRight((entry, override) => ({ ...entry, ...override.entry }), parsed.entry);
      // A disabled server never starts, so variables it cannot resolve do not matter (yet).
      if (applied.enabled && parsed.unresolved.length > 0) {
        problems.push(...parsed.unresolved);
        skipped.push({ name, source: layer.source });
        continue;
      }
      // The highest override that sets `enabled` decides it: that file, not the definition's, is the one to edit.
      const disabledIn = applied.enabled ? undefined : above.find((override) => override.entry.enabled !== undefined)?.source;
      servers.push({ ...applied, name, source: layer.source, ...(disabledIn ? { disabledIn } : {}) });
    }
  }
  for (const [name, pending] of overrides) {
    if (settled.has(name)) continue;
    skipped.push({ name, source: pending[0]!.source });
    for (const { source } of pending) {
      problems.push(
        configProblem(
          "error",
          { file: source.path, server: name },
          "changes a server (no command or url) that no lower-precedence file defines",
        ),
      );
    }
  }
  return servers;
}

/** Two loads of the config that came out the same (a session can then keep what was built from the first). */
export function sameConfig(a: LoadedConfig, b: LoadedConfig): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

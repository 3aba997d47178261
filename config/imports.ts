/**
 * Importing servers from the config files of other MCP hosts (Cursor, Claude Code, Claude Desktop, Codex, Windsurf,
 * VS Code): where each keeps them on Linux, macOS and Windows, and how its fields map to ours.
 */
import { existsSync } from "node:fs";
import { readConfigFile, type ConfigFormat } from "./files.ts";
import type { ConfigLayer, EntryOptions } from "./entry.ts";
import { parseServerEntry } from "./entry.ts";
import { configProblem, type ProblemLocation } from "./problems.ts";
import { describeValue, isJsonObject } from "../util/guards.ts";
import { lookupEnv, type InterpolationContext } from "./interpolation.ts";
import { expandHome, pathModule } from "../util/paths.ts";
import type { ConfigProblem, ImportKind, ProjectConfig } from "../types.ts";

/**
 * Where a host keeps its servers, highest precedence first (a project file before the user file).
 * Codex's project file counts only for a project the user marked trusted in the user file.
 */
export function hostConfigFiles(kind: ImportKind, context: InterpolationContext): string[] {
  const { join } = pathModule(context.platform);
  const home = context.homeDir;
  switch (kind) {
    case "cursor":
      return [join(context.cwd, ".cursor", "mcp.json"), join(home, ".cursor", "mcp.json")];
    case "claude-code": {
      const configDir = envPath(context, "CLAUDE_CONFIG_DIR");
      return [join(configDir ?? home, ".claude.json")];
    }
    case "claude-desktop":
      return [join(applicationSupportDir(context), "Claude", "claude_desktop_config.json")];
    case "codex": {
      const codexHome = envPath(context, "CODEX_HOME") ?? join(home, ".codex");
      return [join(context.cwd, ".codex", "config.toml"), join(codexHome, "config.toml")];
    }
    case "windsurf":
      return [join(home, ".codeium", "windsurf", "mcp_config.json")];
    case "vscode": {
      // Before its mcp.json (VS Code 1.102), VS Code kept servers in settings.json under "mcp"; each scope's mcp.json wins.
      const userDir = join(applicationSupportDir(context), "Code", "User");
      const projectDir = join(context.cwd, ".vscode");
      return [join(projectDir, "mcp.json"), join(projectDir, VSCODE_SETTINGS), join(userDir, "mcp.json"), join(userDir, VSCODE_SETTINGS)];
    }
  }
}

const VSCODE_SETTINGS = "settings.json";

/** How many of `hostConfigFiles` (the first ones) are in the project directory: a repository can write them. */
const PROJECT_FILE_COUNT: Readonly<Record<ImportKind, number>> = {
  cursor: 1,
  "claude-code": 0,
  "claude-desktop": 0,
  codex: 1,
  windsurf: 0,
  vscode: 2,
};

/**
 * Whether a host file is the project's. Claude Code's "local" scope is not: it lives in the user's `~/.claude.json`,
 * written by the user's own `claude mcp add`.
 */
function isProjectFile(kind: ImportKind, file: string, context: InterpolationContext): boolean {
  return hostConfigFiles(kind, context).slice(0, PROJECT_FILE_COUNT[kind]).includes(file);
}

/**
 * A project file that defines servers is noted in `project`; its servers are taken only when the project is trusted
 * (else its problems are not reported either: the file is not in use).
 */
function admitProjectFile(
  kind: ImportKind,
  file: string,
  servers: RawServers,
  context: InterpolationContext,
  project: ProjectConfig,
): boolean {
  if (!isProjectFile(kind, file, context)) return true;
  if (servers.length > 0) {
    project.files.push(file);
    project.servers.push(...servers.map(([name]) => name));
  }
  return project.trusted;
}

/** Where desktop apps keep their settings: `%APPDATA%`, `~/Library/Application Support`, `$XDG_CONFIG_HOME`. */
function applicationSupportDir(context: InterpolationContext): string {
  const { join } = pathModule(context.platform);
  if (context.platform === "win32") return envPath(context, "APPDATA") ?? join(context.homeDir, "AppData", "Roaming");
  if (context.platform === "darwin") return join(context.homeDir, "Library", "Application Support");
  return envPath(context, "XDG_CONFIG_HOME") ?? join(context.homeDir, ".config");
}

function envPath(context: InterpolationContext, name: string): string | undefined {
  const value = lookupEnv(context.env, name, context.platform);
  return value ? expandHome(value, context.homeDir, context.platform) : undefined;
}

/**
 * The servers a host defines for this project, as layers, highest precedence first. Its files in the project
 * directory count only when the project is trusted (`project.trusted`); they are noted in `project` either way.
 */
export function importHostServers(
  kind: ImportKind,
  context: InterpolationContext,
  problems: ConfigProblem[],
  project: ProjectConfig,
): ConfigLayer[] {
  return kind === "codex" ? importCodex(context, problems, project) : importJsonHost(kind, context, problems, project);
}

type RawServers = Array<[string, unknown]>;
interface MappedEntry {
  raw: unknown;
  hostFieldNames?: Record<string, string>;
}

function hostEntryOptions(file: string, context: InterpolationContext, interpolate: boolean, defaultsSyntax = false): EntryOptions {
  // Other tools' files never meant a command by "!…": Pi runs nothing they hold.
  return { file, context, interpolate, allowOverride: false, reportUnknownFields: false, defaultsSyntax, commands: "literal" };
}

function readHostFile(file: string, format: ConfigFormat, problems: ConfigProblem[]): Record<string, unknown> | undefined {
  const read = readConfigFile(file, format);
  if (read.status === "error") problems.push(read.problem);
  return read.status === "ok" ? read.data : undefined;
}

function buildLayer(
  kind: ImportKind,
  file: string,
  servers: RawServers,
  map: (raw: unknown, where: ProblemLocation) => MappedEntry | undefined,
  options: EntryOptions,
  problems: ConfigProblem[],
): ConfigLayer {
  const entries = servers.map(([name, raw]) => {
    const mapped = map(raw, { file, server: name });
    const parsed = mapped
      ? parseServerEntry(name, mapped.raw, { ...options, hostFieldNames: mapped.hostFieldNames }, problems)
      : ({ kind: "invalid" } as const);
    return { name, parsed };
  });
  return { source: { kind, path: file }, entries };
}

/** The object under `key` (absent is fine: most of these files hold far more than MCP servers). */
function serverTable(container: Record<string, unknown>, key: string, where: ProblemLocation, problems: ConfigProblem[]): RawServers {
  const table = container[key];
  if (table === undefined) return [];
  if (isJsonObject(table)) return Object.entries(table);
  problems.push(configProblem("error", where, `must be an object mapping server names to servers (got ${describeValue(table)})`));
  return [];
}

// ---------------------------------------------------------------------------------------------
// JSON hosts: Cursor, Claude Code, Claude Desktop, Windsurf, VS Code
// ---------------------------------------------------------------------------------------------

function importJsonHost(
  kind: Exclude<ImportKind, "codex">,
  context: InterpolationContext,
  problems: ConfigProblem[],
  project: ProjectConfig,
): ConfigLayer[] {
  return hostConfigFiles(kind, context).flatMap((file) => {
    // An untrusted project's file is read only to know what it defines: its problems are nobody's concern yet.
    const fileProblems = isProjectFile(kind, file, context) && !project.trusted ? [] : problems;
    const data = readHostFile(file, "json", fileProblems);
    if (!data) return [];
    const servers = jsonHostServers(kind, data, file, context, fileProblems);
    if (!admitProjectFile(kind, file, servers, context, project)) return [];
    // Of these hosts only Claude Code reads `${VAR:-default}` itself.
    const options = hostEntryOptions(file, context, true, kind === "claude-code");
    const timeouts = kind === "claude-code" ? claudeCodeTimeouts(file, context, problems) : {};
    return [buildLayer(kind, file, servers, (raw, where) => mapJsonHostEntry(raw, where, timeouts, problems), options, problems)];
  });
}

/** Claude Code's environment variables for its MCP time limits (milliseconds), and the fields they set here. */
const CLAUDE_CODE_TIMEOUTS = { MCP_TIMEOUT: "startupTimeoutMs", MCP_TOOL_TIMEOUT: "requestTimeoutMs" } as const;

/**
 * `MCP_TIMEOUT` (startup) and `MCP_TOOL_TIMEOUT` (tool calls), as set in Pi's environment, become the limits of the
 * servers imported from Claude Code: they are Claude Code's settings for those servers, so they do not change
 * servers configured anywhere else.
 */
function claudeCodeTimeouts(file: string, context: InterpolationContext, problems: ConfigProblem[]): Record<string, number> {
  const timeouts: Record<string, number> = {};
  for (const [variable, field] of Object.entries(CLAUDE_CODE_TIMEOUTS)) {
    const value = lookupEnv(context.env, variable, context.platform);
    if (value === undefined || value === "") continue;
    const ms = Number(value);
    if (Number.isFinite(ms) && ms > 0) timeouts[field] = ms;
    else
      problems.push(
        configProblem(
          "warning",
          { file },
          `environment variable ${variable} must be a number of milliseconds > 0 (got "${value}"); ignored`,
        ),
      );
  }
  return timeouts;
}

function jsonHostServers(
  kind: ImportKind,
  data: Record<string, unknown>,
  file: string,
  context: InterpolationContext,
  problems: ConfigProblem[],
): RawServers {
  if (kind === "vscode" && pathModule(context.platform).basename(file) === VSCODE_SETTINGS) {
    const block = data.mcp;
    if (block === undefined) return [];
    if (!isJsonObject(block)) {
      problems.push(configProblem("error", { file, field: "mcp" }, `must be an object with "servers" (got ${describeValue(block)})`));
      return [];
    }
    return serverTable(block, "servers", { file, field: "mcp.servers" }, problems);
  }
  if (kind === "vscode") {
    // VS Code's own format uses `servers`; the portable format it also reads uses `mcpServers`.
    const key = data.servers === undefined && data.mcpServers !== undefined ? "mcpServers" : "servers";
    return serverTable(data, key, { file, field: key }, problems);
  }
  const userScope = serverTable(data, "mcpServers", { file, field: "mcpServers" }, problems);
  if (kind !== "claude-code") return userScope;
  // Claude Code's "local" scope: servers added for one project, kept under its absolute path; they win.
  const project = findProjectEntry(data.projects, context);
  if (!project) return userScope;
  const localScope = serverTable(project.value, "mcpServers", { file, field: `projects["${project.key}"].mcpServers` }, problems);
  return [...new Map([...userScope, ...localScope])];
}

function findProjectEntry(projects: unknown, context: InterpolationContext): { key: string; value: Record<string, unknown> } | undefined {
  if (!isJsonObject(projects)) return undefined;
  for (const [key, value] of Object.entries(projects)) {
    if (isJsonObject(value) && samePath(key, context.cwd, context.platform)) return { key, value };
  }
  return undefined;
}

/** Windows paths are case-insensitive and hosts write them with either slash. */
function samePath(a: string, b: string, platform: NodeJS.Platform): boolean {
  const paths = pathModule(platform);
  const normalise = (value: string) => {
    const resolved = paths.resolve(value).replace(/[\\/]+$/, "");
    return platform === "win32" ? resolved.toLowerCase() : resolved;
  };
  return normalise(a) === normalise(b);
}

const JSON_HOST_FIELDS = ["command", "args", "env", "cwd", "url", "headers", "type", "enabled", "disabled"] as const;

function mapJsonHostEntry(raw: unknown, where: ProblemLocation, defaults: Record<string, number>, problems: ConfigProblem[]): MappedEntry {
  if (!isJsonObject(raw)) return { raw };
  const mapped: Record<string, unknown> = { ...defaults };
  const hostFieldNames: Record<string, string> = {};
  for (const key of JSON_HOST_FIELDS) if (raw[key] !== undefined) mapped[key] = raw[key];
  // Windsurf names a remote server's endpoint `serverUrl`, and its disabled tools `disabledTools`.
  if (raw.url === undefined && raw.serverUrl !== undefined) {
    mapped.url = raw.serverUrl;
    hostFieldNames.url = "serverUrl";
  }
  if (raw.disabledTools !== undefined) {
    mapped.excludeTools = raw.disabledTools;
    hostFieldNames.excludeTools = "disabledTools";
  }
  if (raw.envFile !== undefined) {
    problems.push(
      configProblem("warning", { ...where, field: "envFile" }, "is not supported: variables from that file are not set for this server"),
    );
  }
  return { raw: mapped, hostFieldNames };
}

// ---------------------------------------------------------------------------------------------
// Codex: TOML, `[mcp_servers.<name>]`, secrets referenced by environment variable name
// ---------------------------------------------------------------------------------------------

function importCodex(context: InterpolationContext, problems: ConfigProblem[], project: ProjectConfig): ConfigLayer[] {
  const [projectFile, userFile] = hostConfigFiles("codex", context) as [string, string];
  const user = readHostFile(userFile, "toml", problems);
  const layers: ConfigLayer[] = [];
  if (existsSync(projectFile)) {
    if (user && isTrustedProject(user, context)) {
      // Trusted in Codex, and still the repository's file: it needs the project trusted here too.
      const fileProblems = project.trusted ? problems : [];
      const data = readHostFile(projectFile, "toml", fileProblems);
      const servers = data ? serverTable(data, "mcp_servers", { file: projectFile, field: "mcp_servers" }, fileProblems) : [];
      if (data && admitProjectFile("codex", projectFile, servers, context, project))
        layers.push(codexLayer(projectFile, data, context, problems));
    } else {
      problems.push(
        configProblem(
          "warning",
          { file: projectFile },
          `skipped: Codex reads a project's config only once the project is trusted (trust_level = "trusted" in ${userFile})`,
        ),
      );
    }
  }
  if (user) layers.push(codexLayer(userFile, user, context, problems));
  return layers;
}

function isTrustedProject(user: Record<string, unknown>, context: InterpolationContext): boolean {
  const project = findProjectEntry(user.projects, context);
  return project?.value.trust_level === "trusted";
}

function codexLayer(file: string, data: Record<string, unknown>, context: InterpolationContext, problems: ConfigProblem[]): ConfigLayer {
  const servers = serverTable(data, "mcp_servers", { file, field: "mcp_servers" }, problems);
  // Codex has no substitution: its values are literal.
  return buildLayer(
    "codex",
    file,
    servers,
    (raw, where) => mapCodexEntry(raw, where, context, problems),
    hostEntryOptions(file, context, false),
    problems,
  );
}

const CODEX_RENAMES: Readonly<Record<string, string>> = {
  http_headers: "headers",
  bearer_token_env_var: "bearerTokenEnv",
  enabled_tools: "includeTools",
  disabled_tools: "excludeTools",
  startup_timeout_ms: "startupTimeoutMs",
};

/** Codex's time limits in seconds, and our fields (milliseconds) they become. */
const CODEX_SECONDS: Readonly<Record<string, string>> = { startup_timeout_sec: "startupTimeoutMs", tool_timeout_sec: "requestTimeoutMs" };

/** `undefined`: a Codex-only field is invalid (already reported). */
function mapCodexEntry(
  raw: unknown,
  where: ProblemLocation,
  context: InterpolationContext,
  problems: ConfigProblem[],
): MappedEntry | undefined {
  if (!isJsonObject(raw)) return { raw };
  const error = (field: string, text: string) => {
    problems.push(configProblem("error", { ...where, field }, text));
    return undefined;
  };
  if (raw.bearer_token !== undefined)
    return error("bearer_token", "is rejected by Codex; put the token in an environment variable and name it in bearer_token_env_var");

  const mapped: Record<string, unknown> = {};
  const hostFieldNames: Record<string, string> = {};
  for (const key of ["command", "args", "env", "cwd", "url", "enabled"]) if (raw[key] !== undefined) mapped[key] = raw[key];
  for (const [codexName, ourName] of Object.entries(CODEX_RENAMES)) {
    if (raw[codexName] === undefined) continue;
    mapped[ourName] = raw[codexName];
    hostFieldNames[ourName] = codexName;
  }
  for (const [codexName, ourName] of Object.entries(CODEX_SECONDS)) {
    const seconds = raw[codexName];
    if (seconds === undefined) continue;
    if (typeof seconds !== "number" || !(seconds > 0)) return error(codexName, `must be a number > 0 (got ${describeValue(seconds)})`);
    mapped[ourName] = seconds * 1000;
    hostFieldNames[ourName] = codexName;
  }
  // Codex speaks only Streamable HTTP to a url.
  if (raw.url !== undefined) mapped.type = "http";

  const envVars = raw.env_vars === undefined ? [] : codexEnvVarNames(raw.env_vars);
  if (!envVars)
    return error("env_vars", `must be an array of variable names or { name = "…" } tables (got ${describeValue(raw.env_vars)})`);
  if (envVars.length > 0 && (mapped.env === undefined || isJsonObject(mapped.env))) {
    mapped.env = {
      ...copyFromEnvironment(
        envVars.map((name) => [name, name]),
        context,
      ),
      ...(mapped.env as Record<string, unknown> | undefined),
    };
  }

  const envHeaders = raw.env_http_headers;
  if (envHeaders !== undefined) {
    if (!isJsonObject(envHeaders) || Object.values(envHeaders).some((name) => typeof name !== "string")) {
      return error("env_http_headers", `must map header names to environment variable names (got ${describeValue(envHeaders)})`);
    }
    if (mapped.headers === undefined || isJsonObject(mapped.headers)) {
      mapped.headers = {
        ...(mapped.headers as Record<string, unknown> | undefined),
        ...copyFromEnvironment(Object.entries(envHeaders) as Array<[string, string]>, context),
      };
    }
  }
  return { raw: mapped, hostFieldNames };
}

function codexEnvVarNames(value: unknown): string[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const names = value.map((item) =>
    typeof item === "string" ? item : isJsonObject(item) && typeof item.name === "string" ? item.name : undefined,
  );
  return names.every((name): name is string => name !== undefined) ? names : undefined;
}

/** `[key, variable]` pairs → `{key: value}` for the variables that are set and not blank (as Codex does). */
function copyFromEnvironment(pairs: Array<[string, string]>, context: InterpolationContext): Record<string, string> {
  const copied: Record<string, string> = {};
  for (const [key, variable] of pairs) {
    const value = lookupEnv(context.env, variable, context.platform);
    if (value !== undefined && value.trim() !== "") copied[key] = value;
  }
  return copied;
}

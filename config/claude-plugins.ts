/**
 * Claude Code plugin folders the user names in `claudePlugins` (upstream 2.x's field): `[{ "path", "mcp", "skills" }]`.
 * `mcp: true` takes the servers of the plugin's root `.mcp.json` (with `mcpServers`, or the servers at its top level,
 * as many published plugins write it), `${CLAUDE_PLUGIN_ROOT}` being the plugin's folder (and in a stdio server's
 * environment); `skills: true` gives Pi the plugin's `skills/**\/SKILL.md` as its own skills. Server names are used as
 * written; the first plugin listed wins a name two plugins define, and every file of ours is above them.
 *
 * The adapter installs, fetches and updates nothing, and runs no plugin hook: it reads what is in the folder. Nothing
 * outside the folder is read through it (a `.mcp.json`, `skills` folder or skill that a symlink takes elsewhere is
 * refused). A relative path is the project's (as upstream reads it).
 */
import { readdirSync, realpathSync, statSync } from "node:fs";
import { basename, isAbsolute, join, relative } from "node:path";
import { readConfigFile } from "./files.ts";
import { type ConfigLayer, type EntryOptions, ownEntryOptions, parseServerEntry } from "./entry.ts";
import { configProblem } from "./problems.ts";
import type { InterpolationContext } from "./interpolation.ts";
import { describeValue, isJsonObject } from "../util/guards.ts";
import { expandHome, pathModule } from "../util/paths.ts";
import type { ConfigProblem } from "../types.ts";

/** One entry of `claudePlugins`, checked: its folder resolved against the project. */
export interface ClaudePluginRef {
  path: string;
  mcp: boolean;
  skills: boolean;
  /** The config file that lists it (problems name it). */
  file: string;
}

export interface ClaudePluginsLoaded {
  layers: ConfigLayer[];
  skills: string[];
}

const ROOT_VARIABLE = "CLAUDE_PLUGIN_ROOT";
/** Skills folders deeper than this are not searched: a plugin's skills sit a level or two down. */
const MAX_SKILL_DEPTH = 6;

/** `claudePlugins` of one of our files; problems name the entry and field. Undefined when the file has none. */
export function parseClaudePlugins(
  raw: unknown,
  file: string,
  context: InterpolationContext,
  problems: ConfigProblem[],
): ClaudePluginRef[] | undefined {
  if (raw === undefined) return undefined;
  if (!Array.isArray(raw)) {
    problems.push(
      configProblem(
        "error",
        { file, field: "claudePlugins" },
        `must be an array of { "path", "mcp", "skills" } (got ${describeValue(raw)})`,
      ),
    );
    return [];
  }
  return raw.flatMap((item, index) => {
    const field = `claudePlugins[${index}]`;
    const wrong = (text: string) => {
      problems.push(configProblem("error", { file, field }, `${text}; this plugin is not loaded`));
      return [];
    };
    if (!isJsonObject(item) || typeof item.path !== "string" || item.path.trim() === "") {
      return wrong(`must be an object with a non-empty "path" (got ${describeValue(item)})`);
    }
    if ((item.mcp !== undefined && typeof item.mcp !== "boolean") || (item.skills !== undefined && typeof item.skills !== "boolean")) {
      return wrong(`"mcp" and "skills" must be true or false`);
    }
    if (item.mcp !== true && item.skills !== true) return wrong(`turns on neither "mcp" nor "skills"`);
    for (const key of Object.keys(item).filter((key) => !["path", "mcp", "skills"].includes(key))) {
      problems.push(configProblem("warning", { file, field: `${field}.${key}` }, "unknown field, ignored"));
    }
    const path = pathModule(context.platform).resolve(context.cwd, expandHome(item.path, context.homeDir, context.platform));
    return [{ path, mcp: item.mcp === true, skills: item.skills === true, file }];
  });
}

/** The plugins' servers (a layer per plugin, in the order listed) and skill files. */
export function loadClaudePlugins(
  plugins: readonly ClaudePluginRef[],
  context: InterpolationContext,
  problems: ConfigProblem[],
): ClaudePluginsLoaded {
  const layers: ConfigLayer[] = [];
  const skills: string[] = [];
  const seen = new Set<string>();
  for (const plugin of plugins) {
    const root = pluginRoot(plugin, problems);
    if (!root || seen.has(root)) continue;
    seen.add(root);
    const name = pluginName(root, plugin, problems);
    if (name === undefined) continue;
    if (plugin.mcp) {
      const layer = pluginServers(root, name, context, problems);
      if (layer) layers.push(layer);
    }
    if (plugin.skills) skills.push(...pluginSkills(root));
  }
  return { layers, skills };
}

function pluginRoot(plugin: ClaudePluginRef, problems: ConfigProblem[]): string | undefined {
  const where = { file: plugin.file, field: "claudePlugins" };
  try {
    const root = realpathSync(plugin.path);
    if (statSync(root).isDirectory()) return root;
    problems.push(configProblem("warning", where, `${plugin.path} is not a folder; this plugin is not loaded`));
  } catch {
    problems.push(configProblem("warning", where, `${plugin.path} does not exist; this plugin is not loaded`));
  }
  return undefined;
}

/** The manifest's `name` (it is optional, as in Claude Code), else the folder's; undefined when the manifest is broken. */
function pluginName(root: string, plugin: ClaudePluginRef, problems: ConfigProblem[]): string | undefined {
  const file = join(root, ".claude-plugin", "plugin.json");
  const read = readConfigFile(file, "json");
  if (read.status === "absent") return basename(root);
  const broken = (text: string) => {
    problems.push(configProblem("error", { file }, `${text}; the plugin listed in ${plugin.file} is not loaded`));
    return undefined;
  };
  if (read.status === "error") {
    problems.push(read.problem);
    return broken("its manifest cannot be read");
  }
  const name = read.data.name;
  if (name === undefined) return basename(root);
  return typeof name === "string" && /^[a-z0-9]+(?:-[a-z0-9]+)*$/.test(name)
    ? name
    : broken(`"name" must be kebab-case (got ${describeValue(name)})`);
}

function pluginServers(root: string, name: string, context: InterpolationContext, problems: ConfigProblem[]): ConfigLayer | undefined {
  const file = inside(root, join(root, ".mcp.json"));
  if (!file) return undefined; // a plugin without servers (or one whose .mcp.json leads elsewhere) brings none
  const read = readConfigFile(file, "json");
  if (read.status === "error") problems.push(read.problem);
  if (read.status !== "ok") return undefined;
  const servers = isJsonObject(read.data.mcpServers) ? read.data.mcpServers : read.data;
  // Claude Code's syntax (`${VAR}`, `${VAR:-default}`) with the plugin's folder; its files never meant "!" as a command.
  const pluginContext = { ...context, env: { ...context.env, [ROOT_VARIABLE]: root } };
  const options: EntryOptions = { ...ownEntryOptions(file, pluginContext), commands: "literal" };
  const entries = Object.entries(servers).map(([server, raw]) => {
    const parsed = parseServerEntry(server, raw, options, problems);
    if (parsed.kind === "server" && parsed.entry.command !== undefined) {
      parsed.entry.env = { [ROOT_VARIABLE]: root, ...parsed.entry.env };
    }
    return { name: server, parsed };
  });
  return { source: { kind: "claude-plugin", path: file, label: name }, entries };
}

/** `skills/**\/SKILL.md` inside the plugin, in name order; a folder holding a SKILL.md is a skill (not searched further). */
function pluginSkills(root: string): string[] {
  const skillsDir = inside(root, join(root, "skills"), "directory");
  if (!skillsDir) return [];
  const found: string[] = [];
  const visit = (dir: string, depth: number) => {
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch {
      return;
    }
    const manifest = names.includes("SKILL.md") ? inside(skillsDir, join(dir, "SKILL.md")) : undefined;
    if (manifest) return void found.push(manifest);
    if (depth >= MAX_SKILL_DEPTH) return;
    for (const name of names.filter((name) => !name.startsWith(".") && name !== "node_modules")) {
      const child = inside(skillsDir, join(dir, name), "directory");
      if (child) visit(child, depth + 1);
    }
  };
  visit(skillsDir, 0);
  return found;
}

/** The path resolved (symlinks too) when it stays inside `root` and is a file (or a folder); else undefined. */
function inside(root: string, path: string, kind: "file" | "directory" = "file"): string | undefined {
  try {
    const real = realpathSync(path);
    const rel = relative(root, real);
    if (rel.startsWith("..") || isAbsolute(rel)) return undefined;
    const stats = statSync(real);
    return (kind === "file" ? stats.isFile() : stats.isDirectory()) ? real : undefined;
  } catch {
    return undefined;
  }
}

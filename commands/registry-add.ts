/**
 * Servers from the MCP Registry: `/mcp search <words>` lists the active servers whose names match, a page at a time
 * (`/mcp search --more` for the next); `/mcp add <registry name> [name]` turns the latest version of one into a
 * server of the user file. With a UI (the TUI, an RPC client) the results are a list to pick from, a server that
 * runs more than one way asks which, and its required inputs are asked (never a secret: registry.ts writes those as
 * `${VAR}` and the report says which to set). A registry that cannot be reached, and a runtime that is not installed
 * (uvx, docker), are each one line naming what to do.
 */
import type { ExtensionCommandContext } from "@mariozechner/pi-coding-agent";
import {
  configNameFor,
  defaultOption,
  describeListing,
  describeMissingRuntime,
  describeRegistry,
  fetchLatestServer,
  type InputSlot,
  type InstallOption,
  installOptions,
  missingRuntime,
  type PlannedEntry,
  planInstall,
  REGISTRY_NAME,
  type RegistryServer,
  registryUrl,
  searchRegistry,
} from "../registry.ts";
import type { McpExtensionState } from "../state.ts";
import { DIALOG_TIMEOUT_MS, showText } from "../ui.ts";
import { truncate } from "../util/text.ts";
import { addServerEntry, checkNewName } from "./new-server.ts";

/** `--npm`, `--pypi`, `--oci`, `--remote`: which way to run it, when the entry offers several. */
const KIND_FLAGS = ["--npm", "--pypi", "--oci", "--remote"];
const MORE = "More results…";
const MORE_FLAG = "--more";
/** Wide enough for a name, a version and the start of a description on one line of a select list. */
const LABEL_CHARS = 150;

/** The search a session last ran, so `/mcp search --more` can go on with it (no cursor: its last page was shown). */
const lastSearch = new WeakMap<McpExtensionState, { words: string; cursor: string | undefined }>();

/** `/mcp add <registry name> [name] [--kind]`: a registry name has a `/`, which no server name has (and no `:`: never a URL). */
export function isRegistryAdd(words: readonly string[]): boolean {
  const plain = words.filter((word) => !word.startsWith("--"));
  return plain.length >= 1 && plain.length <= 2 && REGISTRY_NAME.test(plain[0]!);
}

/** `/mcp search [words…] | --more`: with a UI, a list to pick a server to add from; without, the page as text. */
export async function searchCommand(ctx: ExtensionCommandContext, state: McpExtensionState, words: readonly string[]): Promise<void> {
  const url = requireRegistry(state);
  const more = words.includes(MORE_FLAG);
  const previous = lastSearch.get(state);
  // Searches are remembered by the session: in print mode, `pi -p "/mcp search x" "/mcp search --more"` pages.
  if (more && !previous) throw new Error("no search to continue in this session: /mcp search <words> first");
  if (more && previous!.cursor === undefined) return showText(ctx, `No more results for "${previous!.words}".`);
  const query = more ? previous!.words : words.filter((word) => !word.startsWith("--")).join(" ") || (await askWords(ctx));
  if (query === undefined) return;
  if (ctx.hasUI) return pickAndAdd(ctx, state, url, query, more ? previous!.cursor : undefined);
  const page = await searchRegistry(url, { search: query, cursor: more ? previous!.cursor : undefined });
  lastSearch.set(state, { words: query, cursor: page.nextCursor });
  showText(ctx, searchReport(url, query, page.servers, page.nextCursor !== undefined));
}

/** The panel's "Add from the MCP Registry…": words asked, results picked from, the server added. */
export async function searchAndAdd(ctx: ExtensionCommandContext, state: McpExtensionState): Promise<void> {
  const url = requireRegistry(state);
  const query = await askWords(ctx);
  if (query !== undefined) await pickAndAdd(ctx, state, url, query, undefined);
}

/** `/mcp add <registry name> [name] [--npm|--pypi|--oci|--remote]`: the report; undefined when the user cancelled. */
export async function addFromRegistry(
  ctx: ExtensionCommandContext,
  state: McpExtensionState,
  words: readonly string[],
): Promise<string | undefined> {
  const url = requireRegistry(state);
  const [registryName = "", name] = words.filter((word) => !word.startsWith("--"));
  const kindFlag = words.find((word) => word.startsWith("--"));
  if (kindFlag && !KIND_FLAGS.includes(kindFlag)) throw new Error(`${kindFlag}: the choices are ${KIND_FLAGS.join(", ")}`);
  const server = await fetchLatestServer(url, registryName);
  if (!server) throw new Error(`${describeRegistry(url)} has no server named ${registryName} (/mcp search <words> finds names)`);
  if (server.status === "deleted") throw new Error(`${registryName} was deleted from ${describeRegistry(url)}`);
  return addServer(ctx, state, server, { name, kind: kindFlag?.slice(2) });
}

function requireRegistry(state: McpExtensionState): string {
  const url = registryUrl(state.config.settings);
  if (!url) throw new Error(`the MCP Registry is off ("settings": { "registry": false } in your config)`);
  return url;
}

async function askWords(ctx: ExtensionCommandContext): Promise<string | undefined> {
  if (!ctx.hasUI) throw new Error("usage: /mcp search <words> | /mcp search --more");
  const words = (await ctx.ui.input("Search the MCP Registry for", "a name, e.g. github", { timeout: DIALOG_TIMEOUT_MS }))?.trim();
  return words || undefined;
}

/** Pages of results in a select list until the user picks a server (then it is added) or leaves. */
async function pickAndAdd(
  ctx: ExtensionCommandContext,
  state: McpExtensionState,
  url: string,
  query: string,
  cursor: string | undefined,
): Promise<void> {
  for (;;) {
    const page = await searchRegistry(url, { search: query, cursor });
    if (page.servers.length === 0 && !page.nextCursor) return showText(ctx, searchReport(url, query, [], false));
    const labels = page.servers.map((server) => truncate(describeListing(server), LABEL_CHARS));
    const picked = await ctx.ui.select(`${describeRegistry(url)}: "${query}"`, page.nextCursor ? [...labels, MORE] : labels, {
      timeout: DIALOG_TIMEOUT_MS,
    });
    if (picked === undefined) return;
    if (picked === MORE) {
      cursor = page.nextCursor;
      continue;
    }
    const report = await addServer(ctx, state, page.servers[labels.indexOf(picked)]!, {});
    if (report) showText(ctx, report);
    return;
  }
}

function searchReport(url: string, query: string, servers: readonly RegistryServer[], more: boolean): string {
  if (servers.length === 0) return `${capitalized(describeRegistry(url))} has no active server matching "${query}".`;
  const lines = [
    `${capitalized(describeRegistry(url))}, "${query}": ${servers.length} ${servers.length === 1 ? "server" : "servers"}${more ? " (more: /mcp search --more)" : ""}`,
    ...servers.map((server) => `  ${describeListing(server)}`),
    `Add one: /mcp add <registry name> [name], e.g. /mcp add ${servers[0]!.name}`,
  ];
  return lines.join("\n");
}

interface AddChoices {
  /** The config name; default: from the registry name. */
  name?: string;
  /** `npm`, `pypi`, `oci` or `remote`. */
  kind?: string;
}

/** Adds the server the way chosen (or the first this machine can run), with its inputs asked; undefined: cancelled. */
async function addServer(
  ctx: ExtensionCommandContext,
  state: McpExtensionState,
  server: RegistryServer,
  choices: AddChoices,
): Promise<string | undefined> {
  const { options, unsupported } = installOptions(server);
  if (options.length === 0) {
    const why = unsupported.map((option) => `${option.label}: ${option.reason}`).join("; ");
    throw new Error(`${server.name} cannot be added here (${why || "it lists no package and no remote"})`);
  }
  const option = await chooseOption(ctx, server, options, choices.kind);
  if (!option) return undefined;
  const missing = missingRuntime(option);
  if (missing) throw new Error(`not added: ${describeMissingRuntime(option, missing)}, then /mcp add ${server.name} again`);
  const name = choices.name ?? configNameFor(server.name);
  checkNewName(state, name, `give it another: /mcp add ${server.name} <name>`);
  const plan = planInstall(server, option, name);
  const answers = await askInputs(ctx, name, plan.questions);
  if (!answers) return undefined;
  const planned = plan.build(answers);
  const added = await addServerEntry(state, name, planned.entry, { unsetVariables: true });
  const from = `From ${server.name}${server.version ? ` ${server.version}` : ""}${server.status === "deprecated" ? " (the registry marks it deprecated)" : ""}: ${option.label}.`;
  return [added.text, from, ...variableLines(planned, added.file, name)].join("\n");
}

async function chooseOption(
  ctx: ExtensionCommandContext,
  server: RegistryServer,
  options: readonly InstallOption[],
  kind: string | undefined,
): Promise<InstallOption | undefined> {
  if (kind !== undefined || options.length === 1 || !ctx.hasUI) {
    const option = defaultOption(options, kind);
    if (!option) throw new Error(`${server.name} has no ${kind} way to run (it has: ${options.map((choice) => choice.label).join(", ")})`);
    return option;
  }
  const labels = options.map((option) => {
    const missing = missingRuntime(option);
    return missing ? `${option.label} (needs ${missing.command}, which is not installed here)` : option.label;
  });
  const picked = await ctx.ui.select(`Add ${server.name}: how should it run?`, labels, { timeout: DIALOG_TIMEOUT_MS });
  return picked === undefined ? undefined : options[labels.indexOf(picked)];
}

/** The required inputs, asked one by one (with a UI); undefined when a question was dismissed. */
async function askInputs(
  ctx: ExtensionCommandContext,
  name: string,
  questions: readonly InputSlot[],
): Promise<Map<string, string> | undefined> {
  const answers = new Map<string, string>();
  if (!ctx.hasUI) return answers;
  for (const slot of questions) {
    const title = `${name}: ${slot.label}${slot.description ? ` — ${slot.description}` : ""}${slot.default !== undefined ? ` (empty: ${slot.default})` : ""}`;
    const answer = slot.choices
      ? await ctx.ui.select(title, slot.choices, { timeout: DIALOG_TIMEOUT_MS })
      : await ctx.ui.input(title, slot.default ?? `empty: read from $${slot.variable}`, { timeout: DIALOG_TIMEOUT_MS });
    if (answer === undefined) return undefined;
    answers.set(slot.key, answer.trim());
  }
  return answers;
}

/** What the user still has to do: variables to set (those not set in Pi's environment), optional inputs left out. */
function variableLines(planned: PlannedEntry, file: string, name: string): string[] {
  const describe = (slot: InputSlot) =>
    `${slot.variable}${slot.secret ? " (secret)" : ""}${slot.description ? `: ${slot.description}` : ""}`;
  const unset = planned.toSet.filter((slot) => process.env[slot.variable] === undefined);
  const set = planned.toSet.filter((slot) => process.env[slot.variable] !== undefined);
  const lines: string[] = [];
  if (unset.length > 0) {
    lines.push(`It starts once these are set in Pi's environment (then restart Pi): ${unset.map(describe).join("; ")}`);
  }
  if (set.length > 0) lines.push(`It reads ${set.map((slot) => slot.variable).join(", ")} from Pi's environment (set now).`);
  if (planned.leftOut.length > 0) {
    const shown = planned.leftOut.slice(0, 8).map((slot) => slot.label);
    const rest = planned.leftOut.length > shown.length ? `, and ${planned.leftOut.length - shown.length} more` : "";
    lines.push(`Optional, left out: ${shown.join(", ")}${rest} (add them to "${name}" in ${file} to use them).`);
  }
  return lines;
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

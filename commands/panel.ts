/**
 * `/mcp` with no argument in the interactive TUI: a panel of Pi's own components (SelectList between borders)
 * listing every server with its state, tools and source, the servers the config defines but skipped (with why), then
 * the ways to add one: from the MCP Registry, by command or URL, and by importing another tool's config found on this
 * machine (with no server yet, those are the panel). Enter opens a server's actions (reconnect, show the last error
 * when it has one, show what it logged when it did, enable or disable, show tools, sign in; for a skipped one: why,
 * disable, remove) in Pi's select dialog, or runs an adding row; after either, the panel comes
 * back with the new state and the cursor on that row; Esc closes it. Modes without a TUI never render a custom
 * component (RPC answers `undefined` without building it): the caller then prints the status text instead.
 */
import { DynamicBorder, type ExtensionCommandContext } from "@mariozechner/pi-coding-agent";
import { Container, type SelectItem, SelectList, Text } from "@mariozechner/pi-tui";
import type { ImportableHost } from "../config.ts";
import { canSignIn } from "../server-manager.ts";
import { isEditableSource, runManageCommand } from "./manage.ts";
import { serverStatusReport, skippedServers, skipSummary } from "./status-report.ts";
import type { McpExtensionState } from "../state.ts";
import type { ImportKind, ServerDefinition } from "../types.ts";
import { DIALOG_TIMEOUT_MS, showText } from "../ui.ts";
import { describeImportable } from "./ways-in.ts";

/** What the panel's actions do, implemented where the commands are (commands.ts). */
export interface PanelActions {
  /** One line: state, tools (as /mcp status says them). */
  summary(server: ServerDefinition): string;
  reconnect(name: string): Promise<void>;
  toolsText(name: string): string;
  /** What /mcp status says under the server's "last error" (stderr lines included); undefined when it has none. */
  lastErrorText(name: string): string | undefined;
  /** What /mcp status <server> says (its log included); undefined when the server logged nothing. */
  logText(name: string): string | undefined;
  signIn(name: string): Promise<void>;
  /** The registry's address when it is on. */
  registry(): string | undefined;
  /** Other tools' configs on this machine whose servers the session does not import. */
  importable(): readonly ImportableHost[];
  addFromRegistry(): Promise<void>;
  addByCommand(): Promise<void>;
  importHost(kind: ImportKind): Promise<void>;
}

const MAX_VISIBLE = 12;

/** Shows the panel until the user closes it; false when this mode cannot show it (nothing was rendered). */
export async function openServersPanel(ctx: ExtensionCommandContext, state: McpExtensionState, actions: PanelActions): Promise<boolean> {
  // The server last acted on: the panel is built anew after each action, and comes back on that row.
  let actedOn: string | undefined;
  for (;;) {
    let rendered = false;
    const picked = await ctx.ui.custom<string | undefined>((tui, theme, _keybindings, done) => {
      rendered = true;
      const items = [...serverItems(state, actions), ...skippedItems(state), ...addingItems(actions)];
      const border = () => new DynamicBorder((text: string) => theme.fg("accent", text));
      const list = new SelectList(items, Math.min(Math.max(items.length, 1), MAX_VISIBLE), {
        selectedPrefix: (text) => theme.fg("accent", text),
        selectedText: (text) => theme.fg("accent", text),
        description: (text) => theme.fg("muted", text),
        scrollInfo: (text) => theme.fg("dim", text),
        noMatch: (text) => theme.fg("warning", text),
      });
      list.setSelectedIndex(
        Math.max(
          0,
          items.findIndex((item) => item.value === actedOn),
        ),
      );
      list.onSelect = (item) => done(item.value);
      list.onCancel = () => done(undefined);
      const panel = new Container();
      panel.addChild(border());
      const configured = state.servers.size + skippedServers(state).size;
      panel.addChild(new Text(theme.fg("accent", theme.bold(`MCP servers (${configured})`))));
      const tasks = state.tasks.runningLines();
      if (tasks.length > 0) panel.addChild(new Text(theme.fg("muted", [`Tasks running (/mcp tasks):`, ...tasks].join("\n  "))));
      if (configured === 0) panel.addChild(new Text(theme.fg("muted", "No servers yet. To add one:")));
      panel.addChild(list);
      panel.addChild(new Text(theme.fg("dim", "↑↓ select · enter actions · esc close")));
      panel.addChild(border());
      return {
        // Passed through untouched: Pi 1.6's Container returns the same cached array while nothing changed, so
        // lines edited in place would corrupt later frames (copy first if this ever needs to add to them).
        render: (width: number) => panel.render(width),
        invalidate: () => panel.invalidate(),
        handleInput: (data: string) => {
          list.handleInput(data);
          tui.requestRender();
        },
      };
    });
    if (!rendered) return false;
    if (picked === undefined || state.shutDown) return true;
    actedOn = picked;
    const adding = addingAction(picked, actions);
    const server = state.servers.get(picked);
    if (adding) await adding();
    else if (server) await runAction(ctx, state, server, actions);
    else if (skippedServers(state).has(picked)) await runSkippedAction(ctx, state, picked);
    else return true;
  }
}

/** Row values of the adding rows: they start with a character no server name in a config file can start with. */
const ADD_FROM_REGISTRY = "\u0000registry";
const ADD_BY_COMMAND = "\u0000command";
const IMPORT_PREFIX = "\u0000import:";

function addingItems(actions: PanelActions): SelectItem[] {
  const registry = actions.registry();
  return [
    ...actions.importable().map((host) => ({
      value: `${IMPORT_PREFIX}${host.kind}`,
      label: `+ Import from ${host.kind}`,
      description: `found on this machine: ${describeImportable(host)}`,
    })),
    ...(registry
      ? [{ value: ADD_FROM_REGISTRY, label: "+ Add from the MCP Registry", description: `search ${registry}, then pick a server` }]
      : []),
    { value: ADD_BY_COMMAND, label: "+ Add by command or URL", description: "a command that starts a stdio server, or an http(s) URL" },
  ];
}

function addingAction(value: string, actions: PanelActions): (() => Promise<void>) | undefined {
  if (value === ADD_FROM_REGISTRY) return () => actions.addFromRegistry();
  if (value === ADD_BY_COMMAND) return () => actions.addByCommand();
  if (value.startsWith(IMPORT_PREFIX)) return () => actions.importHost(value.slice(IMPORT_PREFIX.length) as ImportKind);
  return undefined;
}

function serverItems(state: McpExtensionState, actions: PanelActions): SelectItem[] {
  return [...state.servers.values()].map((server) => ({
    value: server.name,
    label: server.name,
    description: `${actions.summary(server)} · ${server.source.kind}: ${server.source.path}`,
  }));
}

/** Servers the config defines but could not load, with the first reason and the file that defines each. */
function skippedItems(state: McpExtensionState): SelectItem[] {
  return [...skippedServers(state)].map(([name, problems]) => {
    const source = state.config.skipped?.find((skipped) => skipped.name === name)?.source;
    const where = source ? ` · ${source.kind}: ${source.path}` : "";
    return { value: name, label: name, description: `skipped: ${skipSummary(problems[0]!)}${where}` };
  });
}

/** A skipped server's actions: why, and what the user can do from here (disable it, or remove it from its file). */
async function runSkippedAction(ctx: ExtensionCommandContext, state: McpExtensionState, name: string): Promise<void> {
  const source = state.config.skipped?.find((skipped) => skipped.name === name)?.source;
  const choices: Array<[string, () => unknown]> = [
    ["Show why it is skipped", () => showText(ctx, serverStatusReport(state, name))],
    ["Disable", () => runManageCommand(ctx, state, "disable", [name])],
  ];
  if (source && isEditableSource(source)) choices.push(["Remove", () => runManageCommand(ctx, state, "remove", [name])]);
  const labels = choices.map(([label]) => label);
  const picked = await ctx.ui.select(`MCP server "${name}" (skipped)`, labels, { timeout: DIALOG_TIMEOUT_MS });
  await choices.find(([label]) => label === picked)?.[1]();
}

/** The server's actions in Pi's select dialog; the chosen one runs (dismissing goes back to the panel). */
async function runAction(
  ctx: ExtensionCommandContext,
  state: McpExtensionState,
  server: ServerDefinition,
  actions: PanelActions,
): Promise<void> {
  const enabled = server.enabled !== false;
  // As in /mcp status: a disabled server's error is not shown (it is not being tried).
  const lastError = enabled ? actions.lastErrorText(server.name) : undefined;
  const log = actions.logText(server.name);
  const choices: Array<[string, () => unknown]> = [
    ...(enabled ? [["Reconnect", () => actions.reconnect(server.name)] as [string, () => Promise<void>]] : []),
    ...(lastError ? [["Show last error", () => showText(ctx, lastError)] as [string, () => void]] : []),
    ...(log ? [["Show server log", () => showText(ctx, log)] as [string, () => void]] : []),
    [enabled ? "Disable" : "Enable", () => runManageCommand(ctx, state, enabled ? "disable" : "enable", [server.name])],
    ["Show tools", () => showText(ctx, actions.toolsText(server.name))],
    ...(enabled && canSignIn(server) ? [["Sign in", () => actions.signIn(server.name)] as [string, () => Promise<void>]] : []),
  ];
  const labels = choices.map(([label]) => label);
  const picked = await ctx.ui.select(`MCP server "${server.name}"`, labels, { timeout: DIALOG_TIMEOUT_MS });
  await choices.find(([label]) => label === picked)?.[1]();
}

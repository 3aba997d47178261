/**
 * `/mcp status [server] | tools [server] | prompts [server] | reconnect [name] | search <words> | tasks [cancel <id>] |
 * trace [on|off] [server]`, `/mcp-auth <server>` and `/mcp-resource` (calls/resource-command.ts): what the user can
 * see and do.
 *
 * `/mcp-auth` signs in to a server that uses OAuth (or could: any HTTP server whose config gives it no token). With
 * a UI (interactive, RPC) the sign-in runs in the background and reports when it is over, so Pi stays usable while
 * the browser is out; in print mode the command waits for it (bounded by the sign-in's timeout).
 */
import type { ExtensionAPI, ExtensionCommandContext } from "@mariozechner/pi-coding-agent";
import { needsApproval } from "./calls/approvals.ts";
import { openInBrowser } from "./util/browser.ts";
import { isManageSubcommand, MANAGE_SUBCOMMANDS, MANAGE_USAGE, runManageCommand, runReported, splitArguments } from "./commands/manage.ts";
import { searchAndAdd, searchCommand } from "./commands/registry-add.ts";
import { importableHosts } from "./commands/ways-in.ts";
import { registryUrl } from "./registry.ts";
import { NeedsAuthError } from "./connection/session.ts";
import { canSignIn, tokensWithoutSignIn } from "./server-manager.ts";
import { safeUrl } from "./util/http-text.ts";
import { errorMessage } from "./util/guards.ts";
import { promptsReport } from "./calls/prompt-commands.ts";
import { openServersPanel, type PanelActions } from "./commands/panel.ts";
import { DEFAULT_SIGN_IN_TIMEOUT_MS } from "./connection/oauth-signins.ts";
import type { McpExtensionState } from "./state.ts";
import type { ServerDefinition } from "./types.ts";
import {
  describeStatus,
  disabledState,
  firstLine,
  lastErrorLines,
  panelSummary,
  serverStatusReport,
  statusReport,
  toolCount,
  updateStatus,
} from "./commands/status-report.ts";
import { DIALOG_TIMEOUT_MS, showText } from "./ui.ts";
import { ignored } from "./util/debug-log.ts";
import { TRACE_USAGE, traceCommand } from "./commands/trace.ts";
import { registerResourceCommand } from "./calls/resource-command.ts";

const SUBCOMMANDS = ["status", "tools", "prompts", "reconnect", "search", "tasks", "trace", ...MANAGE_SUBCOMMANDS] as const;
const USAGE = `/mcp status [server] | tools [server] | prompts [server] | reconnect [name] | search <words> | tasks [cancel <id>] | ${TRACE_USAGE.slice("/mcp ".length)} | ${MANAGE_USAGE.slice("/mcp ".length)}`;

/** `notRunning`: the answer while there is no state (a session starting or ending, or MCP off for the run). */
export function registerCommands(
  pi: ExtensionAPI,
  currentState: () => McpExtensionState | undefined,
  notRunning = "MCP adapter: not running (no session yet).",
): void {
  pi.registerCommand("mcp", {
    description: `MCP servers: ${USAGE}`,
    getArgumentCompletions: (prefix) => {
      const items = SUBCOMMANDS.filter((name) => name.startsWith(prefix)).map((name) => ({ value: name, label: name }));
      return items.length > 0 ? items : null;
    },
    handler: async (args, ctx) => {
      const state = currentState();
      if (!state) return showText(ctx, notRunning);
      // A config file edited since it was read counts for every subcommand (a server written by hand, a registry URL).
      state.followConfigFiles();
      // In the TUI, a bare /mcp opens the panel; other modes (RPC cannot show it) print the status.
      if (args.trim() === "" && ctx.hasUI && (await openServersPanel(ctx, state, panelActions(pi, ctx, state)))) return;
      // Quotes are read as /mcp enable reads them: a server name with spaces may be quoted or not.
      const [subcommand = "status", ...rest] = splitArguments(args);
      const argument = rest.join(" ") || undefined;
      // Print mode has no later: answer once the startup connections and first listings have settled, so a broken
      // server shows its error rather than "connecting", and a reconnect does not race them.
      if (!ctx.hasUI) await state.startup.catch(ignored("startup, awaited by /mcp in print mode"));
      if (subcommand === "status")
        return showText(
          ctx,
          argument ? serverStatusReport(state, argument) : statusReport(state, state.servers.size === 0 ? importableHosts(state) : []),
        );
      if (subcommand === "search") return runReported(ctx, "search", () => searchCommand(ctx, state, rest));
      if (subcommand === "tools") return showText(ctx, toolsReport(pi, state, argument));
      if (subcommand === "prompts") return showText(ctx, promptsReport(state, argument));
      if (subcommand === "reconnect") return reconnect(ctx, state, argument);
      if (subcommand === "tasks") return showText(ctx, await tasksCommand(state, rest));
      if (subcommand === "trace") return showText(ctx, await traceCommand(state, rest));
      if (isManageSubcommand(subcommand)) return runManageCommand(ctx, state, subcommand, splitArguments(args).slice(1));
      showText(ctx, `Unknown subcommand "${subcommand}". Usage: ${USAGE}`);
    },
  });

  registerResourceCommand(pi, currentState, notRunning);

  pi.registerCommand("mcp-auth", {
    description: "Sign in to an MCP server (OAuth), or see how to give it credentials: /mcp-auth <server> [--logout | --cancel]",
    getArgumentCompletions: (prefix) => {
      const items = [...(currentState()?.servers.keys() ?? [])]
        .filter((name) => name.startsWith(prefix))
        .map((name) => ({ value: name, label: name }));
      return items.length > 0 ? items : null;
    },
    handler: async (args, ctx) => {
      const state = currentState();
      state?.followConfigFiles();
      const [name = "", option] = splitArguments(args);
      const server = state?.servers.get(name);
      if (!state || !server)
        return showText(ctx, `Usage: ${AUTH_USAGE}. Servers: ${[...(state?.servers.keys() ?? [])].join(", ") || "none"}`);
      if (!canSignIn(server)) return showText(ctx, authHelp(state, server));
      if (server.enabled === false) return showText(ctx, `MCP server "${name}" is disabled; enable it before signing in.`);
      if (option === "--logout") return signOut(ctx, state, server);
      if (option === "--cancel")
        return showText(
          ctx,
          state.manager.cancelSignIn(name) ? `Cancelling the sign-in to "${name}".` : `No sign-in to "${name}" is under way.`,
        );
      if (option) return deliverCallback(ctx, state, name, option);
      await startSignIn(ctx, state, server);
    },
  });
}

/** `/mcp tasks`: the session's tasks; `/mcp tasks cancel <id>`: cancels one (the start of its id is enough). */
async function tasksCommand(state: McpExtensionState, args: readonly string[]): Promise<string> {
  const [action, id] = args;
  if (action === undefined) return state.tasks.report();
  if (action === "cancel" && id) return state.tasks.cancel(id);
  return "Usage: /mcp tasks [cancel <id>]";
}

/** The panel's actions are the commands' own. */
function panelActions(pi: ExtensionAPI, ctx: ExtensionCommandContext, state: McpExtensionState): PanelActions {
  return {
    summary: (server) => (server.enabled === false ? disabledState(server) : panelSummary(state, server)),
    reconnect: (name) => reconnect(ctx, state, name),
    toolsText: (name) => toolsReport(pi, state, name),
    lastErrorText: (name) => lastErrorLines(state, name).join("\n") || undefined,
    logText: (name) => (state.manager.serverLog(name)?.count ? serverStatusReport(state, name) : undefined),
    signIn: async (name) => {
      const server = state.servers.get(name);
      if (server) await startSignIn(ctx, state, server);
    },
    registry: () => registryUrl(state.config.settings),
    importable: () => importableHosts(state),
    addFromRegistry: () => runReported(ctx, "search", () => searchAndAdd(ctx, state)),
    addByCommand: async () => {
      const name = (await ctx.ui.input("Name of the new MCP server", "letters, digits, _ and -", { timeout: DIALOG_TIMEOUT_MS }))?.trim();
      if (!name) return;
      const target = await ctx.ui.input(`${name}: the command that starts it (with its arguments), or its URL`, "npx -y @scope/server", {
        timeout: DIALOG_TIMEOUT_MS,
      });
      if (target?.trim()) await runManageCommand(ctx, state, "add", [name, ...splitArguments(target)]);
    },
    importHost: (kind) => runManageCommand(ctx, state, "import", [kind]),
  };
}

async function startSignIn(ctx: ExtensionCommandContext, state: McpExtensionState, server: ServerDefinition): Promise<void> {
  let addressShown!: () => void;
  const shown = new Promise<void>((resolve) => (addressShown = resolve));
  const signingIn = signIn(state, server, addressShown);
  // With a UI the command ends once the address is shown, and the wait goes on in the background; print mode has
  // no later, so there it waits for the end (bounded by the sign-in's timeout).
  await (ctx.hasUI ? Promise.race([shown, signingIn]) : signingIn);
}

const AUTH_USAGE = "/mcp-auth <server> [--logout | --cancel | <address the browser ended up on>]";

function toolsReport(pi: ExtensionAPI, state: McpExtensionState, serverName: string | undefined): string {
  if (serverName && !state.servers.has(serverName))
    return `No MCP server named "${serverName}". Servers: ${[...state.servers.keys()].join(", ")}`;
  const active = new Set(pi.getActiveTools());
  const lines: string[] = [];
  // In the order /mcp status lists them.
  for (const server of state.servers.keys()) {
    const tools = state.tools.byServer.get(server);
    if (!tools || (serverName && server !== serverName)) continue;
    lines.push(`${server} (${tools.length} tools):`);
    for (const tool of tools) {
      const flag = state.directToolNames.has(tool.name) ? " [direct]" : active.has(tool.name) ? " [loaded]" : "";
      const asks = needsApproval(state, tool) ? " [asks first]" : "";
      lines.push(`  ${tool.name}${flag}${asks} — ${firstLine(tool.description)}`);
    }
  }
  return lines.length > 0 ? lines.join("\n") : "No MCP tools known yet.";
}

async function reconnect(ctx: ExtensionCommandContext, state: McpExtensionState, name: string | undefined): Promise<void> {
  if (name && !state.servers.has(name)) return showText(ctx, `No MCP server named "${name}".`);
  const targets = name ? [name] : [...state.servers.values()].filter((server) => server.enabled !== false).map((server) => server.name);
  const results = await Promise.all(
    targets.map((target) =>
      state.lifecycle.reconnect(target).then(
        () => `✓ ${target}: connected (${toolCount(state, target)})`,
        (error: unknown) => `✗ ${target}: ${firstLine(errorMessage(error))}`,
      ),
    ),
  );
  if (!state.shutDown) updateStatus(state);
  showText(ctx, results.join("\n") || "No MCP servers to reconnect.");
}

/**
 * The OAuth sign-in, start to finish: the URL shown (and the browser opened), the wait, then a reconnect that
 * brings the server's tools. Reports every outcome itself; never rejects.
 */
async function signIn(state: McpExtensionState, server: ServerDefinition, addressShown: () => void): Promise<void> {
  const { name } = server;
  const withoutSignIn = tokensWithoutSignIn(server);
  if (withoutSignIn) {
    state.ui.show(`MCP server "${name}" gets its tokens with ${withoutSignIn.how} (no sign-in); reconnecting.`);
    return reportReconnect(state, name, "Reconnected");
  }
  try {
    await state.manager.signIn(server, {
      openAuthorizationUrl: (url) => {
        const opened = openInBrowser(url);
        state.ui.show(
          `Sign in to MCP server "${name}" ${opened ? "in your browser; if no page opened, open" : "by opening"} this address:\n${url}\n` +
            `Waiting up to ${DEFAULT_SIGN_IN_TIMEOUT_MS / 60_000} minutes (/mcp-auth ${name} --cancel to stop). If the browser runs on ` +
            `another machine and ends on an address that does not load, give it to Pi: /mcp-auth ${name} <that address>`,
        );
        addressShown();
      },
    });
  } catch (error) {
    return state.ui.notify(errorMessage(error), "warning");
  }
  return reportReconnect(state, name, "Signed in");
}

async function reportReconnect(state: McpExtensionState, name: string, done: string): Promise<void> {
  if (state.shutDown) return;
  const report = await state.lifecycle.reconnect(name).then(
    () => ({ text: `${done}: MCP server "${name}" is connected (${toolCount(state, name)}).`, failed: false }),
    (error: unknown) => {
      const cause = error instanceof Error ? error.cause : undefined;
      // Signed in, and still refused: asking for another sign-in would go round in circles.
      const refused = cause instanceof NeedsAuthError && cause.signIn ? " The account may lack the permission it asks for." : "";
      return { text: `${done}, but MCP server "${name}" did not connect: ${firstLine(errorMessage(error))}${refused}`, failed: true };
    },
  );
  if (state.shutDown) return;
  updateStatus(state);
  if (report.failed) state.ui.notify(report.text, "warning");
  else state.ui.show(report.text);
}

async function signOut(ctx: ExtensionCommandContext, state: McpExtensionState, server: ServerDefinition): Promise<void> {
  const forgot = await state.manager.signOut(server);
  if (!state.shutDown) updateStatus(state);
  showText(
    ctx,
    forgot
      ? `Signed out of MCP server "${server.name}": its tokens and client registration are forgotten.`
      : `MCP server "${server.name}" was not signed in.`,
  );
}

function deliverCallback(ctx: ExtensionCommandContext, state: McpExtensionState, name: string, address: string): void {
  const delivered = state.manager.deliverSignInCallback(name, address);
  showText(ctx, delivered ? delivered.text : `No sign-in to "${name}" is waiting for its callback. Usage: ${AUTH_USAGE}`);
}

/** For servers that do not sign in: how to give them credentials. */
function authHelp(state: McpExtensionState, server: ServerDefinition): string {
  const live = state.manager.getState(server.name);
  const where = server.url ? safeUrl(server.url) : (server.command ?? "?");
  const lines = [`MCP server "${server.name}" (${where}): ${describeStatus(live.status)}`];
  if (!server.url) {
    lines.push("It runs as a local process: give it credentials through `env` in its config entry.");
  } else {
    lines.push(
      "Give it a bearer token in its config entry (file: " + server.source.path + "), one of:",
      '  "bearerTokenEnv": "MY_TOKEN_VARIABLE"      (the token is read from that environment variable)',
      '  "headers": { "Authorization": "Bearer ${MY_TOKEN_VARIABLE}" }',
      '  "bearerToken": "…"                          (stored in the file as plain text)',
      "then run /mcp reconnect " + server.name + `. To sign in with OAuth instead, remove the token and set "auth": "oauth".`,
    );
  }
  if (live.lastError) lines.push(`Last error: ${firstLine(live.lastError)}`);
  return lines.join("\n");
}

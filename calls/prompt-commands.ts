/**
 * MCP prompts as Pi commands: every prompt of every server is `/mcp__<server>__<prompt>` (names made like tool names
 * with the `mcp` prefix: provider-safe, collisions settled the same way). They are registered from the metadata cache
 * at startup, so a prompt works before its server ever started, and again whenever a server lists new ones (Pi looks
 * a command up when it runs, so one registered later works at once; the autocomplete list has it after a /reload).
 *
 * Typing one, Pi's autocomplete offers the values the server suggests for the argument being typed and the names of
 * those not typed yet (calls/command-arguments.ts). Running one: its arguments are read (positional in the prompt's
 * order, or `name=value`, quotes for spaces), a required one that is missing is asked for through Pi's UI (print
 * mode: reported), the server is connected if it is not (as a tool call does), `prompts/get` is sent, and the
 * messages it returns become the user's next message.
 * Pi has no way to take a command away: a prompt the server no longer lists says so when run. In print mode the
 * message a command sends would run only after the command, as `pi -p` exits: there the arguments are checked (a
 * missing one reported) and the user is told to run the prompt in interactive or RPC mode.
 */
import type { ExtensionAPI, ExtensionCommandContext } from "@mariozechner/pi-coding-agent";
import { errorMessage } from "../util/guards.ts";
import { type PiContent, transformPromptMessages } from "./content.ts";
import type { McpExtensionState } from "../state.ts";
import type { ToolView } from "../tool-view.ts";
import { allocateToolNames, toolKey } from "../tool-names.ts";
import type { McpPrompt, McpPromptArgument } from "../types.ts";
import { collapseWhitespace } from "../util/text.ts";
import { showText } from "../ui.ts";
import { askMissing, completeArguments, readArguments, serverSuggestions } from "./command-arguments.ts";

/** A prompt command's target. */
export interface PromptCommand {
  serverName: string;
  prompt: McpPrompt;
}

/** `/mcp__<server>__<prompt>` → its server and prompt, for every known prompt of every enabled server. */
export function promptCommands(view: Pick<ToolView, "inventories">): Map<string, PromptCommand> {
  const targets = new Map<string, PromptCommand>();
  const requests = [...view.inventories.values()].flatMap((inventory) =>
    (inventory.prompts ?? []).map((prompt) => ({ serverName: inventory.definition.name, originalName: prompt.name, prompt })),
  );
  // No reserved names: a command cannot shadow a tool, and the `mcp__` prefix keeps it clear of Pi's own commands.
  const { names } = allocateToolNames(requests, "mcp", new Set());
  for (const request of requests) {
    const name = names.get(toolKey(request.serverName, request.originalName));
    if (name) targets.set(name, { serverName: request.serverName, prompt: request.prompt });
  }
  return targets;
}

/** Registers a command per prompt with Pi (once per name) and runs them against the state current at the time. */
export class PromptCommandRegistry {
  private readonly pi: ExtensionAPI;
  private readonly currentState: () => McpExtensionState | undefined;
  private targets = new Map<string, PromptCommand>();
  private readonly registered = new Set<string>();

  constructor(pi: ExtensionAPI, currentState: () => McpExtensionState | undefined) {
    this.pi = pi;
    this.currentState = currentState;
  }

  /** Takes the view's prompts; commands for prompts not seen before are registered. Never throws. */
  update(view: Pick<ToolView, "inventories">): void {
    this.targets = promptCommands(view);
    for (const [name, target] of this.targets) {
      if (this.registered.has(name)) continue;
      try {
        this.pi.registerCommand(name, {
          description: describePrompt(target),
          getArgumentCompletions: (prefix) => this.completions(name, prefix),
          handler: (args, ctx) => this.run(name, args, ctx),
        });
        this.registered.add(name);
      } catch (error) {
        // A stale Pi (the session ended) refuses registrations: the next session registers it.
        console.error(`[mcp] could not register /${name}: ${errorMessage(error)}`);
      }
    }
  }

  /** The server's values for the argument being typed, and `name=` for each argument not typed yet. */
  private completions(name: string, prefix: string) {
    const target = this.targets.get(name);
    if (!target) return null;
    const { serverName, prompt } = target;
    return completeArguments(prompt.arguments ?? [], prefix, (argument, value, context) =>
      serverSuggestions(this.currentState(), serverName, {
        ref: { type: "ref/prompt", name: prompt.name },
        argument: { name: argument, value },
        context,
      }),
    );
  }

  private async run(name: string, args: string, ctx: ExtensionCommandContext): Promise<void> {
    const state = this.currentState();
    if (!state || state.shutDown) return showText(ctx, "MCP adapter: not running (no session yet).");
    const target = this.targets.get(name);
    if (!target) return showText(ctx, `/${name}: its MCP server no longer offers this prompt.`);
    const { serverName, prompt } = target;
    const parsed = readArguments(prompt.arguments ?? [], args);
    if ("error" in parsed) return showText(ctx, `/${name}: ${parsed.error}\n${usage(name, prompt)}`);
    const values = await askMissing(prompt, parsed.values, ctx);
    if ("error" in values) return showText(ctx, `/${name}: ${values.error}\n${usage(name, prompt)}`);
    // A message a command sends runs once the command is over, and print mode exits then: nobody would see an answer.
    if (!ctx.hasUI)
      return showText(ctx, `/${name}: print mode ends before the model could answer a prompt; run it in interactive or RPC mode.`);
    let content: PiContent[];
    try {
      // Connected (lazily, or again) right as the request goes out.
      const connect = () => state.lifecycle.ensureConnected(serverName);
      const result = await state.manager.getPrompt(serverName, prompt.name, values.values, { connect });
      content = transformPromptMessages(result, { serverName }).content;
    } catch (error) {
      return showText(ctx, `/${name}: MCP server "${serverName}" could not give prompt "${prompt.name}": ${errorMessage(error)}`);
    }
    if (state.shutDown) return;
    this.pi.sendUserMessage(content, ctx.isIdle() ? undefined : { deliverAs: "followUp" });
  }
}

/** `/mcp prompts [server]`: every prompt command, with its arguments. */
export function promptsReport(state: McpExtensionState, serverName: string | undefined): string {
  if (serverName && !state.servers.has(serverName))
    return `No MCP server named "${serverName}". Servers: ${[...state.servers.keys()].join(", ")}`;
  const byServer = new Map<string, string[]>();
  for (const [name, target] of promptCommands(state)) {
    if (serverName && target.serverName !== serverName) continue;
    const lines = byServer.get(target.serverName) ?? [];
    lines.push(
      `  /${name}${target.prompt.arguments?.map((arg) => ` ${argumentHint(arg)}`).join("") ?? ""}${firstLineAbout(target.prompt)}`,
    );
    byServer.set(target.serverName, lines);
  }
  const unknown = [...state.servers.values()].filter(
    (server) =>
      server.enabled !== false && (!serverName || server.name === serverName) && state.inventories.get(server.name)?.prompts === undefined,
  );
  const lines = [...byServer].flatMap(([server, prompts]) => [
    `${server} (${prompts.length} ${prompts.length === 1 ? "prompt" : "prompts"}):`,
    ...prompts,
  ]);
  if (unknown.length > 0) lines.push(`Prompts not known yet (not listed since): ${unknown.map((server) => server.name).join(", ")}`);
  return lines.length > 0 ? lines.join("\n") : "No MCP prompts.";
}

// ---------------------------------------------------------------------------------------------
// Text
// ---------------------------------------------------------------------------------------------

function describePrompt({ serverName, prompt }: PromptCommand): string {
  const args = prompt.arguments?.map(argumentHint).join(" ");
  const about = prompt.description ?? prompt.title ?? `prompt "${prompt.name}"`;
  return `MCP ${serverName}: ${collapseWhitespace(about)}${args ? ` · ${args}` : ""}`;
}

function argumentHint(arg: McpPromptArgument): string {
  return arg.required ? `<${arg.name}>` : `[${arg.name}]`;
}

function usage(name: string, prompt: McpPrompt): string {
  const args = prompt.arguments ?? [];
  if (args.length === 0) return `Usage: /${name}`;
  const details = args.map((arg) => `  ${arg.name}${arg.required ? " (required)" : ""}${arg.description ? `: ${arg.description}` : ""}`);
  return [`Usage: /${name} ${args.map(argumentHint).join(" ")}   (or name=value; quotes for spaces)`, ...details].join("\n");
}

/** " — " and the first line of what the prompt says about itself (uncut: `/mcp prompts` is read by people). */
function firstLineAbout(prompt: McpPrompt): string {
  const about = prompt.description ?? prompt.title;
  return about ? ` — ${about.split("\n")[0]}` : "";
}

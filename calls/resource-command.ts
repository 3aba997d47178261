/**
 * `/mcp-resource <resource> [variable=value …]`: reads an MCP resource into Pi's editor, where the user adds what
 * they want to ask about it and sends it (as an @-mention attaches a resource in other MCP clients). `<resource>` is
 * the name the model knows it by, `<server>__get_<name>` (`/mcp tools` lists them): a resource, or a resource
 * template whose variables are the arguments, read as a prompt command reads its arguments (calls/command-arguments.ts).
 *
 * This is where a template's variables are completed as they are typed: Pi's autocomplete offers the resources, then
 * the values the server suggests for the variable being typed (`completion/complete` on the template), the variables
 * already typed given as context. The read itself is the model's tool call (tool-executor.ts: the server connected if
 * it is not, `approveTools` asked, limits applied, a large result kept in a file the text names). Without a UI (print
 * mode) the text is printed instead.
 */
import type { ExtensionAPI, ExtensionCommandContext } from "@mariozechner/pi-coding-agent";
import { resourceUriOf } from "../tool-metadata.ts";
import { executeMcpTool } from "../tool-executor.ts";
import type { McpExtensionState } from "../state.ts";
import type { McpPromptArgument, ToolMetadata } from "../types.ts";
import { errorMessage, isJsonObject } from "../util/guards.ts";
import { showText } from "../ui.ts";
import { askMissing, type CompletionItem, completeArguments, readArguments, serverSuggestions } from "./command-arguments.ts";

const RESOURCE_COMMAND = "mcp-resource";
const USAGE = `/${RESOURCE_COMMAND} <server>__get_<name> [variable=value …]`;
/**
 * Pi's autocomplete list shows an item that has a description in two columns, the first at most 30 characters wide
 * (pi-tui's SelectList: 32, less a gap of 2, on every host), and cuts a longer label there: `everything__get_dynamic_text_r`.
 */
const PI_LABEL_COLUMN = 30;

export function registerResourceCommand(pi: ExtensionAPI, currentState: () => McpExtensionState | undefined, notRunning: string): void {
  pi.registerCommand(RESOURCE_COMMAND, {
    description: `Read an MCP resource into the editor (templates: their variables as arguments): ${USAGE}`,
    getArgumentCompletions: (prefix) => resourceCompletions(currentState(), prefix),
    handler: async (args, ctx) => {
      const state = currentState();
      if (!state || state.shutDown) return showText(ctx, notRunning);
      await readIntoEditor(state, args.trim(), ctx);
    },
  });
}

/** The resource tools (resources and templates) of the session, or those whose name starts with `prefix`. */
function resourceTools(state: McpExtensionState, prefix = ""): ToolMetadata[] {
  return [...state.tools.byName.values()].filter((tool) => isResourceTool(tool) && tool.name.startsWith(prefix));
}

function isResourceTool(tool: ToolMetadata): boolean {
  return tool.resourceUri !== undefined || tool.uriTemplate !== undefined;
}

/** A template's variables, in the template's order, as the tool's parameters declare them. */
function templateVariables(tool: ToolMetadata): McpPromptArgument[] {
  const { properties, required } = tool.inputSchema;
  const names = isJsonObject(properties) ? Object.keys(properties) : [];
  return names.map((name) => ({ name, required: Array.isArray(required) && required.includes(name) }));
}

/** First the resource, then (for a template) its variables and the server's values for them. */
async function resourceCompletions(state: McpExtensionState | undefined, prefix: string): Promise<CompletionItem[] | null> {
  if (!state || state.shutDown) return null;
  const space = prefix.search(/\s/);
  if (space < 0) {
    const items = resourceItems(resourceTools(state, prefix));
    return items.length > 0 ? items : null;
  }
  const name = prefix.slice(0, space);
  const tool = state.tools.byName.get(name);
  const uri = tool?.uriTemplate;
  if (!tool || !uri) return null;
  const head = prefix.slice(0, space + 1);
  const items = await completeArguments(templateVariables(tool), prefix.slice(space + 1), (variable, value, context) =>
    serverSuggestions(state, tool.serverName, { ref: { type: "ref/resource", uri }, argument: { name: variable, value }, context }),
  );
  return items?.map((item) => ({ ...item, value: head + item.value })) ?? null;
}

/**
 * The resources to pick from, each named whole: with its URI as the description while every name fits Pi's first
 * column; else the URI follows the names, padded to one width, in a label that has the row to itself (the row's end,
 * a URI's tail, is what the terminal's width cuts).
 */
function resourceItems(tools: readonly ToolMetadata[]): CompletionItem[] {
  const widest = Math.max(0, ...tools.map((tool) => tool.name.length));
  return tools.map((tool) => {
    // A template's variables come next: the space lets the user go on typing them.
    const value = tool.uriTemplate ? `${tool.name} ` : tool.name;
    const uri = tool.uriTemplate ?? tool.resourceUri ?? "";
    return widest <= PI_LABEL_COLUMN
      ? { value, label: tool.name, description: uri }
      : { value, label: `${tool.name.padEnd(widest)}  ${uri}` };
  });
}

async function readIntoEditor(state: McpExtensionState, args: string, ctx: ExtensionCommandContext): Promise<void> {
  const [name = ""] = args.split(/\s+/);
  const tool = state.tools.byName.get(name);
  if (!tool || !isResourceTool(tool)) {
    const known = resourceTools(state).map((resource) => resource.name);
    const which = name ? `"${name}" is no MCP resource. ` : "";
    return showText(ctx, `${which}Usage: ${USAGE}\nResources: ${known.join(", ") || "none known yet"}`);
  }
  const variables = { name: tool.name, arguments: templateVariables(tool) };
  const parsed = readArguments(variables.arguments, args.slice(name.length).trim());
  const values = "error" in parsed ? parsed : await askMissing(variables, parsed.values, ctx);
  if ("error" in values) return showText(ctx, `/${RESOURCE_COMMAND} ${tool.name}: ${values.error}`);
  let text: string;
  try {
    const uri = await resourceUriOf(tool, values.values);
    const result = await executeMcpTool(state, tool.name, values.values, undefined, undefined, ctx);
    const parts = result.content.map((block) => (block.type === "text" ? block.text : `[image: ${block.mimeType}, not pasted]`));
    text = [`[Resource: ${uri}]`, ...parts].join("\n");
  } catch (error) {
    return showText(ctx, `/${RESOURCE_COMMAND} ${tool.name}: ${errorMessage(error)}`);
  }
  if (state.shutDown) return;
  if (!ctx.hasUI) return showText(ctx, text);
  ctx.ui.pasteToEditor(text);
  ctx.ui.notify(`MCP resource ${tool.name} is in the editor: add your question and send it.`, "info");
}

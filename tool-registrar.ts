/**
 * Registration with Pi: an MCP tool becomes a Pi tool with its real (provider-safe) schema.
 *
 * Pi activates a tool the first time its name is registered, keeps the active state of a name registered again,
 * and shows a changed definition from the next run — on Pi 0.87 it also writes the whole changed definition into
 * the transcript. So a tool is registered again only when what the model would see changed.
 *
 * While extensions load, Pi takes registrations in one go; once the session is bound, every `registerTool` rebuilds
 * its whole tool registry and the active set's system prompt (both hosts; Pi has no call that registers many). One by
 * one, n tools cost n rebuilds of up to n tools: 4,000 tools of a server listed for the first time froze Pi for
 * seconds. So after binding (`registerWanted`) a tool is registered only when it is to be active (ToolSearch loaded
 * it, or it is direct), or to update one registered before; the others are known to the adapter (search, McpCall)
 * and reach Pi when they are loaded.
 */
import type {
  AgentToolResult,
  AgentToolUpdateCallback,
  ExtensionAPI,
  ExtensionContext,
  ToolDefinition,
} from "@mariozechner/pi-coding-agent";
import type { TSchema } from "typebox";
import { callToolResultSchema, reachNames, serverNamespace, type ToolExposure, type ToolExposureFields, type ToolReach } from "./host.ts";
import { serverAbout, type ToolView } from "./tool-view.ts";
import type { ToolMetadata } from "./types.ts";
import { getServerPrefix, PREFIX_SEPARATOR } from "./tool-names.ts";

export type McpToolRunner = (
  piName: string,
  params: unknown,
  signal: AbortSignal | undefined,
  onUpdate: AgentToolUpdateCallback<unknown> | undefined,
  /** The calling session's context: its UI asks for approvals. */
  ctx: ExtensionContext | undefined,
) => Promise<AgentToolResult<unknown>>;

/** Pi accepts a plain JSON Schema as `parameters` (it serialises exactly as given). */
export function jsonSchemaParameters(schema: Record<string, unknown>): TSchema {
  return schema as unknown as TSchema;
}

/** What a definition reads of the view: which tools are direct, each server's description and instructions. */
export type DefinitionView = Pick<ToolView, "directToolNames" | "inventories" | "servers">;

/**
 * The one place an MCP tool's exposure is decided (host/exposure.ts says what each means): a direct tool is declared
 * to the model from the start, every other one is deferred (loaded by ToolSearch, callable from codemode scripts).
 */
export function mcpToolExposure(tool: ToolMetadata, view: DefinitionView): ToolExposure {
  return view.directToolNames.has(tool.name) ? "direct" : "deferred";
}

/**
 * `scriptResults`: the host's codemode scripts call tools (Pi 1.x), so the tool declares what they resolve to (the
 * `CallToolResult`, host/call-result-schema.ts) and its runner returns it as `structuredContent`.
 */
export function mcpToolDefinition(tool: ToolMetadata, run: McpToolRunner, view: DefinitionView, scriptResults: boolean): ToolDefinition {
  const exposure: ToolExposureFields = {
    exposure: mcpToolExposure(tool, view),
    namespace: serverNamespace(tool.serverName, serverAbout(view, tool.serverName)),
    ...(scriptResults ? { outputSchema: callToolResultSchema(tool.outputSchema) } : {}),
  };
  return {
    name: tool.name,
    label: `${tool.serverName}: ${tool.originalName}`,
    description: tool.description || `${tool.originalName} (MCP server ${tool.serverName})`,
    parameters: jsonSchemaParameters(tool.inputSchema),
    execute: (_toolCallId, params, signal, onUpdate, ctx) => run(tool.name, params, signal, onUpdate, ctx),
    ...exposure,
  };
}

/**
 * What a call of a tool that reaches other tools (a `codemode` script) may call among the MCP tools: their names,
 * and whether it may reach a server whose tools are not known yet (then they are waited for, boundedly).
 */
export function reachedBy(
  reach: ToolReach,
  view: Pick<ToolView, "config" | "servers" | "inventories" | "tools">,
): { tools: string[]; unknownServer: boolean } {
  const prefixOf = (server: string) => {
    const mode = view.servers.get(server)?.toolPrefix ?? view.config.settings.toolPrefix ?? "server";
    return mode === "none" ? undefined : `${getServerPrefix(server, mode)}${PREFIX_SEPARATOR}`;
  };
  const tools = [...view.tools.byName.values()]
    .filter((tool) => reachNames(reach, tool.name, prefixOf(tool.serverName)))
    .map((tool) => tool.name);
  const unknownServer = [...view.servers.values()].some(
    (server) =>
      server.enabled !== false &&
      !view.inventories.has(server.name) &&
      (reach === "all" || reachNames(reach, "", prefixOf(server.name) ?? server.name)),
  );
  return { tools, unknownServer };
}

/** How a tool no longer offered is registered again where scripts could still call it (host/exposure.ts). */
const WITHDRAWN: ToolExposureFields = { exposure: "hidden" };

export class ToolRegistrar {
  private readonly pi: ExtensionAPI;
  /** The host's scripts can call registered tools (Pi 1.x codemode): tools no longer offered are withdrawn. */
  private readonly withdrawsTools: boolean;
  /** What each name was last registered with. */
  private readonly registered = new Map<string, ToolDefinition & ToolExposureFields>();

  constructor(pi: ExtensionAPI, withdrawsTools: boolean) {
    this.pi = pi;
    this.withdrawsTools = withdrawsTools;
  }

  /** Registers the new and changed definitions; returns the names registered for the first time (Pi activated them). */
  register(definitions: Iterable<ToolDefinition>): string[] {
    const added: string[] = [];
    for (const definition of definitions) {
      const previous = this.registered.get(definition.name);
      // Compared only when a name comes again: a first registration of a thousand tools costs no serialising.
      if (previous && fingerprintOf(previous) === fingerprintOf(definition)) continue;
      this.pi.registerTool(definition);
      this.registered.set(definition.name, definition);
      if (!previous) added.push(definition.name);
    }
    return added;
  }

  /**
   * After binding: the definitions of names registered before (updated if changed), and of the `wanted` names.
   * `definitions` is every tool offered now: a name registered before that it lacks is withdrawn.
   */
  registerWanted(definitions: Iterable<ToolDefinition>, wanted: ReadonlySet<string>): string[] {
    const offered = [...definitions];
    const chosen = offered.filter((definition) => wanted.has(definition.name) || this.registered.has(definition.name));
    const added = this.register(chosen);
    if (this.withdrawsTools) this.withdrawAllBut(new Set(offered.map((definition) => definition.name)));
    return added;
  }

  /** Pi cannot unregister a tool: one no longer offered is registered again as unreachable. */
  private withdrawAllBut(offered: ReadonlySet<string>): void {
    const gone = [...this.registered.values()].filter(
      (definition) => !offered.has(definition.name) && definition.exposure !== WITHDRAWN.exposure,
    );
    this.register(gone.map((definition) => ({ ...definition, ...WITHDRAWN })));
  }

  isRegistered(name: string): boolean {
    return this.registered.has(name);
  }

  registeredNames(): string[] {
    return [...this.registered.keys()];
  }
}

function fingerprintOf(definition: ToolDefinition & ToolExposureFields): string {
  const { label, description, parameters, exposure, namespace, outputSchema } = definition;
  return JSON.stringify([label, description, parameters, exposure, namespace, outputSchema]);
}

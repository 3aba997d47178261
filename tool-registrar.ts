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
import type { AgentToolResult, AgentToolUpdateCallback, ExtensionAPI, ExtensionContext, ToolDefinition } from "@mariozechner/pi-coding-agent";
import type { TSchema } from "typebox";
import type { ToolMetadata } from "./types.ts";

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

export function mcpToolDefinition(tool: ToolMetadata, run: McpToolRunner): ToolDefinition {
  return {
    name: tool.name,
    label: `${tool.serverName}: ${tool.originalName}`,
    description: tool.description || `${tool.originalName} (MCP server ${tool.serverName})`,
    parameters: jsonSchemaParameters(tool.inputSchema),
    execute: (_toolCallId, params, signal, onUpdate, ctx) => run(tool.name, params, signal, onUpdate, ctx),
  };
}

export class ToolRegistrar {
  private readonly pi: ExtensionAPI;
  /** What each name was last registered with. */
  private readonly registered = new Map<string, ToolDefinition>();

  constructor(pi: ExtensionAPI) {
    this.pi = pi;
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

  /** After binding: the definitions of names registered before (updated if changed), and of the `wanted` names. */
  registerWanted(definitions: Iterable<ToolDefinition>, wanted: ReadonlySet<string>): string[] {
    const chosen = [...definitions].filter((definition) => wanted.has(definition.name) || this.registered.has(definition.name));
    return this.register(chosen);
  }

  isRegistered(name: string): boolean {
    return this.registered.has(name);
  }

  registeredNames(): string[] {
    return [...this.registered.keys()];
  }
}

function fingerprintOf(definition: ToolDefinition): string {
  return JSON.stringify([definition.label, definition.description, definition.parameters]);
}

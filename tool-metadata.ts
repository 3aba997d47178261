/**
 * Builds the tools the model sees (`ToolMetadata`) from every server's tools and resources at once: names are
 * allocated globally because they collide across servers (toolPrefix `none`/`short`), schemas are made safe for
 * every provider, and `includeTools` / `excludeTools` are applied (tools/filters.ts), as is a `hidden` exposure
 * (tools/exposure.ts): a tool left out is never registered, found or called. A server's own `toolPrefix` wins over
 * the setting.
 */
import { offeredToModel } from "./apps.ts";
import { toProviderSafeSchema } from "./tools/json-schema.ts";
import {
  resourceToolDescription,
  resourceToolName,
  templateParameters,
  templateToolDescription,
  upstreamResourceToolName,
  isViewResource,
} from "./tools/resource-tools.ts";
import { isToolFilteredOut, type ToolFilter } from "./tools/filters.ts";
import { configuredExposure, type ExposureRules } from "./tools/exposure.ts";
import type {
  McpPrompt,
  McpResource,
  McpResourceTemplate,
  McpTool,
  ServerDefinition,
  SkillEntry,
  ToolMetadata,
  ToolPrefixMode,
} from "./types.ts";
import { allocateToolNames, formatToolName, shortHash, type ToolNameConflict, type ToolNameRequest, toolKey } from "./tool-names.ts";
import { errorMessage, isJsonObject } from "./util/guards.ts";

const SKILL_URI_SCHEME = "skill://";

/** Name patterns, for the other areas that match tools by them (approvals). */
export { matchesAnyPattern, patternNames } from "./tools/filters.ts";
/** A schema every provider accepts, for the other areas that hand a server's tools to a model (sampling with tools). */
export { toProviderSafeSchema } from "./tools/json-schema.ts";
/** A tool's exposure as the config names it (Pi 1.x's `exposure` / `toolExposure`), for the areas that register tools. */
export { configuredExposure, type ExposureRules } from "./tools/exposure.ts";
export { resourceUriOf } from "./tools/resource-tools.ts";

/** One server's tools and resources (and what else it offers), live or from the metadata cache. */
export interface ServerInventory {
  definition: ServerDefinition;
  tools: readonly McpTool[];
  resources: readonly McpResource[];
  resourceTemplates?: readonly McpResourceTemplate[];
  /** Unset when not known yet (a server last listed by an adapter that did not read prompts). */
  prompts?: readonly McpPrompt[];
  instructions?: string;
  /** Its Agent Skills, as last listed. */
  skills?: readonly SkillEntry[];
  /** The schemas went through `toProviderSafeSchema` already (cache entries do): not converted again. */
  schemasProviderSafe?: boolean;
}

export interface ToolMetadataSettings {
  toolPrefix?: ToolPrefixMode;
}

/** A tool or resource left out because the server sent something unusable. */
export interface SkippedTool {
  serverName: string;
  name: string;
  reason: string;
}

export interface ToolMetadataIndex {
  /** Every inventory's server, in inventory order (an empty list when all its tools are filtered out). */
  byServer: Map<string, ToolMetadata[]>;
  /** Pi tool name → metadata. */
  byName: Map<string, ToolMetadata>;
  /** Names that could not be had (builtin, reserved, duplicate): the loser got a hashed name. */
  conflicts: ToolNameConflict[];
  skipped: SkippedTool[];
}

/** A tool or resource that will ask for a name; `requestName` is unique within its server. */
interface Candidate {
  serverName: string;
  requestName: string;
  /** Names `includeTools` / `excludeTools` may use for it, besides the Pi name it is given. */
  filterNames: string[];
  /** The name `toolExposure` keys match: the server's name for the tool (a resource's name). */
  exposureName: string;
  filter: ToolFilter & ExposureRules;
  /** The server's own `toolPrefix`, when it has one. */
  mode: ToolPrefixMode | undefined;
  build(piName: string): ToolMetadata;
}

/**
 * Resources are exposed as tools unless the server says `exposeResources: false` (the default is `true`:
 * docs/configuration.md, "Server fields").
 */
export function buildToolMetadata(inventories: readonly ServerInventory[], settings: ToolMetadataSettings = {}): ToolMetadataIndex {
  const mode = settings.toolPrefix ?? "server";
  const skipped: SkippedTool[] = [];
  const byServer = new Map<string, ToolMetadata[]>();
  const candidates: Candidate[] = [];
  for (const inventory of inventories) {
    const serverName = inventory.definition.name;
    if (byServer.has(serverName)) {
      skipped.push({ serverName, name: "*", reason: "the server appears twice; its first catalog is used" });
      continue;
    }
    byServer.set(serverName, []);
    candidates.push(...collectCandidates(inventory, skipped).filter((candidate) => !isFilteredOutBeforeAllocation(candidate, mode)));
  }

  const allocation = allocateToolNames(candidates.map(toRequest), mode);
  const excludedKeys = new Set<string>();
  const byName = new Map<string, ToolMetadata>();
  for (const candidate of candidates) {
    const key = toolKey(candidate.serverName, candidate.requestName);
    const piName = allocation.names.get(key) as string;
    // Someone may exclude a tool by the hashed name it was given after a conflict.
    if (isLeftOut(candidate, piName)) {
      excludedKeys.add(key);
      continue;
    }
    const metadata = candidate.build(piName);
    byServer.get(candidate.serverName)?.push(metadata);
    byName.set(piName, metadata);
  }
  const conflicts = allocation.conflicts.filter((c) => !excludedKeys.has(toolKey(c.serverName, c.originalName)));
  return { byServer, byName, conflicts, skipped };
}

/** Filtered-out tools take no part in name allocation, so they cannot push another tool to a hashed name. */
function isFilteredOutBeforeAllocation(candidate: Candidate, mode: ToolPrefixMode): boolean {
  return isLeftOut(candidate, formatToolName(candidate.requestName, candidate.serverName, candidate.mode ?? mode));
}

function isLeftOut(candidate: Candidate, piName: string): boolean {
  if (configuredExposure(candidate.filter, candidate.exposureName) === "hidden") return true;
  return isToolFilteredOut(candidate.filter, candidate.serverName, [...candidate.filterNames, piName]);
}

function toRequest(candidate: Candidate): ToolNameRequest {
  const request: ToolNameRequest = { serverName: candidate.serverName, originalName: candidate.requestName };
  if (candidate.mode) request.mode = candidate.mode;
  return request;
}

function collectCandidates(inventory: ServerInventory, skipped: SkippedTool[]): Candidate[] {
  const serverName = inventory.definition.name;
  const taken = new Set<string>();
  const candidates: Candidate[] = [];
  for (const tool of inventory.tools) {
    const name = isJsonObject(tool) && typeof tool.name === "string" ? tool.name : undefined;
    if (name === undefined) {
      skipped.push({ serverName, name: "?", reason: "tool without a name" });
      continue;
    }
    if (taken.has(name)) {
      skipped.push({ serverName, name, reason: "the server lists this tool name twice; the first is used" });
      continue;
    }
    taken.add(name);
    // A tool only its view may call (MCP Apps visibility ["app"]) is never the model's: the view finds it in the inventory.
    if (!offeredToModel(tool.ui)) continue;
    candidates.push(toolCandidate(inventory.definition, tool, inventory.schemasProviderSafe === true));
  }
  if (inventory.definition.exposeResources === false) return candidates;
  for (const resource of inventory.resources) {
    if (!isJsonObject(resource) || typeof resource.uri !== "string" || typeof resource.name !== "string") {
      skipped.push({ serverName, name: "?", reason: "resource without a uri or name" });
      continue;
    }
    if (isSkillFile(resource.uri) || isViewResource(resource.uri, resource.mimeType)) continue;
    // A resource may want the name of a real tool or of another resource: its URI tells them apart.
    let requestName = resourceToolName(resource);
    if (taken.has(requestName)) requestName = `${requestName}_${shortHash(resource.uri)}`;
    if (taken.has(requestName)) {
      skipped.push({ serverName, name: resource.name, reason: `the server lists resource ${resource.uri} twice` });
      continue;
    }
    taken.add(requestName);
    candidates.push(resourceCandidate(inventory.definition, resource, requestName));
  }
  for (const template of inventory.resourceTemplates ?? []) {
    if (isSkillFile(template.uriTemplate) || isViewResource(template.uriTemplate, template.mimeType)) continue;
    const candidate = templateCandidate(inventory.definition, template, taken, skipped);
    if (candidate) candidates.push(candidate);
  }
  return candidates;
}

/**
 * A skill's file (`skill://…`, the MCP Skills extension) is no tool: it reaches the model as a skill (skills/), only
 * once verified against the server's listing. The SDK's servers also list the template `skill://{+path}`.
 */
function isSkillFile(uri: unknown): boolean {
  return typeof uri === "string" && uri.startsWith(SKILL_URI_SCHEME);
}

/** A template's tool is named like a resource's (`get_<name>`); one that cannot be read is skipped with why. */
function templateCandidate(
  definition: ServerDefinition,
  template: McpResourceTemplate,
  taken: Set<string>,
  skipped: SkippedTool[],
): Candidate | undefined {
  const serverName = definition.name;
  let inputSchema: Record<string, unknown>;
  try {
    inputSchema = templateParameters(template);
  } catch (error) {
    skipped.push({
      serverName,
      name: template.name,
      reason: `resource template ${template.uriTemplate} cannot be read: ${errorMessage(error)}`,
    });
    return undefined;
  }
  let requestName = resourceToolName({ name: template.name, uri: template.uriTemplate });
  if (taken.has(requestName)) requestName = `${requestName}_${shortHash(template.uriTemplate)}`;
  if (taken.has(requestName)) {
    skipped.push({ serverName, name: template.name, reason: `the server lists resource template ${template.uriTemplate} twice` });
    return undefined;
  }
  taken.add(requestName);
  const read = {
    name: template.name,
    description: templateToolDescription(template),
    inputSchema,
    target: { uriTemplate: template.uriTemplate },
  };
  return readCandidate(definition, requestName, read);
}

function toolCandidate(definition: ServerDefinition, tool: McpTool, schemaIsSafe: boolean): Candidate {
  const serverName = definition.name;
  return {
    serverName,
    requestName: tool.name,
    filterNames: [tool.name],
    exposureName: tool.name,
    filter: definition,
    mode: definition.toolPrefix,
    build: (piName) => ({
      name: piName,
      serverName,
      originalName: tool.name,
      description: textOr(tool.description, textOr(tool.title, "")),
      inputSchema: schemaIsSafe ? (tool.inputSchema as Record<string, unknown>) : toProviderSafeSchema(tool.inputSchema),
      ...(tool.outputSchema ? { outputSchema: tool.outputSchema } : {}),
      ...(tool.taskSupport ? { taskSupport: tool.taskSupport } : {}),
      ...(tool.ui?.resourceUri ? { viewUri: tool.ui.resourceUri } : {}),
    }),
  };
}

function resourceCandidate(definition: ServerDefinition, resource: McpResource, requestName: string): Candidate {
  const inputSchema = { type: "object", properties: {} };
  return readCandidate(definition, requestName, {
    name: resource.name,
    description: resourceToolDescription(resource),
    inputSchema,
    target: { resourceUri: resource.uri },
  });
}

/** A tool that reads a resource: a fixed one (`resourceUri`) or one made from a template and the call's arguments. */
interface ReadTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  target: Pick<ToolMetadata, "resourceUri" | "uriTemplate">;
}

function readCandidate(definition: ServerDefinition, requestName: string, read: ReadTool): Candidate {
  const serverName = definition.name;
  return {
    serverName,
    requestName,
    filterNames: [requestName, upstreamResourceToolName(requestName), read.name],
    exposureName: read.name,
    filter: definition,
    mode: definition.toolPrefix,
    build: (piName) => ({
      name: piName,
      serverName,
      originalName: read.name,
      description: read.description,
      inputSchema: read.inputSchema,
      ...read.target,
    }),
  };
}

function textOr(value: unknown, fallback: string): string {
  return typeof value === "string" && value.trim() !== "" ? value : fallback;
}

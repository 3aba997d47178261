/**
 * What the metadata cache keeps of a server (metadata-cache.ts stores it): the entry made from a listing, only what
 * the adapter uses of it, and an entry read back from the file, where everything is untrusted (a malformed part costs
 * itself or its server's entry, never the file). The server's identity is a hash of the config fields that decide
 * what it offers: never the config itself (it may hold secrets).
 */
import { createHash } from "node:crypto";
import { keptToolUi } from "../apps.ts";
import type { ListsFreshUntil, ProtocolVerdict } from "../server-manager.ts";
import { toProviderSafeSchema } from "./json-schema.ts";
import {
  keptSkillEntry,
  type McpPrompt,
  type McpPromptArgument,
  type McpResource,
  type McpResourceTemplate,
  type McpTool,
  type ServerEntry,
  type SkillEntry,
  taskSupportOf,
} from "../types.ts";
import { isJsonObject } from "../util/guards.ts";
import { compareStrings, truncate } from "../util/text.ts";

/** A server's `instructions` are kept (and shown to the model) up to this length. */
export const MAX_INSTRUCTIONS_CHARS = 1_000;

export interface CachedServerEntry {
  configHash: string;
  tools: McpTool[];
  resources: McpResource[];
  resourceTemplates?: McpResourceTemplate[];
  /** Unset in an entry of a version-2 file: the server's prompts are not known yet. */
  prompts?: McpPrompt[];
  /** The server's `instructions`, cut to `MAX_INSTRUCTIONS_CHARS`. */
  instructions?: string;
  /** The protocol it spoke at that connection: the next connect starts from it (connection/era.ts). */
  protocol?: ProtocolVerdict;
  /** Until when (epoch ms) each list is valid, as the server said (`ttlMs`): a connect before then does not ask again. */
  freshUntil?: ListsFreshUntil;
  /** Its Agent Skills (MCP Skills extension): Pi learns them from here, no server starts for that. Unset: none. */
  skills?: SkillEntry[];
  cachedAt: number;
}

/** What a listing learned of a server besides its tools and resources. */
export interface ServerExtras {
  resourceTemplates: readonly McpResourceTemplate[];
  prompts: readonly McpPrompt[];
  instructions: string | undefined;
  protocol?: ProtocolVerdict;
  freshUntil?: ListsFreshUntil;
  skills?: readonly SkillEntry[];
}

/** The fields that decide what a server offers; behaviour-only fields (lifecycle, timeouts...) are left out. */
const IDENTITY_FIELDS = [
  "command",
  "args",
  "env",
  "cwd",
  "url",
  "headers",
  "transport",
  "auth",
  "bearerToken",
  "bearerTokenEnv",
  "exposeResources",
  "excludeTools",
  // Declaring MCP Apps or not may change the tools a server lists (a view-less variant).
  "apps",
] as const satisfies readonly (keyof ServerEntry)[];

export function computeServerHash(def: ServerEntry): string {
  const identity: Record<string, unknown> = {};
  for (const field of IDENTITY_FIELDS) {
    if (def[field] !== undefined) identity[field] = def[field];
  }
  return createHash("sha256").update(stableStringify(identity)).digest("hex");
}

/** JSON with object keys sorted at every level, so equal configs hash equally whatever their key order. */
function stableStringify(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => compareStrings(a, b));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${stableStringify(item)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/**
 * A fresh entry for a server just listed: only what the adapter uses of each tool and resource, schemas made
 * provider-safe once here rather than at every start.
 */
export function createCacheEntry(
  def: ServerEntry,
  tools: readonly McpTool[],
  resources: readonly McpResource[],
  now = Date.now(),
  extras: ServerExtras = { resourceTemplates: [], prompts: [], instructions: undefined },
): CachedServerEntry {
  const safeTools = tools.map((tool) => ({ ...pickTool(tool), inputSchema: toProviderSafeSchema(tool.inputSchema) }));
  const entry: CachedServerEntry = {
    configHash: computeServerHash(def),
    tools: safeTools,
    resources: resources.map(pickResource),
    resourceTemplates: extras.resourceTemplates.map(pickTemplate),
    prompts: extras.prompts.map(pickPrompt),
    cachedAt: now,
  };
  const instructions = boundedInstructions(extras.instructions);
  if (instructions) entry.instructions = instructions;
  if (extras.protocol) entry.protocol = extras.protocol;
  if (extras.freshUntil && Object.keys(extras.freshUntil).length > 0) entry.freshUntil = { ...extras.freshUntil };
  if (extras.skills && extras.skills.length > 0) entry.skills = extras.skills.map(keptSkillEntry);
  return entry;
}

/** Trimmed, and cut at `MAX_INSTRUCTIONS_CHARS` (a server may send pages of them). */
function boundedInstructions(text: string | undefined): string | undefined {
  const trimmed = text?.trim();
  if (!trimmed) return undefined;
  return truncate(trimmed, MAX_INSTRUCTIONS_CHARS);
}

export function parseEntry(raw: unknown): CachedServerEntry | undefined {
  if (!isJsonObject(raw) || typeof raw.configHash !== "string" || !Number.isFinite(raw.cachedAt)) return undefined;
  if (!Array.isArray(raw.tools) || !raw.tools.every((tool) => isJsonObject(tool) && typeof tool.name === "string")) return undefined;
  const resources = raw.resources ?? [];
  if (!Array.isArray(resources) || !resources.every(isValidResource)) return undefined;
  const templates = raw.resourceTemplates ?? [];
  if (!Array.isArray(templates) || !templates.every(isValidTemplate)) return undefined;
  if (raw.prompts !== undefined && !(Array.isArray(raw.prompts) && raw.prompts.every(isValidPrompt))) return undefined;
  if (raw.instructions !== undefined && typeof raw.instructions !== "string") return undefined;
  if (raw.protocol !== undefined && !isProtocolVerdict(raw.protocol)) return undefined;
  if (raw.freshUntil !== undefined && !isFreshUntil(raw.freshUntil)) return undefined;
  const entry: CachedServerEntry = {
    configHash: raw.configHash,
    tools: raw.tools.map(pickTool),
    resources: resources.map(pickResource),
    cachedAt: raw.cachedAt as number,
  };
  if (raw.resourceTemplates !== undefined) entry.resourceTemplates = templates.map(pickTemplate);
  if (raw.prompts !== undefined) entry.prompts = raw.prompts.map(pickPrompt);
  const instructions = boundedInstructions(raw.instructions as string | undefined);
  if (instructions) entry.instructions = instructions;
  if (raw.protocol !== undefined) entry.protocol = raw.protocol as ProtocolVerdict;
  if (raw.freshUntil !== undefined) entry.freshUntil = raw.freshUntil as ListsFreshUntil;
  // A malformed skill costs only itself.
  const skills = Array.isArray(raw.skills) ? raw.skills.filter(isValidSkill).map(keptSkillEntry) : [];
  if (skills.length > 0) entry.skills = skills;
  return entry;
}

function isValidSkill(value: unknown): value is SkillEntry {
  if (!isJsonObject(value) || typeof value.uri !== "string" || !isJsonObject(value.frontmatter)) return false;
  const { name, description } = value.frontmatter;
  if (typeof name !== "string" || typeof description !== "string") return false;
  const files = value.resources;
  return (
    files === "dynamic" ||
    (Array.isArray(files) &&
      files.every(
        (file) => isJsonObject(file) && typeof file.uri === "string" && typeof file.digest === "string" && Number.isFinite(file.size),
      ))
  );
}

function isFreshUntil(value: unknown): boolean {
  return (
    isJsonObject(value) &&
    Object.entries(value).every(([list, until]) => ["tools", "resources", "prompts"].includes(list) && Number.isFinite(until))
  );
}

/** A verdict as connection/era.ts keeps it; a modern one with its `server/discover` answer (the SDK checks the rest). */
function isProtocolVerdict(value: unknown): boolean {
  if (!isJsonObject(value) || typeof value.version !== "string" || !Number.isFinite(value.checkedAt)) return false;
  if (value.era === "legacy") return true;
  return value.era === "modern" && isJsonObject(value.discover) && Array.isArray(value.discover.supportedVersions);
}

function isValidTemplate(value: unknown): value is McpResourceTemplate {
  return isJsonObject(value) && typeof value.uriTemplate === "string" && typeof value.name === "string";
}

function isValidPrompt(value: unknown): value is McpPrompt {
  if (!isJsonObject(value) || typeof value.name !== "string") return false;
  const args = value.arguments ?? [];
  return Array.isArray(args) && args.every((arg) => isJsonObject(arg) && typeof arg.name === "string");
}

function pickTemplate(template: McpResourceTemplate): McpResourceTemplate {
  const picked: McpResourceTemplate = { uriTemplate: template.uriTemplate, name: template.name };
  if (typeof template.description === "string") picked.description = template.description;
  if (typeof template.mimeType === "string") picked.mimeType = template.mimeType;
  return picked;
}

function pickPrompt(prompt: McpPrompt): McpPrompt {
  const picked: McpPrompt = { name: prompt.name };
  if (typeof prompt.title === "string") picked.title = prompt.title;
  if (typeof prompt.description === "string") picked.description = prompt.description;
  picked.arguments = (prompt.arguments ?? []).map((arg) => {
    const kept: McpPromptArgument = { name: arg.name };
    if (typeof arg.description === "string") kept.description = arg.description;
    if (arg.required === true) kept.required = true;
    return kept;
  });
  return picked;
}

function isValidResource(value: unknown): value is McpResource {
  return isJsonObject(value) && typeof value.uri === "string" && typeof value.name === "string";
}

function pickTool(tool: McpTool): McpTool {
  const picked: McpTool = { name: tool.name };
  if (typeof tool.title === "string") picked.title = tool.title;
  if (typeof tool.description === "string") picked.description = tool.description;
  if (tool.inputSchema !== undefined) picked.inputSchema = tool.inputSchema;
  if (isJsonObject(tool.outputSchema)) picked.outputSchema = tool.outputSchema;
  Object.assign(picked, taskSupportOf(tool.taskSupport));
  const ui = keptToolUi(tool.ui);
  if (ui) picked.ui = ui;
  return picked;
}

function pickResource(resource: McpResource): McpResource {
  const picked: McpResource = { uri: resource.uri, name: resource.name };
  if (typeof resource.description === "string") picked.description = resource.description;
  if (typeof resource.mimeType === "string") picked.mimeType = resource.mimeType;
  return picked;
}

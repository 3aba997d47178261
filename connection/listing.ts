/**
 * Reads a server's tools, resources, resource templates and prompts, page by page, without letting one malformed entry hide the rest.
 *
 * Why not `client.listTools()`: the SDK validates the whole answer and rejects it when a single tool's
 * `inputSchema` lacks `"type": "object"` (real servers send that), which would hide every tool of the server.
 * Here the answer is only required to be an object; each entry is checked on its own, an entry without a usable
 * name is dropped with a note, and schemas are passed on as sent (tools/json-schema.ts makes them provider-safe).
 * A 2026-07-28 server says how long its list stays fresh (`ttlMs`) and whom it may be shown to (`cacheScope`):
 * the first page's hints come back with the items (the metadata cache keeps them).
 */
import type { Client, RequestOptions, StandardSchemaV1 } from "@modelcontextprotocol/client";
import { readToolUi } from "../apps.ts";
import {
  type McpPrompt,
  type McpPromptArgument,
  type McpResource,
  type McpResourceTemplate,
  type McpTool,
  taskSupportOf,
} from "../types.ts";
import { isJsonObject } from "../util/guards.ts";

/** A server that keeps handing out cursors must not keep us listing forever. */
export const MAX_LIST_PAGES = 100;
/**
 * Resources kept per server (each becomes a tool): a server that lists thousands (files, rows, log entries) would
 * fill the catalog and search with them. The first ones listed are kept; `/mcp status` says how many were left out.
 */
export const MAX_RESOURCES_PER_SERVER = 200;

/** A list's cache hints (MCP 2026-07-28, SEP-2549): absent from a 2025-era server. */
export interface CacheHints {
  /** How long the list may be used without asking again; 0: not at all. */
  ttlMs?: number;
  /** `private`: it depends on who asks (the sign-in), so it must not be shown to anyone else. */
  cacheScope?: "public" | "private";
}

export interface Listing<T> extends CacheHints {
  items: T[];
  /** What was dropped or cut short, for `/mcp status` and logs. */
  problems: string[];
}

export async function listTools(client: Client, options?: RequestOptions): Promise<Listing<McpTool>> {
  const { entries, problems, hints } = await listAllPages(client, "tools/list", "tools", options);
  const tools: McpTool[] = [];
  const seen = new Set<string>();
  for (const [index, entry] of entries.entries()) {
    const name = isJsonObject(entry) ? nonEmptyString(entry.name) : undefined;
    if (!name) {
      problems.push(`tools/list entry #${index + 1} has no name; dropped`);
      continue;
    }
    if (seen.has(name)) {
      problems.push(`tools/list names "${name}" twice; kept the first`);
      continue;
    }
    seen.add(name);
    const tool = entry as Record<string, unknown>;
    const annotations = isJsonObject(tool.annotations) ? tool.annotations : {};
    const { ui, problem } = readToolUi(name, tool._meta);
    if (problem) problems.push(problem);
    tools.push({
      name,
      title: nonEmptyString(tool.title) ?? nonEmptyString(annotations.title),
      description: nonEmptyString(tool.description),
      inputSchema: tool.inputSchema,
      ...(isJsonObject(tool.outputSchema) ? { outputSchema: tool.outputSchema } : {}),
      ...taskSupportOf(isJsonObject(tool.execution) ? tool.execution.taskSupport : undefined),
      ...(ui ? { ui } : {}),
    });
  }
  return { items: tools, problems, ...hints };
}

export async function listResources(client: Client, options?: RequestOptions): Promise<Listing<McpResource>> {
  const { entries, problems, hints } = await listAllPages(client, "resources/list", "resources", options);
  const items = readAddressed(entries, "uri", "resources/list", problems).map(({ address, ...rest }) => ({ uri: address, ...rest }));
  if (items.length > MAX_RESOURCES_PER_SERVER) {
    problems.push(
      `${items.length - MAX_RESOURCES_PER_SERVER} of ${items.length} resources left out: at most ${MAX_RESOURCES_PER_SERVER} per server become tools`,
    );
  }
  return { items: items.slice(0, MAX_RESOURCES_PER_SERVER), problems, ...hints };
}

export async function listResourceTemplates(client: Client, options?: RequestOptions): Promise<Listing<McpResourceTemplate>> {
  const { entries, problems, hints } = await listAllPages(client, "resources/templates/list", "resourceTemplates", options);
  const items = readAddressed(entries, "uriTemplate", "resources/templates/list", problems).map(({ address, ...rest }) => ({
    uriTemplate: address,
    ...rest,
  }));
  return { items, problems, ...hints };
}

/** Resources and resource templates: an entry without its address (`key`) is dropped; its name defaults to the address. */
function readAddressed(
  entries: readonly unknown[],
  key: "uri" | "uriTemplate",
  method: string,
  problems: string[],
): (Omit<McpResource, "uri"> & { address: string })[] {
  const read: (Omit<McpResource, "uri"> & { address: string })[] = [];
  for (const [index, entry] of entries.entries()) {
    const address = isJsonObject(entry) ? nonEmptyString(entry[key]) : undefined;
    if (!address) {
      problems.push(`${method} entry #${index + 1} has no ${key}; dropped`);
      continue;
    }
    const item = entry as Record<string, unknown>;
    read.push({
      address,
      name: nonEmptyString(item.name) ?? address,
      description: nonEmptyString(item.description),
      mimeType: nonEmptyString(item.mimeType),
    });
  }
  return read;
}

export async function listPrompts(client: Client, options?: RequestOptions): Promise<Listing<McpPrompt>> {
  const { entries, problems, hints } = await listAllPages(client, "prompts/list", "prompts", options);
  const prompts: McpPrompt[] = [];
  const seen = new Set<string>();
  for (const [index, entry] of entries.entries()) {
    const name = isJsonObject(entry) ? nonEmptyString(entry.name) : undefined;
    if (!name || seen.has(name)) {
      problems.push(name ? `prompts/list names "${name}" twice; kept the first` : `prompts/list entry #${index + 1} has no name; dropped`);
      continue;
    }
    seen.add(name);
    const prompt = entry as Record<string, unknown>;
    prompts.push({
      name,
      title: nonEmptyString(prompt.title),
      description: nonEmptyString(prompt.description),
      arguments: Array.isArray(prompt.arguments) ? prompt.arguments.flatMap(promptArgument) : [],
    });
  }
  return { items: prompts, problems, ...hints };
}

/** An argument without a name cannot be given: left out. */
function promptArgument(raw: unknown): McpPromptArgument[] {
  const name = isJsonObject(raw) ? nonEmptyString(raw.name) : undefined;
  if (!isJsonObject(raw) || !name) return [];
  return [{ name, description: nonEmptyString(raw.description), required: raw.required === true }];
}

/** The SDK checks an answer against the schema it is given: this one only asks for an object, each entry is read here. */
const ANY_RESULT: StandardSchemaV1<Record<string, unknown>> = {
  "~standard": {
    version: 1,
    vendor: "pi-mcp-adapter",
    validate: (value) => (isJsonObject(value) ? { value } : { issues: [{ message: "the answer is not an object" }] }),
  },
};

async function listAllPages(
  client: Client,
  method: "tools/list" | "resources/list" | "resources/templates/list" | "prompts/list",
  key: "tools" | "resources" | "resourceTemplates" | "prompts",
  options?: RequestOptions,
): Promise<{ entries: unknown[]; problems: string[]; hints: CacheHints }> {
  const entries: unknown[] = [];
  const problems: string[] = [];
  const cursors = new Set<string>();
  let hints: CacheHints = {};
  let cursor: string | undefined;
  for (let page = 1; ; page++) {
    const result = await client.request({ method, params: cursor === undefined ? {} : { cursor } }, ANY_RESULT, options);
    if (page === 1) hints = cacheHints(result);
    const items = result[key];
    if (Array.isArray(items)) entries.push(...items);
    else problems.push(`${method} page ${page} has no "${key}" array`);
    cursor = typeof result.nextCursor === "string" ? result.nextCursor : undefined;
    if (cursor === undefined) break;
    if (cursors.has(cursor) || page >= MAX_LIST_PAGES) {
      problems.push(`${method} kept paginating (page ${page}, cursor repeated or too many pages); stopped there`);
      break;
    }
    cursors.add(cursor);
  }
  return { entries, problems, hints };
}

function cacheHints(result: Record<string, unknown>): CacheHints {
  const hints: CacheHints = {};
  if (typeof result.ttlMs === "number" && Number.isFinite(result.ttlMs)) hints.ttlMs = Math.max(0, result.ttlMs);
  if (result.cacheScope === "public" || result.cacheScope === "private") hints.cacheScope = result.cacheScope;
  return hints;
}

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value : undefined;
}

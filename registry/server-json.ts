/**
 * What a registry answers, read as untrusted data: the API's list and server responses (`{ server, _meta }`) and the
 * `server.json` documents inside them (the 2025-09-29 to 2025-12-11 schemas, camelCase). Nothing here throws: an
 * entry that is not usable (no name, a package without identifier) is left out and counted, every string is cut to
 * something a terminal can show, and fields this module does not know are ignored.
 */
import { describeValue, isJsonObject } from "../util/guards.ts";
import { collapseWhitespace, truncate, withoutControlCharacters } from "../util/text.ts";

/**
 * One input of a server (`Input` in the schema): a value the server needs, which the publisher fixed (`value`, its
 * `{placeholders}` filled from `variables`) or the user gives.
 */
export interface RegistryInput {
  description?: string;
  isRequired: boolean;
  isSecret: boolean;
  /** `string`, `number`, `boolean` or `filepath`. */
  format?: string;
  value?: string;
  default?: string;
  choices?: string[];
  /** The `{name}` placeholders of `value`. */
  variables: Record<string, RegistryInput>;
}

/** A command-line argument: `positional` (its `valueHint` names it) or `named` (`name` is the flag, dashes included). */
export interface RegistryArgument extends RegistryInput {
  type: "positional" | "named";
  name?: string;
  valueHint?: string;
}

/** An environment variable or an HTTP header. */
export interface RegistryKeyValue extends RegistryInput {
  name: string;
}

export interface RegistryPackage {
  /** `npm`, `pypi`, `oci`, `nuget`, `mcpb`, ... */
  registryType: string;
  identifier: string;
  version?: string;
  /** `stdio`, or `streamable-http` / `sse` for a package that serves HTTP on this machine (then `url`). */
  transport: string;
  runtimeArguments: RegistryArgument[];
  packageArguments: RegistryArgument[];
  environmentVariables: RegistryKeyValue[];
}

export interface RegistryRemote {
  /** `streamable-http` or `sse`. */
  type: string;
  /** May hold `{placeholders}` (2025-12-11), filled from `variables`. */
  url: string;
  headers: RegistryKeyValue[];
  variables: Record<string, RegistryInput>;
}

/** The registry's own word on an entry; an entry without it (a sub-registry's) counts as active. */
export type RegistryStatus = "active" | "deprecated" | "deleted";

export interface RegistryServer {
  /** Reverse-DNS: `io.github.owner/server`. */
  name: string;
  title?: string;
  description?: string;
  version: string;
  packages: RegistryPackage[];
  remotes: RegistryRemote[];
  status: RegistryStatus;
}

export interface RegistryPage {
  servers: RegistryServer[];
  /** Opaque; absent on the last page. */
  nextCursor?: string;
  /** Entries left out: not usable, or not active. */
  leftOut: number;
}

const OFFICIAL_META = "io.modelcontextprotocol.registry/official";
/** Longer texts are cut: they are shown one per line, and a registry's entry may hold anything. */
const MAX_TEXT = 300;
/** A registry name as the registry requires it (and as `/mcp add` tells it from a server name). */
export const REGISTRY_NAME = /^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/;

/** `GET /v0.1/servers`: the active servers of the page. */
export function readServerList(body: unknown): RegistryPage | string {
  if (!isJsonObject(body) || !Array.isArray(body.servers)) {
    return `the answer is not a server list (expected { "servers": [...] }, got ${describeValue(body)})`;
  }
  const servers = body.servers.flatMap((item) => {
    const server = readServerResponse(item);
    return typeof server === "string" || server.status !== "active" ? [] : [server];
  });
  const metadata = isJsonObject(body.metadata) ? body.metadata : {};
  // Opaque: sent back exactly as it came (a cut or cleaned cursor would be another cursor).
  const cursor = metadata.nextCursor;
  const nextCursor = typeof cursor === "string" && cursor !== "" && cursor.length <= 2000 ? cursor : undefined;
  return { servers, ...(nextCursor ? { nextCursor } : {}), leftOut: body.servers.length - servers.length };
}

/** One `{ server, _meta }` (the API's `ServerResponse`), or why it cannot be used. */
export function readServerResponse(item: unknown): RegistryServer | string {
  if (!isJsonObject(item) || !isJsonObject(item.server)) return `not a server entry (got ${describeValue(item)})`;
  const server = readServerJson(item.server);
  if (typeof server === "string") return server;
  const official = isJsonObject(item._meta) && isJsonObject(item._meta[OFFICIAL_META]) ? item._meta[OFFICIAL_META] : {};
  const status = official.status === "deprecated" || official.status === "deleted" ? official.status : "active";
  return { ...server, status };
}

/** A `server.json` document. */
export function readServerJson(doc: Record<string, unknown>): RegistryServer | string {
  const name = typeof doc.name === "string" && REGISTRY_NAME.test(doc.name) ? doc.name : undefined;
  if (!name) return `a server without a valid name (got ${describeValue(doc.name)})`;
  const optional = (key: string) => {
    const value = text(doc[key], MAX_TEXT);
    return value ? { [key]: value } : {};
  };
  return {
    name,
    ...optional("title"),
    ...optional("description"),
    version: text(doc.version, 100) ?? "",
    packages: list(doc.packages).flatMap((item) => readPackage(item) ?? []),
    remotes: list(doc.remotes).flatMap((item) => readRemote(item) ?? []),
    status: "active",
  };
}

function readPackage(item: unknown): RegistryPackage | undefined {
  if (!isJsonObject(item)) return undefined;
  const registryType = text(item.registryType, 50)?.toLowerCase();
  const identifier = text(item.identifier, 500);
  if (!registryType || !identifier) return undefined;
  const transport = isJsonObject(item.transport) ? item.transport : {};
  const version = text(item.version, 100);
  return {
    registryType,
    identifier,
    ...(version ? { version } : {}),
    transport: text(transport.type, 50) ?? "stdio",
    runtimeArguments: list(item.runtimeArguments).flatMap((arg) => readArgument(arg) ?? []),
    packageArguments: list(item.packageArguments).flatMap((arg) => readArgument(arg) ?? []),
    environmentVariables: list(item.environmentVariables).flatMap((input) => readKeyValue(input) ?? []),
  };
}

function readRemote(item: unknown): RegistryRemote | undefined {
  if (!isJsonObject(item)) return undefined;
  const url = text(item.url, 2000);
  if (!url) return undefined;
  return {
    type: text(item.type, 50) ?? "streamable-http",
    url,
    headers: list(item.headers).flatMap((input) => readKeyValue(input) ?? []),
    variables: readVariables(item.variables),
  };
}

function readArgument(item: unknown): RegistryArgument | undefined {
  if (!isJsonObject(item)) return undefined;
  const type = item.type === "named" ? "named" : item.type === "positional" ? "positional" : undefined;
  const name = text(item.name, 200);
  const valueHint = text(item.valueHint, 200);
  if (!type || (type === "named" && !name)) return undefined;
  return { ...readInput(item), type, ...(name ? { name } : {}), ...(valueHint ? { valueHint } : {}) };
}

function readKeyValue(item: unknown): RegistryKeyValue | undefined {
  if (!isJsonObject(item)) return undefined;
  const name = text(item.name, 200);
  return name ? { ...readInput(item), name } : undefined;
}

function readInput(item: Record<string, unknown>): RegistryInput {
  const input: RegistryInput = {
    isRequired: item.isRequired === true,
    isSecret: item.isSecret === true,
    variables: readVariables(item.variables),
  };
  for (const key of ["description", "format", "default"] as const) {
    const value = text(item[key], MAX_TEXT);
    if (value) input[key] = value;
  }
  // A fixed value is used exactly as given (whitespace matters on a command line), but never with control characters.
  if (typeof item.value === "string") input.value = withoutControlCharacters(item.value).slice(0, 2000);
  const choices = list(item.choices).flatMap((choice) => text(choice, 200) ?? []);
  if (choices.length > 0) input.choices = choices;
  return input;
}

function readVariables(raw: unknown): Record<string, RegistryInput> {
  if (!isJsonObject(raw)) return {};
  const variables: Record<string, RegistryInput> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (isJsonObject(value) && /^[A-Za-z0-9_.-]{1,100}$/.test(name)) variables[name] = { ...readInput(value), variables: {} };
  }
  return variables;
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** A string fit to show on one line (no control characters, no runs of whitespace), cut; undefined when empty or not a string. */
function text(value: unknown, maxChars: number): string | undefined {
  if (typeof value !== "string") return undefined;
  const shown = truncate(collapseWhitespace(withoutControlCharacters(value)), maxChars);
  return shown === "" ? undefined : shown;
}

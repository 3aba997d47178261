/**
 * The MCP Registry's read API, frozen at v0.1: `GET /v0.1/servers?search=&cursor=&limit=&version=latest` and
 * `GET /v0.1/servers/{name}/versions/latest`. The official registry and a company's sub-registry speak it alike,
 * so the base URL is the user's to set. Every failure is one line that names the registry (without what its URL
 * may carry after the path) and says what went wrong: not reachable, no answer in time, an HTTP error, not JSON.
 */
import { briefHttpError, safeUrl } from "../util/http-text.ts";
import { errorCode, errorMessage } from "../util/guards.ts";
import { type RegistryPage, type RegistryServer, readServerList, readServerResponse } from "./server-json.ts";

export const DEFAULT_REGISTRY_URL = "https://registry.modelcontextprotocol.io";
/** A registry that has not answered by then is reported as not answering: the user is waiting for a command. */
const REGISTRY_TIMEOUT_MS = 15_000;
/** Servers asked for per page (the API allows 1 to 100; a page is read on one screen). */
export const PAGE_SIZE = 10;

/** A failure of the registry, worded for the user in one line. */
export class RegistryError extends Error {
  override name = "RegistryError";
}

export interface SearchQuery {
  /** Words as the user typed them; the official registry matches them against server names. */
  search: string;
  cursor?: string;
  limit?: number;
}

/** The API root: the URL as given when it already ends in `/v0.1`, else with `/v0.1` added. */
function registryApiBase(url: string): string {
  const trimmed = url.replace(/\/+$/, "");
  return /\/v0\.1$/.test(trimmed) ? trimmed : `${trimmed}/v0.1`;
}

/** One page of the latest versions of the servers whose names match; inactive ones are left out. */
export async function searchRegistry(url: string, query: SearchQuery): Promise<RegistryPage> {
  const params = new URLSearchParams({ search: query.search, limit: String(query.limit ?? PAGE_SIZE), version: "latest" });
  if (query.cursor) params.set("cursor", query.cursor);
  const body = await getJson(url, `/servers?${params}`);
  const page = readServerList(body);
  if (typeof page === "string") throw new RegistryError(`${describeRegistry(url)}: ${page}`);
  return page;
}

/** The latest version of one server; undefined when the registry has no server of that name. */
export async function fetchLatestServer(url: string, name: string): Promise<RegistryServer | undefined> {
  const body = await getJson(url, `/servers/${encodeURIComponent(name)}/versions/latest`, true);
  if (body === undefined) return undefined;
  const server = readServerResponse(body);
  if (typeof server === "string") throw new RegistryError(`${describeRegistry(url)}: ${name}: ${server}`);
  return server;
}

/** `the MCP Registry (https://registry.modelcontextprotocol.io)`, or a sub-registry by its address. */
export function describeRegistry(url: string): string {
  const shown = safeUrl(url).replace(/\/+$/, "");
  return url.replace(/\/+$/, "") === DEFAULT_REGISTRY_URL ? `the MCP Registry (${shown})` : `the MCP registry at ${shown}`;
}

/** `notFoundIsAnswer`: a 404 means "no such server" (undefined), not a failure. */
async function getJson(url: string, path: string, notFoundIsAnswer = false): Promise<unknown> {
  const timeout = AbortSignal.timeout(REGISTRY_TIMEOUT_MS);
  let response: Response;
  try {
    response = await fetch(`${registryApiBase(url)}${path}`, {
      headers: { accept: "application/json", "user-agent": "pi-mcp-adapter" },
      signal: timeout,
      redirect: "follow",
    });
  } catch (error) {
    throw new RegistryError(`${describeRegistry(url)} ${unreachable(error, timeout.aborted)}`, { cause: error });
  }
  if (notFoundIsAnswer && response.status === 404) return undefined;
  const text = await response.text().catch(() => "");
  if (!response.ok) {
    const detail = text.trim() === "" ? "" : `: ${briefHttpError(text)}`;
    throw new RegistryError(`${describeRegistry(url)} answered HTTP ${response.status} ${response.statusText}${detail}`.trim());
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new RegistryError(`${describeRegistry(url)} did not answer with JSON (${briefHttpError(text) || "an empty body"})`);
  }
}

/** Why fetch failed, the way a person reads it: the system's error code when there is one. */
function unreachable(error: unknown, timedOut: boolean): string {
  if (timedOut) return `did not answer within ${REGISTRY_TIMEOUT_MS / 1000} s`;
  const cause = error instanceof Error ? error.cause : undefined;
  const code = errorCode(cause) ?? errorCode(error);
  const reason = code ? (CONNECT_ERRORS[code] ?? code) : errorMessage(cause ?? error);
  return `cannot be reached (${reason})`;
}

const CONNECT_ERRORS: Readonly<Record<string, string>> = {
  ECONNREFUSED: "connection refused",
  ENOTFOUND: "host not found: offline, or a wrong settings.registry.url",
  EAI_AGAIN: "DNS lookup failed: offline?",
  ECONNRESET: "connection reset",
  ETIMEDOUT: "connection timed out",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable: offline?",
  CERT_HAS_EXPIRED: "its TLS certificate has expired",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "its TLS certificate cannot be verified",
};

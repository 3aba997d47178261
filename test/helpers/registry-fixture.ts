/**
 * A local MCP Registry: the v0.1 read API on 127.0.0.1, serving the real `server.json` documents of
 * test/fixtures/registry/ (SOURCES.md says where each comes from) as the official registry serves entries:
 * `{ server, _meta: { "io.modelcontextprotocol.registry/official": { status, isLatest, … } } }`.
 *
 * - `GET /v0.1/servers?search=&cursor=&limit=&version=latest`: names containing `search` (case-insensitive, as the
 *   official registry matches), in name order, `limit` per page, an opaque `metadata.nextCursor`.
 * - `GET /v0.1/servers/{name}/versions/latest`: the latest version, or 404 `{ "error": "Server not found" }`.
 *
 * A test may mark an entry deprecated or deleted, point a remote's URL at a local server (the documents' hosts are
 * out of reach here), or make pages shorter. Every request is recorded.
 */
import { readdirSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { REPO_ROOT } from "./hosts.ts";

const FIXTURES = join(REPO_ROOT, "test/fixtures/registry");

export interface RegistryFixtureOptions {
  /** Registry name → status the registry gives it (default active). */
  status?: Record<string, "active" | "deprecated" | "deleted">;
  /** Registry name → the URL its remotes point at here. */
  remoteUrl?: Record<string, string>;
  /** The most a page holds, whatever `limit` asks (a registry may page shorter): a few documents make several pages. */
  pageSize?: number;
}

export interface RegistryFixture {
  /** What a user sets as `settings.registry.url`. */
  url: string;
  /** Paths and queries asked, in order. */
  requests: string[];
  close(): Promise<void>;
}

interface Entry {
  server: Record<string, unknown>;
  latest: boolean;
}

/** Every document of the fixtures folder, each file one document or an array of them (the registry's seed). */
export function registryDocuments(): Record<string, unknown>[] {
  return readdirSync(FIXTURES)
    .filter((file) => file.endsWith(".json"))
    .sort()
    .flatMap((file) => {
      const data = JSON.parse(readFileSync(join(FIXTURES, file), "utf8")) as unknown;
      return (Array.isArray(data) ? data : [data]) as Record<string, unknown>[];
    });
}

export async function startRegistry(options: RegistryFixtureOptions = {}): Promise<RegistryFixture> {
  const entries = catalog(options);
  const requests: string[] = [];
  const server = createServer((request, response) => {
    requests.push(request.url ?? "");
    const url = new URL(request.url ?? "/", "http://registry.test");
    const reply = (status: number, body: unknown) => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(JSON.stringify(body));
    };
    if (url.pathname === "/v0.1/servers") return reply(200, list(entries, url.searchParams, options));
    const one = /^\/v0\.1\/servers\/([^/]+)\/versions\/latest$/.exec(url.pathname);
    const found = one && entries.find((entry) => entry.latest && entry.server.name === decodeURIComponent(one[1]!));
    if (found) return reply(200, serverResponse(found, options));
    reply(404, { error: "Server not found" });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => closeServer(server),
  };
}

/** Remotes pointed where the test says, and which version of each name is the latest (the last listed). */
function catalog(options: RegistryFixtureOptions): Entry[] {
  const documents = registryDocuments().map((doc) => {
    const target = options.remoteUrl?.[doc.name as string];
    if (!target || !Array.isArray(doc.remotes)) return doc;
    return { ...doc, remotes: (doc.remotes as Record<string, unknown>[]).map((remote) => ({ ...remote, url: target })) };
  });
  return documents.map((server, index) => ({
    server,
    latest: !documents.slice(index + 1).some((later) => later.name === server.name),
  }));
}

function list(entries: readonly Entry[], params: URLSearchParams, options: RegistryFixtureOptions): unknown {
  const search = (params.get("search") ?? "").toLowerCase();
  const limit = Math.min(Math.max(Number(params.get("limit") ?? 30) || 30, 1), 100, options.pageSize ?? 100);
  const matching = entries
    .filter((entry) => params.get("version") !== "latest" || entry.latest)
    .filter((entry) => String(entry.server.name).toLowerCase().includes(search))
    .sort((a, b) => String(a.server.name).localeCompare(String(b.server.name)));
  const start = params.has("cursor") ? Number(Buffer.from(params.get("cursor")!, "base64url").toString()) : 0;
  const page = matching.slice(start, start + limit);
  const next = start + limit < matching.length ? Buffer.from(String(start + limit)).toString("base64url") : undefined;
  return {
    servers: page.map((entry) => serverResponse(entry, options)),
    metadata: { count: page.length, ...(next ? { nextCursor: next } : {}) },
  };
}

function serverResponse(entry: Entry, options: RegistryFixtureOptions): unknown {
  const status = options.status?.[entry.server.name as string] ?? "active";
  return {
    server: entry.server,
    _meta: {
      "io.modelcontextprotocol.registry/official": {
        status,
        publishedAt: "2025-12-11T00:00:00Z",
        updatedAt: "2025-12-11T00:00:00Z",
        isLatest: entry.latest,
      },
    },
  };
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

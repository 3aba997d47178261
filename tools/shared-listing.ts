/**
 * Learning the tools of lazy servers missing from the cache: each is started once, listed, and ended again (lazy
 * means no process until a tool is called), unless a call asked for it meanwhile: it then runs on like any lazy
 * server a call started (the lifecycle tells, `connectForListing`). Several Pi processes on one agent dir (terminal panes, a subagent
 * extension's children) would each start every such server; instead, a process about to list one takes a lease on
 * it (`<agentDir>/mcp-listing/`, keyed by the server's name and identity, util/lease-file.ts), and the others wait
 * for its listing to appear in the cache (read again whenever the file or its journal changes). A lease whose holder
 * died, or that ran out (a listing slower than LEASE_MS), is taken over: at worst a server is listed twice.
 */
import { createHash } from "node:crypto";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import type { McpLifecycleManager } from "../lifecycle.ts";
import {
  CACHE_JOURNAL_DIR_NAME,
  type CachedServerEntry,
  computeServerHash,
  getCachePath,
  getValidEntry,
  loadMetadataCache,
  type MetadataCacheSnapshot,
} from "../metadata-cache.ts";
import type { ServerDefinition } from "../types.ts";
import { forEachAtMost } from "../util/async-work.ts";
import { isLeaseHeld, tryLease } from "../util/lease-file.ts";
import type { MetadataCacheWriter } from "./cache-writer.ts";

export const LISTING_LEASE_DIR_NAME = "mcp-listing";
const LISTING_CONCURRENCY = 10;
/** Longer than a listing takes even on a loaded machine; a waiter then lists the server itself. */
const LEASE_MS = 60_000;
/** How often a waiting process looks at the cache (a look is a stat, unless the cache changed). */
const POLL_MS = 100;

export interface ListingContext {
  readonly agentDir: string;
  readonly lifecycle: Pick<McpLifecycleManager, "connectForListing" | "closeAfterListing">;
  readonly cacheWriter: Pick<MetadataCacheWriter, "stored">;
  readonly shutDown: boolean;
}

/**
 * Lists these servers, at most 10 at a time, or takes what another process listed from the cache (`useCached`).
 * Never rejects: a server that fails to connect is reported by the lifecycle.
 */
export async function listUncachedServers(
  context: ListingContext,
  servers: readonly ServerDefinition[],
  useCached: (name: string, entry: CachedServerEntry) => void,
): Promise<void> {
  const cache = new CacheLook(context.agentDir);
  const learn = async (server: ServerDefinition) => {
    const lease = join(context.agentDir, LISTING_LEASE_DIR_NAME, `${leaseKey(server)}.json`);
    for (;;) {
      const attempt = await tryLease(lease, LEASE_MS);
      // Listed by another process between the session's read of the cache and now?
      const listed = cache.entryFor(server);
      if (listed || context.shutDown) {
        if (attempt.held) await attempt.release();
        if (listed && !context.shutDown) useCached(server.name, listed);
        return;
      }
      if (attempt.held) return listAndRelease(context, server, attempt.release);
      const found = await waitForListing(context, server, cache, lease);
      if (found) return useCached(server.name, found);
      if (context.shutDown) return;
    }
  };
  await forEachAtMost(servers, LISTING_CONCURRENCY, learn, () => context.shutDown);
}

async function listAndRelease(context: ListingContext, server: ServerDefinition, release: () => Promise<void>): Promise<void> {
  try {
    const connected = await context.lifecycle.connectForListing(server.name).then(
      () => true,
      () => false, // reported through the lifecycle's onConnectFailed
    );
    // Waiters read the listing from the cache: it must be there (its journal at least) before the lease goes.
    await context.cacheWriter.stored();
    if (connected && !context.shutDown) await context.lifecycle.closeAfterListing(server.name);
  } finally {
    await release();
  }
}

/** The other process's listing once it is in the cache; undefined when its lease went without one, or at shutdown. */
async function waitForListing(
  context: ListingContext,
  server: ServerDefinition,
  cache: CacheLook,
  lease: string,
): Promise<CachedServerEntry | undefined> {
  while (!context.shutDown) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    const entry = cache.entryFor(server);
    if (entry) return entry;
    if (!(await isLeaseHeld(lease))) return cache.entryFor(server);
  }
  return undefined;
}

/** One lease per server name and identity: a server of the same name but another command is another server. */
function leaseKey(server: ServerDefinition): string {
  return createHash("sha256").update(server.name).update("\0").update(computeServerHash(server)).digest("hex").slice(0, 32);
}

/** The cache as the process last read it, read again only when the file or its journal changed. */
class CacheLook {
  private readonly agentDir: string;
  private stamp = "";
  private snapshot: MetadataCacheSnapshot | undefined;

  constructor(agentDir: string) {
    this.agentDir = agentDir;
  }

  /** A valid entry with everything a listing learns (an older file's entries lack the prompts). */
  entryFor(server: ServerDefinition): CachedServerEntry | undefined {
    const entry = getValidEntry(this.current(), server);
    return entry?.prompts === undefined ? undefined : entry;
  }

  private current(): MetadataCacheSnapshot {
    const stamp = cacheStamp(this.agentDir);
    if (!this.snapshot || stamp !== this.stamp) {
      this.stamp = stamp;
      this.snapshot = loadMetadataCache(this.agentDir);
    }
    return this.snapshot;
  }
}

/** Changes whenever the cache file is replaced or a journal file comes or goes. */
function cacheStamp(agentDir: string): string {
  let file = "absent";
  try {
    const stats = statSync(getCachePath(agentDir));
    file = `${stats.mtimeMs}:${stats.size}:${stats.ino}`;
  } catch {
    // no cache file yet
  }
  let journal: string[] = [];
  try {
    journal = readdirSync(join(agentDir, CACHE_JOURNAL_DIR_NAME));
  } catch {
    // no journal
  }
  return `${file}|${journal.sort().join(",")}`;
}

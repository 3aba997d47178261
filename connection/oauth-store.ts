/**
 * What OAuth sign-ins leave behind, kept for the next session: `<agentDir>/mcp-oauth/`, one private file (0600, in a
 * 0700 directory) per server URL holding its tokens (and the DPoP key they are bound to), its client registration and
 * the PKCE verifier of a sign-in under way. Never in the metadata cache, never in a message.
 *
 * Keyed by the server's URL, not its name: names come from config files (a project's among them), and a server whose
 * URL changed must not send another server's tokens. The file name is a hash of the URL, so no config text becomes a
 * path. Each write replaces one whole file (util/atomic-file.ts), read again and changed under the file's
 * cross-process lock (util/file-lock.ts): Pi processes sharing the agent dir lose neither a registration nor tokens
 * another one stored meanwhile, and a refresh is done under that lock too (connection/oauth-fetch.ts). Everything
 * read back is checked; a file that is not what we wrote is ignored (and replaced by the next sign-in).
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import type { StoredOAuthClientInformation, StoredOAuthTokens } from "@modelcontextprotocol/client";
import { KeyedQueue } from "../util/async-work.ts";
import { writeFileAtomic } from "../util/atomic-file.ts";
import { acquireFileLock, DEFAULT_LOCK_TIMEOUT_MS } from "../util/file-lock.ts";
import { isJsonObject } from "../util/guards.ts";

export const OAUTH_DIR_NAME = "mcp-oauth";
const FORMAT_VERSION = 1;

/**
 * Tokens and client information are kept whole, with the `issuer` the SDK stamps on them (SEP-2352): it reads back
 * as absent what another authorization server issued, so a server that moved to another one gets a new registration
 * and a new sign-in, and no credential of the old one is sent to the new one.
 */
export interface OAuthRecord {
  tokens?: StoredOAuthTokens;
  /** As the authorization server registered it (dynamic registration or a CIMD URL). */
  client?: StoredOAuthClientInformation;
  /** A client given in the config: its id and the authorization server it was first used with (its secret stays there). */
  configuredClient?: { client_id: string; issuer: string };
  /** The PKCE verifier of the sign-in under way. */
  codeVerifier?: string;
  /** The key DPoP-bound tokens are bound to (RFC 9449): kept, and forgotten, with them. */
  dpopKey?: StoredDpopKey;
}

/** A DPoP key pair as stored: its JWS algorithm and its private JWK (RFC 7517, the public members included). */
export interface StoredDpopKey {
  alg: string;
  jwk: Record<string, unknown>;
}

interface StoredFile extends OAuthRecord {
  version: number;
  url: string;
}

export class OAuthStore {
  readonly dir: string;
  /** Changes of one server's file, one after the other (a sign-in saves its client, verifier and tokens in turn). */
  private readonly changes = new KeyedQueue();

  constructor(agentDir: string) {
    this.dir = join(agentDir, OAUTH_DIR_NAME);
  }

  async read(url: string): Promise<OAuthRecord | undefined> {
    const key = storeKey(url);
    try {
      return parseRecord(await readFile(this.fileFor(key), "utf8"), key);
    } catch {
      return undefined;
    }
  }

  /** Sync, for `/mcp status`. */
  hasTokens(url: string): boolean {
    const key = storeKey(url);
    try {
      return !!parseRecord(readFileSync(this.fileFor(key), "utf8"), key)?.tokens;
    } catch {
      return false;
    }
  }

  /** Reads the record, changes it and writes it back; a change that leaves nothing removes the file. */
  update(url: string, change: (record: OAuthRecord) => OAuthRecord): Promise<void> {
    return this.exclusive(url, async (record, save) => save(change(record ?? {})));
  }

  /**
   * Runs `work` alone on the server's record, in this process and across processes (its file's lock): it gets the
   * record as stored now and may save a new one. When the lock cannot be had in time (another process stuck), the
   * work runs anyway: at worst as if there were no lock.
   */
  exclusive<T>(
    url: string,
    work: (record: OAuthRecord | undefined, save: (record: OAuthRecord) => Promise<void>) => Promise<T>,
  ): Promise<T> {
    const key = storeKey(url);
    const path = this.fileFor(key);
    return this.changes.run(key, async () => {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      const release = await acquireFileLock(path, DEFAULT_LOCK_TIMEOUT_MS, () => undefined);
      try {
        return await work(await this.read(key), (record) => this.write(key, record));
      } finally {
        if (typeof release !== "string") await release().catch(() => undefined);
      }
    });
  }

  private async write(key: string, record: OAuthRecord): Promise<void> {
    if (isEmpty(record)) return void (await rm(this.fileFor(key), { force: true }));
    const file: StoredFile = { version: FORMAT_VERSION, url: key, ...record };
    await writeFileAtomic(this.fileFor(key), JSON.stringify(file, null, 2));
  }

  /** Forgets everything about the server (sign-out). True when there was something to forget. */
  async remove(url: string): Promise<boolean> {
    let existed = false;
    await this.update(url, (record) => {
      existed = !isEmpty(record);
      return {};
    });
    return existed;
  }

  private fileFor(key: string): string {
    return join(this.dir, `${createHash("sha256").update(key).digest("hex").slice(0, 32)}.json`);
  }
}

/**
 * Where a sign-in at a company's identity provider is kept (for enterprise-managed authorization): one record per
 * identity provider and client there, shared by the servers that name them. Not an http(s) URL, so never a server's.
 */
export function identityProviderKey(idp: { issuer: string; clientId: string }): string {
  return `identity-provider:${idp.issuer}?client_id=${encodeURIComponent(idp.clientId)}`;
}

/** One spelling per URL (`HTTP://Host:443/x` and `http://host:443/x` are the same server), fragment dropped. */
export function storeKey(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.hash = "";
    return parsed.href;
  } catch {
    return url;
  }
}

function isEmpty(record: OAuthRecord): boolean {
  return !record.tokens && !record.client && !record.configuredClient && !record.codeVerifier;
}

function parseRecord(text: string, key: string): OAuthRecord | undefined {
  const data: unknown = JSON.parse(text);
  if (!isJsonObject(data) || data.version !== FORMAT_VERSION || data.url !== key) return undefined;
  const record: OAuthRecord = {};
  if (isTokens(data.tokens) && hasIssuerStamp(data.tokens)) record.tokens = data.tokens;
  if (isJsonObject(data.client) && typeof data.client.client_id === "string" && hasIssuerStamp(data.client))
    record.client = data.client as StoredOAuthClientInformation;
  const configured = data.configuredClient;
  if (isJsonObject(configured) && typeof configured.client_id === "string" && typeof configured.issuer === "string")
    record.configuredClient = { client_id: configured.client_id, issuer: configured.issuer };
  if (typeof data.codeVerifier === "string") record.codeVerifier = data.codeVerifier;
  const dpopKey = data.dpopKey;
  if (isJsonObject(dpopKey) && typeof dpopKey.alg === "string" && isJsonObject(dpopKey.jwk) && typeof dpopKey.jwk.kty === "string")
    record.dpopKey = { alg: dpopKey.alg, jwk: dpopKey.jwk };
  return record;
}

function isTokens(value: unknown): value is StoredOAuthTokens {
  return isJsonObject(value) && typeof value.access_token === "string" && typeof value.token_type === "string";
}

/** No stamp (stored before the SDK stamped), or a string one: anything else would bind to no authorization server. */
function hasIssuerStamp(value: Record<string, unknown>): boolean {
  return value.issuer === undefined || typeof value.issuer === "string";
}

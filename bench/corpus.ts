/**
 * Pi agent dirs configured with servers of the real tool corpus (45 servers, 1,052 tools), each served by its own
 * `test/fixtures/servers/corpus-server.mjs` process, with the metadata cache written as the adapter would have
 * written it after listing them: a session then registers every tool without starting a server.
 */
import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../config.ts";
import { createCacheEntry, writeServerEntries } from "../metadata-cache.ts";
import { REPO_ROOT } from "../test/helpers/hosts.ts";
import type { McpTool, ServerEntry, SkillEntry } from "../types.ts";

export const CORPUS_SERVER_SCRIPT = join(REPO_ROOT, "test/fixtures/servers/corpus-server.mjs");
const CORPUS_FILE = join(REPO_ROOT, "test/fixtures/corpus/tool-corpus.json");

export interface CorpusServer {
  server: string;
  tools: McpTool[];
  /** Skills its cache entry lists (MCP Skills extension): none for the corpus's own servers. */
  skills?: SkillEntry[];
}

let corpus: CorpusServer[] | undefined;

/** The corpus servers in file order (everything, filesystem, memory, github, …). */
export function corpusServers(): CorpusServer[] {
  corpus ??= (JSON.parse(readFileSync(CORPUS_FILE, "utf8")) as CorpusServer[]).map(({ server, tools }) => ({
    server,
    // What corpus-server.mjs serves of each tool.
    tools: tools.map(({ name, title, description, inputSchema }) => ({ name, title, description, inputSchema })),
  }));
  return corpus;
}

/** The first `count` corpus servers. */
export function firstCorpusServers(count: number): CorpusServer[] {
  const servers = corpusServers();
  if (count > servers.length) throw new Error(`the corpus has ${servers.length} servers, not ${count}`);
  return servers.slice(0, count);
}

/** The stdio command that serves one corpus server, run by this process's Node. */
export function corpusServerEntry(name: string): ServerEntry {
  return { command: process.execPath, args: [CORPUS_SERVER_SCRIPT, name] };
}

export interface CorpusAgent {
  agentDir: string;
  cwd: string;
  cleanup(): Promise<void>;
}

/**
 * A fresh agent dir whose `mcp.json` names these corpus servers (lazy, the default; every tool direct with
 * `directTools`) and, unless `cached` is false, whose `mcp-cache.json` holds their tools for exactly that config.
 */
export async function prepareCorpusAgent(
  servers: readonly CorpusServer[],
  options: { cached?: boolean; directTools?: boolean } = {},
): Promise<CorpusAgent> {
  const agentDir = await mkdtemp(join(tmpdir(), "bench-agent-"));
  const cwd = await mkdtemp(join(tmpdir(), "bench-cwd-"));
  const cleanup = async () => {
    await rm(agentDir, { recursive: true, force: true });
    await rm(cwd, { recursive: true, force: true });
  };
  try {
    const mcpServers = Object.fromEntries(servers.map(({ server }) => [server, corpusServerEntry(server)]));
    const settings = { directTools: options.directTools ?? false };
    await writeFile(join(agentDir, "mcp.json"), JSON.stringify({ mcpServers, settings }, null, 2));
    if (options.cached !== false) await writeCorpusCache(agentDir, cwd, servers);
    return { agentDir, cwd, cleanup };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

/**
 * The agent dir's cache, holding these servers' tools (and skills): entries computed from the definitions the adapter
 * itself will load, so their config hashes match.
 */
export async function writeCorpusCache(agentDir: string, cwd: string, servers: readonly CorpusServer[]): Promise<void> {
  const config = loadConfig({ agentDir, cwd });
  if (config.problems.length > 0) throw new Error(`corpus config: ${config.problems.map((problem) => problem.message).join("; ")}`);
  const byName = new Map(servers.map((server) => [server.server, server]));
  const entries = Object.fromEntries(
    config.servers.map((definition) => {
      const server = byName.get(definition.name);
      const extras = { resourceTemplates: [], prompts: [], instructions: undefined, skills: server?.skills };
      return [definition.name, createCacheEntry(definition, server?.tools ?? [], [], Date.now(), extras)];
    }),
  );
  const result = await writeServerEntries(agentDir, entries);
  if (!result.written) throw new Error(`corpus cache not written: ${result.reason}`);
}

/**
 * What the benchmarks stand on (bench/corpus.ts, test/fixtures/servers/corpus-server.mjs): the corpus agent dir's
 * cache is valid for the config the adapter loads (else a bench would start servers it claims are cached), and a
 * corpus server serves its corpus tools as recorded — the schema-less ones of gitlab included — and echoes calls.
 */
import { afterEach, describe, expect, it } from "vitest";
import { corpusServerEntry, corpusServers, firstCorpusServers, prepareCorpusAgent, type CorpusAgent } from "../bench/corpus.ts";
import { loadConfig } from "../config.ts";
import { getValidEntry, loadMetadataCache } from "../metadata-cache.ts";
import { McpServerManager } from "../server-manager.ts";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function agentWith(count: number): Promise<CorpusAgent> {
  const agent = await prepareCorpusAgent(firstCorpusServers(count));
  cleanups.push(agent.cleanup);
  return agent;
}

describe("corpus agent dir", () => {
  it("has a valid cache entry, with the corpus tools, for every configured server", async () => {
    const agent = await agentWith(corpusServers().length);
    const config = loadConfig({ agentDir: agent.agentDir, cwd: agent.cwd });
    const cache = loadMetadataCache(agent.agentDir);
    expect(config.problems).toEqual([]);
    expect(cache.problems).toEqual([]);
    expect(config.servers.map((server) => server.name)).toEqual(corpusServers().map((server) => server.server));
    const cachedTools = config.servers.map((definition) => getValidEntry(cache, definition)?.tools.length ?? -1);
    expect(cachedTools).toEqual(corpusServers().map((server) => server.tools.length));
    expect(cachedTools.reduce((sum, count) => sum + count, 0)).toBe(1_052);
  });
});

describe("corpus server", () => {
  const connect = async (name: string) => {
    const agent = await agentWith(0);
    const manager = new McpServerManager({ agentDir: agent.agentDir });
    cleanups.push(() => manager.closeAll());
    const connection = await manager.connect({ name, ...corpusServerEntry(name), source: { kind: "user", path: "test" } });
    return { manager, connection };
  };

  it("lists the corpus tools of its server, as recorded, and echoes a call's arguments", async () => {
    const { manager, connection } = await connect("jira-cloud");
    const recorded = corpusServers().find((server) => server.server === "jira-cloud")!.tools;
    expect(connection.tools.map((tool) => tool.name)).toEqual(recorded.map((tool) => tool.name));
    expect(connection.tools[0]).toMatchObject({ description: recorded[0].description, inputSchema: recorded[0].inputSchema });
    const result = await manager.callTool("jira-cloud", recorded[0].name, { issueKey: "PROJ-1" });
    expect(result.content).toEqual([{ type: "text", text: `${recorded[0].name} {"issueKey":"PROJ-1"}` }]);
  });

  it("serves all of gitlab's tools, whose recorded schemas lack `type`", async () => {
    const { connection } = await connect("gitlab");
    const recorded = corpusServers().find((server) => server.server === "gitlab")!.tools;
    expect(connection.tools).toHaveLength(recorded.length);
  });
});

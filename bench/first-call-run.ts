/**
 * One first call of a lazy stdio server, measured in a fresh process (a child of bench/first-call.ts), as a lazy
 * server's first call happens in a Pi session: nothing connected yet, the tool called once.
 *
 *   node node_modules/jiti/lib/jiti-cli.mjs bench/first-call-run.ts '<FirstCallSample as JSON>'
 *
 * Two figures per run: loading the connection code (the MCP SDK; Pi's session preloads it once the `mcp` tool is
 * offered, so a first call usually finds it loaded) and the first call itself: spawn, connect (with the protocol
 * probe unless the verdict is known), the lists, the call. The adapter is the McpServerManager of a checkout (this
 * one, or the commit before the move: bench/before-move.ts); the bare client is `@modelcontextprotocol/client`
 * with the SDK's own StdioClientTransport, listing tools and calling. Prints one line `RESULT <FirstCallResult>`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ProtocolVerdict } from "../connection/session.ts";
import { REPO_ROOT } from "../test/helpers/hosts.ts";
import type { McpServerManagerOptions } from "../server-manager.ts";
import type { ServerDefinition } from "../types.ts";
import { CORPUS_SERVER_SCRIPT } from "./corpus.ts";

/** The two servers: a 2025-era one (the corpus's `everything`, on SDK v1 as most servers are) and a 2026 one. */
export const FIRST_CALL_SERVERS = {
  "2025": { args: [CORPUS_SERVER_SCRIPT, "everything"], tool: "echo", arguments: { message: "hello" } },
  "2026": { args: [join(REPO_ROOT, "test/fixtures/servers/v2-server.mjs")], tool: "echo", arguments: { text: "hello" } },
} as const;
export type FirstCallServer = keyof typeof FIRST_CALL_SERVERS;

export interface FirstCallSample {
  server: FirstCallServer;
  /** The adapter's McpServerManager from this checkout, or the bare SDK v2 client. */
  client: { adapterRoot: string } | "bare";
  /** The verdict of an earlier connect: no probe. Without it, the v2 clients probe (`server/discover`) first. */
  prior?: ProtocolVerdict;
}

export interface FirstCallResult {
  loadMs: number;
  /** Spawn, connect, lists, call: to the result. */
  callMs: number;
}

interface Manager {
  connect(def: ServerDefinition): Promise<unknown>;
  callTool(server: string, tool: string, args: Record<string, unknown>): Promise<{ isError?: boolean; content: unknown }>;
  closeAll(): Promise<void>;
}
/** Typed by this checkout's options, so that a renamed option fails the type check rather than go unused. */
type ManagerModule = { McpServerManager: new (options: Pick<McpServerManagerOptions, "agentDir" | "known">) => Manager };

const RESULT_PREFIX = "RESULT ";

export async function firstCall(sample: FirstCallSample): Promise<FirstCallResult> {
  return sample.client === "bare" ? bareFirstCall(sample) : adapterFirstCall(sample, sample.client.adapterRoot);
}

/** Through the manager of `root`: loaded beforehand as Pi loads the extension, the SDK half loaded by the timer. */
async function adapterFirstCall(sample: FirstCallSample, root: string): Promise<FirstCallResult> {
  const server = FIRST_CALL_SERVERS[sample.server];
  const { McpServerManager } = (await import(join(root, "server-manager.ts"))) as ManagerModule;
  const { loadConnectionCode } = (await import(join(root, "connection/sdk-loader.ts"))) as { loadConnectionCode(): Promise<unknown> };
  const agentDir = mkdtempSync(join(tmpdir(), "bench-first-call-"));
  // Options the old manager does not know (`known`) are ignored by it.
  const manager = new McpServerManager({ agentDir, known: () => (sample.prior ? { protocol: sample.prior } : undefined) });
  const def: ServerDefinition = {
    name: "server",
    command: process.execPath,
    args: [...server.args],
    source: { kind: "user", path: "bench" },
  };
  try {
    const start = performance.now();
    await loadConnectionCode();
    const loaded = performance.now();
    await manager.connect(def);
    const result = await manager.callTool(def.name, server.tool, server.arguments);
    const done = performance.now();
    if (result.isError) throw new Error(`the call failed: ${JSON.stringify(result.content)}`);
    return { loadMs: loaded - start, callMs: done - loaded };
  } finally {
    await manager.closeAll();
    rmSync(agentDir, { recursive: true, force: true });
  }
}

/** The shortest way from nothing to a result with the SDK v2 alone: its client and its stdio transport. */
async function bareFirstCall(sample: FirstCallSample): Promise<FirstCallResult> {
  const server = FIRST_CALL_SERVERS[sample.server];
  const start = performance.now();
  const { Client } = await import("@modelcontextprotocol/client");
  const { StdioClientTransport } = await import("@modelcontextprotocol/client/stdio");
  const loaded = performance.now();
  // Without a verdict, `auto` (the SDK probes on a short-lived sibling process of its own transport); with one, none.
  const client = new Client({ name: "bench", version: "0" }, sample.prior ? {} : { versionNegotiation: { mode: "auto" } });
  const prior = sample.prior?.era === "modern" ? { kind: "modern" as const, discover: sample.prior.discover } : { kind: "legacy" as const };
  try {
    await client.connect(
      new StdioClientTransport({ command: process.execPath, args: [...server.args], stderr: "ignore" }),
      sample.prior ? { prior } : {},
    );
    await client.listTools();
    const result = await client.callTool({ name: server.tool, arguments: server.arguments });
    const done = performance.now();
    if (result.isError) throw new Error(`the call failed: ${JSON.stringify(result.content)}`);
    return { loadMs: loaded - start, callMs: done - loaded };
  } finally {
    await client.close();
  }
}

/** The result a run printed, if it printed one. */
export function parseFirstCallResult(stdout: string): FirstCallResult | undefined {
  const line = stdout.split("\n").find((text) => text.startsWith(RESULT_PREFIX));
  return line ? (JSON.parse(line.slice(RESULT_PREFIX.length)) as FirstCallResult) : undefined;
}

// Run as a script: one sample in this process (a fresh one: the parent spawns it), its result printed.
if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2]) {
  const result = await firstCall(JSON.parse(process.argv[2]) as FirstCallSample);
  console.log(`${RESULT_PREFIX}${JSON.stringify(result)}`);
  process.exit(0);
}

/**
 * The items fixture server (test/fixtures/servers/items-server.mjs) for the filter and approval tests: its config
 * entry, what it logged as run, and a metadata cache that knows its tools (so print and interactive runs offer
 * direct tools from their first request).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ENTRY, waitForStatus } from "./fault-setup.ts";
import { REPO_ROOT } from "./hosts.ts";
import type { McpDirs } from "./mcp-setup.ts";
import { startSession } from "./pi-session.ts";

export const ITEMS_SERVER = join(REPO_ROOT, "test/fixtures/servers/items-server.mjs");
const LOG_NAME = "items.log";

/** A config entry for it, logging the calls that ran to `<project>/items.log`. */
export function itemsServer(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { command: process.execPath, args: [ITEMS_SERVER], env: { ITEMS_LOG: `\${workspaceFolder}/${LOG_NAME}` }, ...extra };
}

/** The tools that reached the server, in order. */
export function itemsRan(dirs: Pick<McpDirs, "cwd">): string[] {
  const file = join(dirs.cwd, LOG_NAME);
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as { tool: string }).tool);
}

/** One session that lists the servers (`names`) and writes the cache, then quits. */
export async function warmCache(dirs: McpDirs, ...names: string[]): Promise<void> {
  const pi = await startSession({ extensions: [ENTRY], agentDir: dirs.agentDir, cwd: dirs.cwd });
  try {
    // Listed by the server itself in this session (not only known from the cache).
    for (const name of names) await waitForStatus(pi, new RegExp(`${name}: [^\\n]*\\d+ tools?(?! \\(from the cache)`));
  } finally {
    await pi.dispose();
  }
}

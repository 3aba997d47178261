/**
 * Shared by the fault tests: fixture server entries, sessions and dirs that clean up after themselves, and the
 * fixtures' event logs.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach } from "vitest";
import type { ScriptStep } from "./faux-script.ts";
import { readEvents } from "./fixture-log.ts";
import { REPO_ROOT } from "./hosts.ts";
import { type McpDirs, mcpDirs } from "./mcp-setup.ts";
import { type PiSession, startSession } from "./pi-session.ts";

export const ENTRY = "pi-mcp-adapter.ts";
export const FAULTY_SERVER = join(REPO_ROOT, "test/fixtures/servers/faulty-server.mjs");
export const STDIO_SERVER = join(REPO_ROOT, "test/fixtures/servers/stdio-server.mjs");

/** faulty-server.mjs as a config entry; `env` chooses how it misbehaves (see its header). */
export function faulty(env: Record<string, string> = {}, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { command: process.execPath, args: [FAULTY_SERVER], env, ...extra };
}

/** stdio-server.mjs (startup faults: exit-at-start, hang, grandchildren). */
export function stdioFixture(env: Record<string, string> = {}, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { command: process.execPath, args: [STDIO_SERVER], env, ...extra };
}

export function startedPids(logFile: string): number[] {
  return readEvents(logFile).flatMap((entry) => (entry.event === "start" && entry.pid !== undefined ? [entry.pid] : []));
}

/** Registers cleanups run after each test, newest first. */
function useCleanups(): (cleanup: () => Promise<void> | void) => void {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  return (cleanup) => cleanups.push(cleanup);
}

/** Call once at the top of a test file: dirs, sessions and env changes that are undone after each test. */
export function faultHarness() {
  const onCleanup = useCleanups();
  return {
    onCleanup,
    async dirs(servers: Record<string, unknown>, settings: Record<string, unknown> = {}): Promise<McpDirs> {
      const dirs = await mcpDirs({ mcpServers: servers, settings });
      onCleanup(dirs.cleanup);
      return dirs;
    },
    async session(dirs: McpDirs, script: ScriptStep[] = [], extraExtensions: string[] = []): Promise<PiSession> {
      const pi = await startSession({ extensions: [ENTRY, ...extraExtensions], agentDir: dirs.agentDir, cwd: dirs.cwd, script });
      onCleanup(() => pi.dispose());
      return pi;
    },
    /** Sets an environment variable for the rest of the test. */
    env(name: string, value: string | undefined): void {
      const previous = process.env[name];
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
      onCleanup(() => {
        if (previous === undefined) delete process.env[name];
        else process.env[name] = previous;
      });
    },
  };
}

export function notifications(pi: PiSession): { message: string; level: string }[] {
  return pi.ui.flatMap((entry) => (entry.kind === "notify" ? [{ message: entry.message, level: entry.level }] : []));
}

export const search = (query: string): ScriptStep => ({ toolCalls: [{ name: "ToolSearch", arguments: { query } }] });

/** Pi 0.73.1 offers a tool loaded during a prompt only from the next one: call it through McpCall until then. */
export function callLoaded(name: string, args: Record<string, unknown> = {}): ScriptStep {
  return (request) =>
    request.tools.some((tool) => tool.name === name)
      ? { toolCalls: [{ name, arguments: args }] }
      : { toolCalls: [{ name: "McpCall", arguments: { tool: name, arguments: args } }] };
}

/** Polls `/mcp status` until it matches (a server reconnects in the background). */
export async function waitForStatus(pi: PiSession, pattern: RegExp, timeoutMs = 20_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { text } = await pi.command("/mcp status");
    if (pattern.test(text)) return text;
    if (Date.now() > deadline) throw new Error(`/mcp status did not match ${pattern} within ${timeoutMs} ms:\n${text}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The tool names the metadata cache holds for a server (none when the file or entry is missing). */
export function cachedToolNames(agentDir: string, server: string): string[] {
  try {
    const cache = JSON.parse(readFileSync(join(agentDir, "mcp-cache.json"), "utf8")) as {
      servers: Record<string, { tools: { name: string }[] }>;
    };
    return cache.servers[server]?.tools.map((tool) => tool.name) ?? [];
  } catch {
    return [];
  }
}

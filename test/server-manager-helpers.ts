/** Shared by the server-manager, lifecycle and process-tree tests: fixture servers, temp dirs, the process table. */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ServerDefinition } from "../types.ts";
import { readEvents } from "./helpers/fixture-log.ts";
import { startFixtureProcess } from "./helpers/fixture-process.ts";

const TEST_DIR = dirname(fileURLToPath(import.meta.url));
export const FIXTURES = join(TEST_DIR, "fixtures", "servers");
export const STDIO_FIXTURE = join(FIXTURES, "stdio-server.mjs");
export const EVERYTHING_BIN = join(TEST_DIR, "..", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");

export function tempDir(): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), "pi-mcp-sm-"));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export function serverDef(name: string, entry: Omit<ServerDefinition, "name" | "source">): ServerDefinition {
  return { name, source: { kind: "user", path: "test" }, ...entry };
}

/** The scriptable stdio fixture; `env` selects its behaviour (see the fixture's header). */
export function fixtureDef(name: string, env: Record<string, string>, extra: Partial<ServerDefinition> = {}): ServerDefinition {
  return serverDef(name, { command: process.execPath, args: [STDIO_FIXTURE], env, ...extra });
}

export function everythingStdioDef(name: string, extra: Partial<ServerDefinition> = {}): ServerDefinition {
  return serverDef(name, { command: process.execPath, args: [EVERYTHING_BIN, "stdio"], ...extra });
}

export function pidsOf(logFile: string, event: "start" | "grandchild" | "cancelled"): number[] {
  return readEvents(logFile)
    .filter((entry) => entry.event === event)
    .map((entry) => entry.pid!);
}

/** Straight from `ps`, independent of the code under test; a zombie counts as gone (it has exited). */
export function isRunning(pid: number): boolean {
  try {
    const state = execFileSync("ps", ["-o", "stat=", "-p", String(pid)], { encoding: "utf8" }).trim();
    return state !== "" && !state.startsWith("Z");
  } catch {
    return false;
  }
}

/**
 * Safety net for a failing test: SIGKILLs the fixture processes logged under `dir` that still run (checking the
 * command line, in case a pid was reused), so one failure does not leave servers behind on a shared machine.
 */
export function killLeftovers(dir: string): void {
  const logs = readdirSync(dir).filter((file) => file.endsWith(".log"));
  for (const entry of logs.flatMap((file) => readEvents(join(dir, file)))) {
    if (entry.pid === undefined || !isRunning(entry.pid)) continue;
    try {
      const commandLine = execFileSync("ps", ["-o", "args=", "-p", String(entry.pid)], { encoding: "utf8" });
      if (commandLine.includes("node")) process.kill(entry.pid, "SIGKILL");
    } catch {
      // Ended meanwhile.
    }
  }
}

/** The error a promise rejects with (fails the test when it resolves). */
export async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a rejection");
}

/** Polls until `condition` holds; generous by default, since the machine is shared. */
export async function waitFor(condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms: ${condition}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export interface HttpFixture {
  url: (path: string) => string;
  /** Requests the fixture has seen, as "METHOD /path". */
  requests: () => Promise<string[]>;
  stop: () => Promise<void>;
}

export async function startHttpFixture(env: Record<string, string> = {}): Promise<HttpFixture> {
  const { base, stop } = await startFixtureProcess(join(FIXTURES, "http-server.mjs"), "HTTP fixture", env);
  return {
    url: (path) => `${base}${path}`,
    requests: async () => (await (await fetch(`${base}/__log`)).json()) as string[],
    stop,
  };
}

/**
 * The skills fixture server (test/fixtures/servers/skills-server.mjs, on the official SDK v2): its environment, the
 * skill files it served and the starts it logged, a v2 client connected to it in either era, and the server as the
 * skills code reaches one (`SkillServers`: started on first need).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { skillSource } from "../../connection/skills.ts";
import type { SkillServers } from "../../skills/fetcher.ts";
import type { SkillEntry, SkillSource } from "../../types.ts";
import { REPO_ROOT } from "./hosts.ts";

export const SKILLS_SERVER = join(REPO_ROOT, "test/fixtures/servers/skills-server.mjs");
const READ_LOG = "skill-reads.log";
const STARTED_LOG = "skills-started.log";

/** Its environment: reads and starts logged in `dir` (`${workspaceFolder}` in a config), and the switches wanted. */
export function skillsServerEnv(dir: string, switches: { tamper?: string; extra?: number } = {}): Record<string, string> {
  return {
    SKILLS_READ_LOG: join(dir, READ_LOG),
    SKILLS_STARTED: join(dir, STARTED_LOG),
    ...(switches.tamper ? { SKILLS_TAMPER: switches.tamper } : {}),
    ...(switches.extra ? { SKILLS_EXTRA: String(switches.extra) } : {}),
  };
}

/** The skill files it was asked for, in order (their URIs). */
export function skillReads(dir: string): string[] {
  return logLines(join(dir, READ_LOG)).map((line) => (JSON.parse(line) as { uri: string }).uri);
}

/** How many times it started. */
export function skillsServerStarts(dir: string): number {
  return logLines(join(dir, STARTED_LOG)).length;
}

function logLines(file: string): string[] {
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : [];
}

/** A v2 client connected to it over stdio: `auto` negotiates 2026-07-28, `legacy` speaks 2025-11-25. */
export async function connectSkillsServer(mode: "auto" | "legacy", env: Record<string, string>): Promise<Client> {
  const client = new Client({ name: "skills-test", version: "1.0.0" }, { versionNegotiation: { mode } });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [SKILLS_SERVER],
      env: { ...process.env, ...env } as Record<string, string>,
    }),
  );
  return client;
}

/** The fixture as a lazy server: started (2025 era) on the first `connect`, and listed again then. */
export class FixtureSkillServers implements SkillServers {
  client: Client | undefined;
  private source: SkillSource | undefined;
  private live: SkillEntry[] | undefined;
  private readonly cached: SkillEntry[];
  private readonly env: Record<string, string>;
  /** `cached`: the entries an earlier listing gave (what the cache holds); `env`: `skillsServerEnv(...)`. */
  constructor(cached: SkillEntry[], env: Record<string, string>) {
    this.cached = cached;
    this.env = env;
  }
  async connect(): Promise<void> {
    if (this.client) return;
    this.client = await connectSkillsServer("legacy", this.env);
    this.source = skillSource(this.client);
    this.live = (await this.source.list()).skills;
  }
  entries(): readonly SkillEntry[] {
    return this.live ?? this.cached;
  }
  read(_server: string, entry: SkillEntry, uri: string, signal?: AbortSignal) {
    return this.source!.read(entry, uri, { signal });
  }
  close(): Promise<void> {
    return this.client?.close() ?? Promise.resolve();
  }
}

/** The fixture's skill entries, listed once (its reads and starts logged in `logDir`). */
export async function listFixtureSkills(logDir: string): Promise<SkillEntry[]> {
  const client = await connectSkillsServer("legacy", skillsServerEnv(logDir));
  try {
    return (await skillSource(client).list()).skills;
  } finally {
    await client.close();
  }
}

/**
 * Agent and project dirs for end-to-end tests: an `mcp.json` naming real servers installed by `npm install`.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../config.ts";
import { ProjectTrust } from "../../host.ts";
import { REPO_ROOT } from "./hosts.ts";

const bin = (pkg: string, file: string) => join(REPO_ROOT, "node_modules", pkg, file);

/** Real servers as stdio commands run by this process's Node. */
export const REAL_SERVERS = {
  everything: { command: process.execPath, args: [bin("@modelcontextprotocol/server-everything", "dist/index.js"), "stdio"] },
  // Its graph file in the test's project dir (removed with it), not in the package's own folder.
  memory: {
    command: process.execPath,
    args: [bin("@modelcontextprotocol/server-memory", "dist/index.js")],
    env: { MEMORY_FILE_PATH: "${workspaceFolder}/memory.jsonl" },
  },
} as const;

export interface McpDirs {
  agentDir: string;
  cwd: string;
  cleanup(): Promise<void>;
}

export async function mcpDirs(config: Record<string, unknown>): Promise<McpDirs> {
  const agentDir = await mkdtemp(join(tmpdir(), "mcp-e2e-agent-"));
  const cwd = await mkdtemp(join(tmpdir(), "mcp-e2e-cwd-"));
  await writeFile(join(agentDir, "mcp.json"), JSON.stringify(config, null, 2));
  return {
    agentDir,
    cwd,
    cleanup: async () => {
      await rm(agentDir, { recursive: true, force: true });
      await rm(cwd, { recursive: true, force: true });
    },
  };
}

/** The user answered Yes, before, to using the project's MCP config as its files are now (as Pi before 1.x asks). */
export async function trustProject(dirs: Pick<McpDirs, "agentDir" | "cwd">): Promise<void> {
  const project = loadConfig({ agentDir: dirs.agentDir, cwd: dirs.cwd, projectTrusted: false }).project;
  if (!project) throw new Error(`no project MCP config in ${dirs.cwd} to trust`);
  await new ProjectTrust(dirs.agentDir).ask({ select: async () => "Yes, use them" }, dirs.cwd, project, 1000);
}

/**
 * Two copies of the adapter in one Pi (a checkout run with `pi -e` or `npm start` while another copy is installed):
 * the first copy Pi loads works, the second registers nothing and says so once, naming both; Pi starts (it used to
 * exit 1 on "Tool "ToolSearch" conflicts with …"). In the real CLI and through /reload and /new, on both hosts.
 */
import { cp, mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative, sep } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { currentHost, REPO_ROOT } from "./helpers/hosts.ts";
import { mcpDirs, type McpDirs } from "./helpers/mcp-setup.ts";
import { runPrint } from "./helpers/pi-print.ts";
import { startSession } from "./helpers/pi-session.ts";

const host = currentHost();
const FIXTURE = join(REPO_ROOT, "test/fixtures/servers/stdio-server.mjs");
const NEW_SESSION_COMMAND = join(REPO_ROOT, "test/fixtures/extensions/new-session.ts");
const CONFIG = { mcpServers: { fixture: { command: process.execPath, args: [FIXTURE] } } };

/** What a copy of the extension leaves out: what Pi never loads, and the dependencies (shared by a link). */
const NOT_COPIED = new Set(["node_modules", "node22", ".git", "test", "bench", "conformance", "demo", "examples"]);

/** A second copy of the extension, as a drop-in or a second clone would be (its dependencies shared). */
async function copyOfExtension(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "pi-mcp-adapter-copy-"));
  await cp(REPO_ROOT, dir, { recursive: true, filter: (source) => !NOT_COPIED.has(relative(REPO_ROOT, source).split(sep)[0]!) });
  await symlink(join(REPO_ROOT, "node_modules"), join(dir, "node_modules"));
  return dir;
}

function warningAbout(firstCopy: string, secondCopy: string): string {
  return `pi-mcp-adapter is loaded twice: the copy at ${firstCopy} is in use, the copy at ${secondCopy} does nothing.`;
}

describe(`two copies of the adapter in Pi ${host.version}`, () => {
  let copy: string;
  let dirs: McpDirs;
  beforeAll(async () => {
    copy = await copyOfExtension();
    dirs = await mcpDirs(CONFIG);
  });
  afterAll(async () => {
    await rm(copy, { recursive: true, force: true });
    await dirs.cleanup();
  });

  test("pi -p: the first copy answers /mcp status, the second only warns, and Pi exits 0", async () => {
    const result = await runPrint({
      extensions: [REPO_ROOT, copy],
      script: [],
      prompts: ["/mcp status"],
      agentDir: dirs.agentDir,
      cwd: dirs.cwd,
    });
    expect(result.stderr).not.toContain("conflicts with");
    expect(result.exitCode).toBe(0);
    expect(result.stderr.split(warningAbout(REPO_ROOT, copy)).length - 1).toBe(1);
    // Pi keeps stdout for the answer: command output arrives on stderr.
    expect(result.stderr.match(/MCP servers: 1 enabled/g)).toHaveLength(1);
  });

  test("the copy loaded first is the one in use, whichever it is", async () => {
    const result = await runPrint({
      extensions: [copy, REPO_ROOT],
      script: [],
      prompts: ["/mcp status"],
      agentDir: dirs.agentDir,
      cwd: dirs.cwd,
    });
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toContain(warningAbout(copy, REPO_ROOT));
  });

  test("after /reload and /new the same copy is in use and nothing conflicts", async () => {
    const pi = await startSession({ extensions: [REPO_ROOT, copy, NEW_SESSION_COMMAND], agentDir: dirs.agentDir, cwd: dirs.cwd });
    const loadErrors = () =>
      (pi.session as unknown as { resourceLoader: { getExtensions(): { errors: { error: string }[] } } }).resourceLoader.getExtensions()
        .errors;
    const warnings = () => pi.ui.filter((entry) => entry.kind === "notify" && entry.message.startsWith(warningAbout(REPO_ROOT, copy)));
    try {
      expect(pi.errors).toEqual([]);
      expect(warnings()).toHaveLength(1);
      await pi.reload();
      expect(loadErrors()).toEqual([]);
      expect(warnings()).toHaveLength(2);
      expect((await pi.command("/mcp status")).text).toMatch(/^MCP servers: 1 enabled/);
      await pi.command("/test-new");
      expect(loadErrors()).toEqual([]);
      expect(warnings()).toHaveLength(3);
      expect((await pi.command("/mcp status")).text).toMatch(/^MCP servers: 1 enabled/);
      expect(pi.activeToolNames()).toContain("ToolSearch");
    } finally {
      await pi.dispose();
    }
  });
});

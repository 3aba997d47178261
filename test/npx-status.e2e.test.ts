/**
 * What npx resolution decided reaches the user: `/mcp status` in the real CLI shows under each connected npx server
 * the program that runs instead of npm, or why npm still runs it. The package is a local directory (npx links it),
 * installed into an npm cache of the test's own, so nothing is fetched from a registry.
 */
import { chmod, mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { currentHost, REPO_ROOT } from "./helpers/hosts.ts";
import { mcpDirs, type McpDirs } from "./helpers/mcp-setup.ts";
import { runPrint } from "./helpers/pi-print.ts";

const host = currentHost();
const FIXTURE = join(REPO_ROOT, "test/fixtures/servers/stdio-server.mjs");

let root: string;
let dirs: McpDirs | undefined;

beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), "npx-status-")));
});

afterAll(async () => {
  await dirs?.cleanup();
  if (root) await rm(root, { recursive: true, force: true });
});

/** A package whose one bin starts the stdio fixture server. */
async function fixturePackage(): Promise<{ dir: string; bin: string }> {
  const dir = join(root, "fixture-package");
  await mkdir(dir);
  await writeFile(join(dir, "package.json"), JSON.stringify({ name: "npx-status-fixture", version: "1.0.0", bin: "server.mjs" }));
  const bin = join(dir, "server.mjs");
  await writeFile(bin, `#!/usr/bin/env node\nimport ${JSON.stringify(pathToFileURL(FIXTURE).href)};\n`);
  await chmod(bin, 0o755);
  return { dir, bin };
}

describe(`/mcp status of npx servers on Pi ${host.version}`, () => {
  test("shows what runs instead of npm, or why npm runs it", async () => {
    const { dir, bin } = await fixturePackage();
    const env = {
      npm_config_cache: join(root, "npm-cache"),
      npm_config_update_notifier: "false",
      npm_config_audit: "false",
      npm_config_fund: "false",
    };
    dirs = await mcpDirs({
      mcpServers: {
        direct: { command: "npx", args: ["-y", dir], env, lifecycle: "eager" },
        // `node` is no bin of the package: npx would run it from PATH, so npm runs this one.
        viaNpm: { command: "npx", args: ["-y", "-p", dir, "node", FIXTURE], env, lifecycle: "eager" },
      },
    });
    const result = await runPrint({
      extensions: [REPO_ROOT],
      script: [],
      prompts: ["/mcp status"],
      agentDir: dirs.agentDir,
      cwd: dirs.cwd,
    });
    expect(result.exitCode).toBe(0);
    // Pi keeps stdout for the answer: in print mode command output arrives on stderr.
    expect(result.stderr).toMatch(
      new RegExp(`✓ direct: connected [^\\n]+\\n    [^\\n]+\\n    npx: resolved to node ${escapeRegExp(bin)}\\n`),
    );
    expect(result.stderr).toMatch(
      /✓ viaNpm: connected [^\n]+\n {4}[^\n]+\n {4}npx: runs through npm \(node is not a bin of the installed packages\)\n/,
    );
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

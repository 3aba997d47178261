/**
 * Interactive mode: the real `pi` TUI in a terminal (tmux), the user typing a prompt and `/mcp status`. The model
 * finds the echo tool and calls it within that prompt, as in the other modes.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, expect, test } from "vitest";
import { ECHO_MESSAGE, ECHO_TOOL } from "./fixtures/faux-scripts/mcp-echo-steps.ts";
import type { ToolResultRecord } from "./helpers/faux-script.ts";
import { FAUX_MODEL, type FauxRecordLine } from "./helpers/faux-provider-extension.ts";
import { currentHost } from "./helpers/hosts.ts";
import { mcpDirs, REAL_SERVERS } from "./helpers/mcp-setup.ts";
import { descendantProcesses } from "./helpers/processes.ts";

const host = currentHost();
const SESSION = `pi-mcp-interactive-${process.pid}`;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const tmux = (...args: string[]) => execFileSync("tmux", args, { encoding: "utf8" });
const screen = () => tmux("capture-pane", "-p", "-t", SESSION, "-S", "-200");

async function toolResults(recordFile: string): Promise<ToolResultRecord[]> {
  if (!existsSync(recordFile)) return [];
  const lines = (await readFile(recordFile, "utf8")).split("\n").filter(Boolean).map((line) => JSON.parse(line) as FauxRecordLine);
  return lines.flatMap((line) => ("toolResult" in line ? [line.toolResult] : []));
}

test(`interactive mode on Pi ${host.version}: a typed prompt finds and calls a tool; /mcp status shows it; quitting leaves nothing`, async () => {
  const dirs = await mcpDirs({ mcpServers: { everything: REAL_SERVERS.everything } });
  cleanups.push(dirs.cleanup);
  const work = await mkdtemp(join(tmpdir(), "pi-interactive-"));
  cleanups.push(() => rm(work, { recursive: true, force: true }));
  await writeFile(join(dirs.agentDir, "settings.json"), JSON.stringify({ retry: { enabled: false }, cacheWarming: "off" }));
  const recordFile = join(work, "record.jsonl");
  const command = [
    `PI_CODING_AGENT_DIR=${dirs.agentDir}`,
    `PI_FAUX_RECORD=${recordFile}`,
    host.nodeBinary,
    host.cliPath,
    "--offline --no-session",
    `-e ${resolve("pi-mcp-adapter.ts")} -e ${resolve("test/fixtures/faux-scripts/mcp-echo.ts")}`,
    `--model ${FAUX_MODEL}`,
  ].join(" ");
  tmux("new-session", "-d", "-s", SESSION, "-x", "200", "-y", "50", "-c", dirs.cwd, command);
  cleanups.push(async () => void execFileSync("tmux", ["kill-session", "-t", SESSION], { stdio: "ignore" }));

  await expect.poll(screen, { timeout: 30_000 }).toContain("MCP ");
  tmux("send-keys", "-t", SESSION, "echo something", "Enter");
  await expect.poll(() => toolResults(recordFile), { timeout: 30_000 }).toHaveLength(2);
  const results = await toolResults(recordFile);
  expect(results.map((result) => [result.toolName, result.isError])).toEqual([
    ["ToolSearch", false],
    [host.refreshesToolsEachTurn ? ECHO_TOOL : "McpCall", false],
  ]);
  expect(results[1]!.text).toBe(`Echo: ${ECHO_MESSAGE}`);
  await expect.poll(screen, { timeout: 30_000 }).toContain("Echoed.");

  tmux("send-keys", "-t", SESSION, "/mcp status", "Enter");
  await expect.poll(screen, { timeout: 30_000 }).toMatch(/✓ everything: connected · lazy · stdio · \d+ tools \(live\)/);

  tmux("send-keys", "-t", SESSION, "/quit", "Enter");
  await expect.poll(() => descendantProcesses("server-everything/dist/index.js"), { timeout: 30_000 }).toEqual([]);
});

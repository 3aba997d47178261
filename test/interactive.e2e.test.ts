/**
 * Interactive mode: the real `pi` TUI in a terminal (tmux), the user typing a prompt and `/mcp status`. The model
 * finds the echo tool and calls it within that prompt, as in the other modes. And a tool under `approveTools` asks
 * in the TUI's dialog and runs once the user picks "Allow once", also when a codemode script calls it.
 */
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, expect, test } from "vitest";
import { ECHO_MESSAGE, ECHO_TOOL } from "./fixtures/faux-scripts/mcp-echo-steps.ts";
import type { ToolResultRecord } from "./helpers/faux-script.ts";
import type { FauxRecordLine } from "./helpers/faux-provider-extension.ts";
import { currentHost } from "./helpers/hosts.ts";
import { itemsRan, itemsServer, warmCache } from "./helpers/items-fixture.ts";
import { type McpDirs, mcpDirs, REAL_SERVERS } from "./helpers/mcp-setup.ts";
import { ordersLog, ordersServer } from "./helpers/orders-task.ts";
import { type PiTui, startPiTui } from "./helpers/pi-tui.ts";
import { processesWithMarker } from "./helpers/processes.ts";

const host = currentHost();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

let tui: PiTui;
const screen = () => tui.history();
const keys = (...names: string[]) => tui.keys(...names);

async function toolResults(recordFile: string): Promise<ToolResultRecord[]> {
  if (!existsSync(recordFile)) return [];
  const lines = (await readFile(recordFile, "utf8"))
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as FauxRecordLine);
  return lines.flatMap((line) => ("toolResult" in line ? [line.toolResult] : []));
}

/** Starts the real `pi` TUI with the adapter and a faux model script, ready for keys; returns the file its tool results go to. */
async function startTui(dirs: McpDirs, script: string, env: Record<string, string> = {}): Promise<string> {
  const recordFile = join(dirs.agentDir, "record.jsonl");
  tui = await startPiTui({ ...dirs, extensions: [script], env: { PI_FAUX_RECORD: recordFile, ...env }, columns: 200, rows: 50 });
  cleanups.push(() => tui.close());
  await tui.ready();
  return recordFile;
}

test(`interactive mode on Pi ${host.version}: a typed prompt finds and calls a tool; /mcp status shows it; quitting leaves nothing`, async () => {
  const dirs = await mcpDirs({ mcpServers: { everything: REAL_SERVERS.everything } });
  cleanups.push(dirs.cleanup);
  const recordFile = await startTui(dirs, "test/fixtures/faux-scripts/mcp-echo.ts");

  await expect.poll(screen, { timeout: 30_000 }).toContain("MCP ");
  keys("echo something", "Enter");
  await expect.poll(() => toolResults(recordFile), { timeout: 30_000 }).toHaveLength(2);
  const results = await toolResults(recordFile);
  expect(results.map((result) => [result.toolName, result.isError])).toEqual([
    ["ToolSearch", false],
    [host.refreshesToolsEachTurn ? ECHO_TOOL : "McpCall", false],
  ]);
  expect(results[1]!.text).toBe(`Echo: ${ECHO_MESSAGE}`);
  await expect.poll(screen, { timeout: 30_000 }).toContain("Echoed.");

  keys("/mcp status", "Enter");
  await expect.poll(screen, { timeout: 30_000 }).toMatch(/✓ everything: connected · lazy · stdio · MCP 2025-11-25 · \d+ tools · pid \d+/);

  keys("/quit", "Enter");
  await expect.poll(() => processesWithMarker(dirs.agentDir), { timeout: 30_000 }).toEqual([]); // Pi and its servers
});

test(`interactive mode on Pi ${host.version}: an approveTools tool asks in the TUI and runs after "Allow once"; the other tool runs unasked`, async () => {
  const dirs = await mcpDirs({ mcpServers: { items: itemsServer({ approveTools: ["delete_*"], directTools: true }) } });
  cleanups.push(dirs.cleanup);
  await warmCache(dirs, "items");
  const ranBefore = itemsRan(dirs).length;
  const steps = join(dirs.cwd, "steps.json");
  const calls = [
    { name: "items__delete_item", arguments: { id: "tmux" } },
    { name: "items__echo", arguments: { text: "unasked" } },
  ];
  await writeFile(steps, JSON.stringify([{ toolCalls: calls }, "Deleted."]));
  const recordFile = await startTui(dirs, "test/helpers/faux-json-script.ts", { PI_FAUX_STEPS: steps });

  await expect.poll(screen, { timeout: 30_000 }).toContain("MCP ");
  keys("delete the tmux item", "Enter");
  await expect.poll(screen, { timeout: 30_000 }).toContain('MCP server "items" wants to run delete_item with {"id":"tmux"}. Allow it?');
  expect(screen()).toMatch(
    /Allow once[\s\S]*Allow delete_item for this session[\s\S]*Allow every tool of items for this session[\s\S]*Deny/,
  );
  expect(itemsRan(dirs).slice(ranBefore)).not.toContain("delete_item");
  keys("Enter");
  await expect.poll(() => toolResults(recordFile), { timeout: 30_000 }).toHaveLength(2);
  const results = await toolResults(recordFile);
  expect(results.map((result) => [result.toolName, result.isError, result.text]).sort()).toEqual([
    ["items__delete_item", false, "deleted tmux"],
    ["items__echo", false, "unasked"],
  ]);
  expect(itemsRan(dirs).slice(ranBefore).sort()).toEqual(["delete_item", "echo"]);
  await expect.poll(screen, { timeout: 30_000 }).toContain("Deleted.");
  keys("/quit", "Enter");
  await expect.poll(() => processesWithMarker(dirs.agentDir), { timeout: 30_000 }).toEqual([]); // Pi and its servers
});

test.skipIf(host.version.startsWith("1."))(
  `interactive mode on Pi ${host.version}: a codemode script calling an approveTools tool asks in the TUI; allowed once, the call runs`,
  async () => {
    const dirs = await mcpDirs({ mcpServers: { orders: ordersServer({ approveTools: ["refund_*"] }) }, settings: { script: true } });
    cleanups.push(dirs.cleanup);
    await warmCache(dirs, "orders");
    const steps = join(dirs.cwd, "steps.json");
    const code = "return (await tools.orders__refund_order({ id: 'ORD-1004' })).content[0].text;";
    await writeFile(steps, JSON.stringify([{ toolCalls: [{ name: "codemode", arguments: { code } }] }, "Refunded."]));
    const recordFile = await startTui(dirs, "test/helpers/faux-json-script.ts", { PI_FAUX_STEPS: steps });

    await expect.poll(screen, { timeout: 30_000 }).toContain("MCP ");
    keys("refund order 1004", "Enter");
    await expect
      .poll(screen, { timeout: 30_000 })
      .toContain('MCP server "orders" wants to run refund_order with {"id":"ORD-1004"}. Allow it?');
    expect(ordersLog(dirs)).toEqual([]);
    keys("Enter");
    await expect.poll(() => toolResults(recordFile), { timeout: 30_000 }).toHaveLength(1);
    expect((await toolResults(recordFile)).map((result) => [result.toolName, result.isError, result.text])).toEqual([
      ["codemode", false, "refunded ORD-1004"],
    ]);
    expect(ordersLog(dirs)).toEqual([{ refund: "ORD-1004" }]);
    await expect.poll(screen, { timeout: 30_000 }).toContain("Refunded.");
    keys("/quit", "Enter");
    await expect.poll(() => processesWithMarker(dirs.agentDir), { timeout: 30_000 }).toEqual([]); // Pi and its servers
  },
);

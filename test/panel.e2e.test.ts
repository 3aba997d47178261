/**
 * The `/mcp` panel in the real `pi` TUI (tmux): the servers with their state, tools and source; Enter opens a
 * server's actions; "Disable" asks which file, writes it (comments kept) and the panel comes back showing the server
 * disabled; "Enable" brings it back; after an action the cursor stays on its server; a server that failed offers
 * "Show last error", the text /mcp status shows under it (its stderr lines too). The screens are saved to
 * $PANEL_CAPTURE when set (for the notes).
 */
import { existsSync } from "node:fs";
import { appendFile, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, expect, test } from "vitest";
import { currentHost } from "./helpers/hosts.ts";
import { itemsServer, warmCache } from "./helpers/items-fixture.ts";
import { type McpDirs, mcpDirs } from "./helpers/mcp-setup.ts";
import { SLOW_START_STATUS } from "./fixtures/extensions/slow-session-start.ts";
import { type PiTui, startPiTui } from "./helpers/pi-tui.ts";
import { processesWithMarker } from "./helpers/processes.ts";

const host = currentHost();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const SLOW_START = "test/fixtures/extensions/slow-session-start.ts";
let tui: PiTui;
const screen = () => tui.screen();
const keys = (...names: string[]) => tui.keys(...names);

async function save(title: string): Promise<void> {
  const file = process.env.PANEL_CAPTURE;
  if (file) await appendFile(file, `===== Pi ${host.version}: ${title} =====\n${screen().trimEnd()}\n\n`);
}

/** The real `pi` TUI with the adapter, a model that is never asked, and the cwd and agent dir of `dirs`; ready for keys. */
async function startTui(dirs: McpDirs, extensions: string[] = []): Promise<void> {
  const steps = join(dirs.agentDir, "steps.json");
  await writeFile(steps, "[]");
  tui = await startPiTui({ ...dirs, extensions: ["test/helpers/faux-json-script.ts", ...extensions], env: { PI_FAUX_STEPS: steps } });
  cleanups.push(() => tui.close());
  await tui.ready();
}

const CONFIG = (items: Record<string, unknown>) => `{
  // servers for the panel test
  "mcpServers": {
    "items": ${JSON.stringify(items)}, /* the inventory */
    "spare": { "command": "pi-mcp-no-such-command", "enabled": false }
  }
}
`;

test(`the /mcp panel on Pi ${host.version}: servers with state, tools and source; Enter → Disable → file → panel shows it disabled`, async () => {
  const dirs = await mcpDirs({ mcpServers: { items: itemsServer() } });
  cleanups.push(dirs.cleanup);
  await warmCache(dirs, "items");
  const userFile = join(dirs.agentDir, "mcp.json");
  await writeFile(userFile, CONFIG(itemsServer()));
  await startTui(dirs);
  await expect.poll(screen, { timeout: 30_000 }).toContain("MCP 0/1 up");

  await tui.command("mcp");
  await expect.poll(screen, { timeout: 30_000 }).toContain("MCP servers (2)");
  expect(screen()).toMatch(/→ items +not started · 10 tools \(from the cache, listed [^)]+\) · user: /);
  expect(screen()).toMatch(/spare +disabled · user: /);
  await save("/mcp opens the panel");

  keys("Enter");
  await expect.poll(screen, { timeout: 30_000 }).toContain('MCP server "items"');
  expect(screen()).toMatch(/Reconnect[\s\S]*Disable[\s\S]*Show tools/);
  expect(screen()).not.toContain("Show last error"); // it has not failed
  await save("Enter on items: its actions");
  keys("Down");
  keys("Enter");
  await expect.poll(screen, { timeout: 30_000 }).toContain('Disable MCP server "items" in');
  // The file that defines it first; the project's, which does not exist, after it and said to be new.
  expect(screen()).toMatch(/→ user: [^\n]*\n[^\n]*project: [^\n]*\.pi\/mcp\.json \(a new file\)/);
  await save("Disable: which file");
  keys("Enter");
  await expect.poll(screen, { timeout: 30_000 }).toMatch(/→ items +disabled · user: /);
  await save("the panel again, items disabled");
  // Only the entry changed: the new field on a line of its own, everything else byte for byte.
  expect(await readFile(userFile, "utf8")).toBe(
    CONFIG(itemsServer()).replace("}}, /* the inventory */", '},\n      "enabled": false}, /* the inventory */'),
  );

  keys("Enter");
  await expect.poll(screen, { timeout: 30_000 }).toMatch(/Enable[\s\S]*Show tools/);
  keys("Enter");
  await expect.poll(screen, { timeout: 30_000 }).toContain('Enable MCP server "items" in');
  keys("Enter");
  await expect.poll(screen, { timeout: 30_000 }).toMatch(/→ items +not started · 10 tools/);
  expect(existsSync(join(dirs.cwd, ".pi", "mcp.json"))).toBe(false);
  keys("Escape");
  await expect.poll(screen, { timeout: 30_000 }).not.toContain("MCP servers (2)");
  await save("Esc closed the panel");

  keys("/quit", "Enter");
  await expect.poll(() => processesWithMarker(dirs.agentDir), { timeout: 30_000 }).toEqual([]); // Pi and its servers
}, 300_000); // a dozen screens, each waited for: room for a loaded machine

/** A server that fails at start, saying why on stderr. */
const BROKEN = { command: process.execPath, args: ["-e", "console.error('boom: API_KEY is not set'); process.exit(3)"] };

/** A server skipped for a secret that is not set. */
const NEEDS_KEY = { command: "needskey-mcp", env: { API_KEY: "${NEEDSKEY_API_KEY}" } };

test(`the /mcp panel on Pi ${host.version}: after an action, the cursor stays on the server it acted on; a failed server shows its last error; a skipped one why, and Remove`, async () => {
  const dirs = await mcpDirs({
    mcpServers: { spare: { command: "pi-mcp-no-such-command", enabled: false }, broken: BROKEN, needskey: NEEDS_KEY },
  });
  cleanups.push(dirs.cleanup);
  await startTui(dirs);
  // It has no cached tools, so the startup tried to list them: wait for that to fail, not to race the Reconnect.
  await expect.poll(screen, { timeout: 30_000 }).toContain("MCP 0/1 up · 0 tools · 1 failing");

  await tui.command("mcp");
  await expect.poll(screen, { timeout: 30_000 }).toContain("MCP servers (3)");
  expect(screen()).toMatch(/needskey +skipped: "env\.API_KEY": environment variable NEEDSKEY_API_KEY is not set · user: \//);
  keys("Down");
  keys("Enter");
  // The dialog itself: the startup's failure notice already says 'MCP server "broken"', and a key sent before the
  // dialog is up is lost.
  await expect.poll(screen, { timeout: 30_000 }).toMatch(/MCP server "broken"[^\n]*\n[\s\S]*→ Reconnect/);
  keys("Enter"); // Reconnect
  await expect.poll(screen, { timeout: 30_000 }).toContain("✗ broken: ");
  // The panel again, on the second row (not back on the first).
  await expect.poll(screen, { timeout: 30_000 }).toMatch(/→ broken +failed/);
  await save("Reconnect on broken: the panel again, on broken");

  keys("Enter");
  await expect.poll(screen, { timeout: 30_000 }).toMatch(/Reconnect[\s\S]*Show last error[\s\S]*Disable[\s\S]*Show tools/);
  keys("Down");
  keys("Enter");
  // The failure's own notice showed the stderr lines too, but it scrolls away; this is the status's text.
  await expect.poll(screen, { timeout: 30_000 }).toContain("last error: ");
  expect(screen()).toMatch(
    /last error: MCP server "broken" failed to connect: the server process exited before it was ready.*\n *Last stderr lines:\n *boom: API_KEY is not set/,
  );
  await save("Show last error on broken");

  // The panel again, on broken; the skipped server is the row below it.
  await expect.poll(screen, { timeout: 30_000 }).toMatch(/→ broken +failed/);
  keys("Down");
  keys("Enter");
  await expect
    .poll(screen, { timeout: 30_000 })
    .toMatch(/MCP server "needskey" \(skipped\)[\s\S]*Show why it is skipped[\s\S]*Disable[\s\S]*Remove/);
  await save("Enter on a skipped server");
  keys("Enter");
  await expect.poll(screen, { timeout: 30_000 }).toMatch(/✗ needskey: skipped\n +error: /);
  await expect.poll(screen, { timeout: 30_000 }).toMatch(/→ needskey +skipped/);
  keys("Enter");
  await expect.poll(screen, { timeout: 30_000 }).toMatch(/MCP server "needskey" \(skipped\)/);
  keys("Down", "Down");
  keys("Enter");
  await expect.poll(screen, { timeout: 30_000 }).toContain("MCP servers (2)");
  expect(JSON.parse(await readFile(join(dirs.agentDir, "mcp.json"), "utf8")).mcpServers.needskey).toBeUndefined();

  keys("Escape");
  await expect.poll(screen, { timeout: 30_000 }).not.toContain("MCP servers (2)");
  keys("/quit", "Enter");
}, 300_000);

test(`the /mcp panel on Pi ${host.version} with no server offers the ways to add one; a failed search says /mcp search; Esc closes it`, async () => {
  // Nothing listens on port 1: the search fails.
  const dirs = await mcpDirs({ mcpServers: {}, settings: { registry: { url: "http://127.0.0.1:1" } } });
  cleanups.push(dirs.cleanup);
  // The adapter draws nothing at session_start without a server: ready() must still wait until every extension's
  // session_start has run (the one typed into before that was lost), a slow one loaded after the adapter included.
  await startTui(dirs, [SLOW_START]);
  expect(screen()).toContain(SLOW_START_STATUS);

  await tui.command("mcp");
  await expect.poll(screen, { timeout: 30_000 }).toContain("MCP servers (0)");
  expect(screen()).toContain("No servers yet. To add one:");
  // Another tool's config may be found on this machine (an import row first); the registry and a command always.
  expect(screen()).toMatch(/\+ Add from the MCP Registry +search http:\/\/127\.0\.0\.1:1, then pick a server/);
  expect(screen()).toMatch(/\+ Add by command or URL +a command that starts a stdio server, or an http\(s\) URL/);
  expect(screen()).not.toContain("No matching");
  await save("the panel with no server");
  // The registry row is the last but one (the list wraps round).
  keys("Up", "Up");
  keys("Enter");
  await expect.poll(screen, { timeout: 30_000 }).toContain("Search the MCP Registry for");
  keys("everything");
  keys("Enter");
  await expect.poll(screen, { timeout: 30_000 }).toContain("/mcp search: the MCP registry at http://127.0.0.1:1 ");
  await expect.poll(screen, { timeout: 30_000 }).toContain("MCP servers (0)");
  keys("Escape");
  await expect.poll(screen, { timeout: 30_000 }).not.toContain("MCP servers (0)");
  keys("/quit", "Enter");
}, 300_000);

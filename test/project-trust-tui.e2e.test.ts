/**
 * Project trust answered by the user in the real `pi` TUI (tmux): Pi 1.x's own "Trust project folder?" for a project
 * with `.pi/mcp.json`, and the adapter's own question for a file no Pi guards (`.mcp.json`, every host). The
 * project's server is the items fixture, eager (it would start with the session) and leaving two traces when it
 * does: its pid in a file, and a process whose environment names that file.
 */
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { currentHost } from "./helpers/hosts.ts";
import { ITEMS_SERVER, itemsServer } from "./helpers/items-fixture.ts";
import { type McpDirs, mcpDirs } from "./helpers/mcp-setup.ts";
import { type PiTui, startPiTui, TUI_STEP_TIMEOUT_MS } from "./helpers/pi-tui.ts";
import { processesWithMarker } from "./helpers/processes.ts";

const host = currentHost();
/** Each test starts Pi, answers, opens the panel and the status, and quits: a dozen waited-for screens. */
const TEST_TIMEOUT_MS = 180_000;
const PI_QUESTION = "Trust project folder?";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Project extends McpDirs {
  /** The file the project's server writes its pid to when it starts; its path also marks its process. */
  startedFile: string;
}

/** A user config with no server and a project whose `file` names the eager items server "repo". */
async function projectWithServer(file: string): Promise<Project> {
  const dirs = await mcpDirs({ mcpServers: {} });
  cleanups.push(dirs.cleanup);
  const startedFile = join(dirs.cwd, "repo-started.log");
  const repo = itemsServer({ lifecycle: "eager", env: { ITEMS_STARTED: startedFile } });
  await mkdir(join(dirs.cwd, ".pi"), { recursive: true });
  await writeFile(join(dirs.cwd, file), JSON.stringify({ mcpServers: { repo } }));
  return { ...dirs, startedFile };
}

/** Pi started in the project, its `question` answered with `option` in the TUI; ready for keys. */
async function startAnswering(project: Project, question: string, option: string): Promise<PiTui> {
  const steps = join(project.agentDir, "steps.json");
  await writeFile(steps, "[]");
  const tui = await startPiTui({ ...project, extensions: ["test/helpers/faux-json-script.ts"], env: { PI_FAUX_STEPS: steps } });
  cleanups.push(() => tui.close());
  await expect.poll(tui.screen, { timeout: TUI_STEP_TIMEOUT_MS }).toContain(question);
  await choose(tui, option);
  await tui.ready();
  return tui;
}

/** Moves the cursor of the dialog on screen down to `option` (a whole line) and picks it. */
async function choose(tui: PiTui, option: string): Promise<void> {
  const selected = () => /^ *→ (.*?) *$/m.exec(tui.screen())?.[1];
  for (let moves = 0; selected() !== option; moves++) {
    if (moves === 10) throw new Error(`no option "${option}" in the dialog:\n${tui.screen()}`);
    const before = selected();
    tui.keys("Down");
    await expect.poll(selected, { timeout: TUI_STEP_TIMEOUT_MS }).not.toBe(before);
  }
  tui.keys("Enter");
}

/** The `/mcp status` report, once it is on screen (with the screens before it: the startup may have said the same). */
async function status(tui: PiTui): Promise<string> {
  const reports = () => tui.history().split("Project MCP config not used").length;
  const before = reports();
  tui.keys("/mcp status", "Enter");
  await expect.poll(reports, { timeout: TUI_STEP_TIMEOUT_MS }).toBeGreaterThan(before);
  return tui.history();
}

/** Opens the `/mcp` panel, keeps its screen, closes it. */
async function panel(tui: PiTui, servers: number): Promise<string> {
  await tui.command("mcp");
  await expect.poll(tui.screen, { timeout: TUI_STEP_TIMEOUT_MS }).toContain(`MCP servers (${servers})`);
  const shown = tui.screen();
  tui.keys("Escape");
  await expect.poll(tui.screen, { timeout: TUI_STEP_TIMEOUT_MS }).not.toContain(`MCP servers (${servers})`);
  return shown;
}

/**
 * The project's config was not used: the panel lists no server, `/mcp status` says why (`reason`) and shows no line
 * of the project's server, and the server never started (no pid written, no process running).
 */
async function expectNotUsed(tui: PiTui, project: Project, file: string, reason: string): Promise<void> {
  const shown = await panel(tui, 0);
  expect(shown).toContain("No servers yet. To add one:");
  expect(shown).not.toMatch(/→ repo/);
  const report = await status(tui);
  expect(report).toContain(`Project MCP config not used (${join(project.cwd, file)}; servers: repo): ${reason}`);
  expect(report).not.toMatch(/repo: (connected|connecting)/);
  expect(tui.screen()).not.toContain("MCP 1/1 up");
  expect(existsSync(project.startedFile)).toBe(false);
  expect(await processesWithMarker(project.startedFile)).toEqual([]);
}

/** Quits Pi: it ends, and so does every server it started. */
async function quit(tui: PiTui, project: Project): Promise<void> {
  tui.keys("/quit", "Enter");
  await expect.poll(() => processesWithMarker(project.agentDir), { timeout: TUI_STEP_TIMEOUT_MS }).toEqual([]);
}

describe.runIf(host.version.startsWith("1."))(`Pi ${host.version}'s own "Trust project folder?" answered in the TUI`, () => {
  test(
    '"Do not trust": the project\'s .pi/mcp.json server is not started nor listed; /mcp status says Pi does not trust it',
    async () => {
      const project = await projectWithServer(".pi/mcp.json");
      const tui = await startAnswering(project, PI_QUESTION, "Do not trust");
      await expectNotUsed(tui, project, ".pi/mcp.json", "Pi does not trust this project");
      await quit(tui, project);
      expect(existsSync(project.startedFile)).toBe(false); // not started late either
    },
    TEST_TIMEOUT_MS,
  );

  test(
    '"Trust": the project\'s .pi/mcp.json server starts with the session and the panel lists it with its tools',
    async () => {
      const project = await projectWithServer(".pi/mcp.json");
      const tui = await startAnswering(project, PI_QUESTION, "Trust");
      await expect.poll(tui.screen, { timeout: TUI_STEP_TIMEOUT_MS }).toContain("MCP 1/1 up · 10 tools");

      expect(await panel(tui, 1)).toMatch(/→ repo +connected · 10 tools[^\n]* · project: [^\n]*\.pi\/mcp\.json/);
      expect(existsSync(project.startedFile)).toBe(true);
      expect(await processesWithMarker(project.startedFile)).toHaveLength(1);
      // The agent dir marks the server too (what quit() waits to see gone): Pi's environment is the server's.
      const marked = await processesWithMarker(project.agentDir);
      expect(marked.filter((info) => info.cmdline.includes(ITEMS_SERVER))).toHaveLength(1);
      await quit(tui, project);
    },
    TEST_TIMEOUT_MS,
  );
});

describe(`the adapter's own question about the project's MCP config, answered in the TUI of Pi ${host.version}`, () => {
  test(
    '"No": the project\'s .mcp.json server is not started nor listed; /mcp status says the user answered No',
    async () => {
      const project = await projectWithServer(".mcp.json");
      const tui = await startAnswering(project, "This project's MCP config (.mcp.json) defines servers: repo.", "No");
      // "No" now, and "No for these files as they are now" once the status reads the config again.
      await expectNotUsed(tui, project, ".mcp.json", "you answered No");
      await quit(tui, project);
      expect(existsSync(project.startedFile)).toBe(false); // not started late either
    },
    TEST_TIMEOUT_MS,
  );
});

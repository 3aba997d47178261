/**
 * Project trust and `--no-mcp` in the real Pi (SDK sessions with a UI that answers dialogs, and the CLI in print
 * mode, where nobody can be asked), against the real items fixture server.
 */
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { callLoaded, ENTRY, search, waitForStatus } from "./helpers/fault-setup.ts";
import { currentHost, REPO_ROOT } from "./helpers/hosts.ts";
import { ITEMS_SERVER, itemsRan, itemsServer } from "./helpers/items-fixture.ts";
import { type McpDirs, mcpDirs } from "./helpers/mcp-setup.ts";
import { runPrint } from "./helpers/pi-print.ts";
import { type PiSession, startSession } from "./helpers/pi-session.ts";
import { descendantProcesses } from "./helpers/processes.ts";

const host = currentHost();
const QUESTION = "This project's MCP config";
/** Print-mode tests run the CLI two or three times, each a Pi start and a server start. */
const CLI_RUNS_TIMEOUT_MS = 180_000;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * A user file with no server, and a project whose config file has an eager server (it would start at once):
 * `.mcp.json` by default, a file no Pi guards with its own trust (so the adapter decides on every host).
 */
async function projectWithServer(file = ".mcp.json"): Promise<McpDirs> {
  const dirs = await mcpDirs({ mcpServers: {} });
  cleanups.push(dirs.cleanup);
  await mkdir(join(dirs.cwd, ".pi"), { recursive: true });
  await writeFile(join(dirs.cwd, file), JSON.stringify({ mcpServers: { repo: itemsServer({ lifecycle: "eager" }) } }));
  return dirs;
}

async function sessionAnswering(dirs: McpDirs, answer: string | undefined): Promise<PiSession> {
  const pi = await startSession({
    extensions: [ENTRY],
    agentDir: dirs.agentDir,
    cwd: dirs.cwd,
    dialogs: { select: (title) => (title.startsWith(QUESTION) ? answer : undefined) },
  });
  cleanups.push(() => pi.dispose());
  return pi;
}

const questions = (pi: PiSession) => pi.ui.filter((entry) => entry.kind === "dialog" && entry.title.startsWith(QUESTION));

describe(`project trust on Pi ${host.version} where Pi decides nothing (the adapter asks)`, () => {
  test("answered No: the project's eager server never starts, its tools are not offered, /mcp status says why and how", async () => {
    const dirs = await projectWithServer();
    const pi = await sessionAnswering(dirs, "No");
    const status = await waitForStatus(pi, /you answered No/);
    expect(status).toContain(`Project MCP config not used (${join(dirs.cwd, ".mcp.json")}; servers: repo)`);
    expect(status).toContain("--mcp-trust-project");
    expect(questions(pi)).toHaveLength(1);
    expect(pi.activeToolNames()).not.toContain("ToolSearch"); // no server: the adapter costs the model nothing
    expect(await descendantProcesses(ITEMS_SERVER)).toEqual([]);
    expect(existsSync(join(dirs.agentDir, "mcp-cache.json"))).toBe(false); // never listed either

    await pi.restart(); // remembered for this content: not asked again
    await waitForStatus(pi, /you answered No for these files as they are now/);
    expect(questions(pi)).toHaveLength(1);
    expect(await descendantProcesses(ITEMS_SERVER)).toEqual([]);
  });

  test("answered Yes: the project's servers come in without /reload, and the answer is remembered until a file changes", async () => {
    const dirs = await projectWithServer();
    const pi = await sessionAnswering(dirs, "Yes, use them");
    await waitForStatus(pi, /✓ repo: connected/);
    pi.script([search("select:repo__echo"), callLoaded("repo__echo", { text: "trusted" }), "done"]);
    await pi.prompt("echo");
    expect(pi.toolResults.map((result) => result.text).join("\n")).toContain("repo__echo");
    expect(itemsRan(dirs)).toContain("echo");

    await pi.restart();
    await waitForStatus(pi, /✓ repo: connected/);
    expect(questions(pi)).toHaveLength(1);

    // The file changed: what was trusted is not what it says now.
    await writeFile(
      join(dirs.cwd, ".mcp.json"),
      JSON.stringify({ mcpServers: { repo: itemsServer({ lifecycle: "eager", debug: true }) } }),
    );
    await pi.restart();
    await waitForStatus(pi, /✓ repo: connected/);
    expect(questions(pi)).toHaveLength(2);
  });
});

describe(`project trust and --no-mcp in print mode on Pi ${host.version}`, () => {
  test(
    "nobody to ask: the project's servers stay off and /mcp status says how to allow them; --mcp-trust-project allows them",
    async () => {
      const dirs = await projectWithServer();
      const untrusted = await runPrint({
        extensions: [REPO_ROOT],
        script: [],
        prompts: ["/mcp status"],
        agentDir: dirs.agentDir,
        cwd: dirs.cwd,
      });
      const said = untrusted.stdout + untrusted.stderr;
      expect(said).toContain("the project is not trusted and there is no UI to ask. To use them: start Pi with --mcp-trust-project");
      expect(said).toContain(`"trustProjectServers": true } in ${join(dirs.agentDir, "mcp.json")}`);
      expect(said).not.toContain("repo: connected");
      expect(existsSync(join(dirs.agentDir, "mcp-cache.json"))).toBe(false);

      const trusted = await runPrint({
        extensions: [REPO_ROOT],
        script: [],
        prompts: ["/mcp status"],
        args: ["--mcp-trust-project"],
        agentDir: dirs.agentDir,
        cwd: dirs.cwd,
      });
      expect(trusted.exitCode).toBe(0);
      expect(trusted.stdout + trusted.stderr).toContain("✓ repo: connected");
      expect(trusted.stdout + trusted.stderr).not.toContain("Project MCP config not used");
    },
    CLI_RUNS_TIMEOUT_MS,
  );

  test(
    "--no-mcp: no server listed or started, no ToolSearch offered, /mcp says MCP is off",
    async () => {
      const dirs = await mcpDirs({ mcpServers: { items: itemsServer({ lifecycle: "eager" }) } });
      cleanups.push(dirs.cleanup);
      const on = await runPrint({
        extensions: [REPO_ROOT],
        script: ["hi"],
        prompts: ["/mcp status", "hello"],
        agentDir: dirs.agentDir,
        cwd: dirs.cwd,
      });
      expect(on.requests[0]!.tools.map((tool) => tool.name)).toContain("ToolSearch");
      expect(on.stdout + on.stderr).toContain("✓ items: connected");
      expect(existsSync(join(dirs.agentDir, "mcp-cache.json"))).toBe(true); // the eager server was listed

      const other = await mcpDirs({ mcpServers: { items: itemsServer({ lifecycle: "eager" }) } });
      cleanups.push(other.cleanup);
      const off = await runPrint({
        extensions: [REPO_ROOT],
        script: ["hi"],
        prompts: ["/mcp status", "hello"],
        args: ["--no-mcp"],
        agentDir: other.agentDir,
        cwd: other.cwd,
      });
      expect(off.exitCode).toBe(0);
      expect(off.stdout + off.stderr).toContain("MCP is off for this run (--no-mcp)");
      expect(off.requests[0]!.tools.map((tool) => tool.name)).not.toContain("ToolSearch");
      expect(existsSync(join(other.agentDir, "mcp-cache.json"))).toBe(false);
    },
    CLI_RUNS_TIMEOUT_MS,
  );
});

// Pi 1.x guards `.pi/mcp.json` with its own project trust (0.87 has the trust model but does not guard that file).
describe.runIf(host.version.startsWith("1."))(`project trust decided by Pi ${host.version} itself`, () => {
  test(
    "--no-approve: the project's .pi/mcp.json servers stay off and /mcp status says Pi does not trust it; --approve: on",
    async () => {
      const dirs = await projectWithServer(".pi/mcp.json");
      const declined = await runPrint({
        extensions: [REPO_ROOT],
        script: [],
        prompts: ["/mcp status"],
        args: ["--no-approve"],
        agentDir: dirs.agentDir,
        cwd: dirs.cwd,
      });
      expect(declined.stdout + declined.stderr).toContain("Pi does not trust this project");
      expect(declined.stdout + declined.stderr).not.toContain("repo: connected");
      expect(existsSync(join(dirs.agentDir, "mcp-cache.json"))).toBe(false);
      // Our own flag does not overrule Pi's decision.
      const flagged = await runPrint({
        extensions: [REPO_ROOT],
        script: [],
        prompts: ["/mcp status"],
        args: ["--no-approve", "--mcp-trust-project"],
        agentDir: dirs.agentDir,
        cwd: dirs.cwd,
      });
      expect(flagged.stdout + flagged.stderr).not.toContain("repo: connected");

      const approved = await runPrint({
        extensions: [REPO_ROOT],
        script: [],
        prompts: ["/mcp status"],
        args: ["--approve"],
        agentDir: dirs.agentDir,
        cwd: dirs.cwd,
      });
      expect(approved.stdout + approved.stderr).toContain("✓ repo: connected");
    },
    CLI_RUNS_TIMEOUT_MS,
  );
});

// Pi 1.x: servers other extensions register are ours to connect (pi.getMcpServers, mcp_servers_change).
describe.runIf(host.version.startsWith("1."))(`servers other extensions register on Pi ${host.version}`, () => {
  test("listed with the extension as source, found and called through ToolSearch; added and removed as they come and go", async () => {
    const dirs = await mcpDirs({ mcpServers: {} });
    cleanups.push(dirs.cleanup);
    const fixture = join(REPO_ROOT, "test/fixtures/extensions/registers-mcp-server.ts");
    const pi = await startSession({ extensions: [ENTRY, fixture], agentDir: dirs.agentDir, cwd: dirs.cwd });
    cleanups.push(() => pi.dispose());
    const status = await waitForStatus(pi, /reg: [^\n]*10 tools/);
    expect(status).toContain(`source: ${fixture} (extension)`);
    pi.script([search("select:reg__echo"), callLoaded("reg__echo", { text: "registered" }), "done"]);
    await pi.prompt("echo");
    expect(itemsRan(dirs)).toContain("echo");

    await pi.command("/reg-late");
    await waitForStatus(pi, /✓ late: connected/);
    await pi.command("/reg-drop");
    const after = await waitForStatus(pi, /^(?![\s\S]*late:)/);
    expect(after).toContain("reg:");
    expect(pi.errors).toEqual([]);
  });
});

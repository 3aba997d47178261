/**
 * Servers from everywhere a user gets them, in the real Pi of this run's host:
 * - the MCP Registry (a local one serving real `server.json` documents, test/helpers/registry-fixture.ts): with no
 *   server, `/mcp status` offers the three ways in; `/mcp search` lists what matches and adding the npm entry makes
 *   its tools searchable in the same session (through our npx path, from an npm cache seeded as npx leaves it: the
 *   npm registry is out of reach here); a remote with a secret header is written with `${VAR}` and connects with the
 *   variable's value; a pypi entry whose runtime is missing is one line naming what to install; another tool's config
 *   found on this machine is imported; a registry that is down is one line (print mode);
 * - a Pi package with `pi.mcp`, a Claude Code plugin folder (servers and skills), each shown with its source;
 * - upstream's runtime registration event from a second extension, loaded before or after the adapter;
 * - the `/mcp` panel in the TUI (tmux): with no server, the ways in; "Add from the MCP Registry" adds a server.
 */
import { createHash } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { callLoaded, ENTRY, faultHarness, search, waitForStatus } from "./helpers/fault-setup.ts";
import { startFixtureProcess } from "./helpers/fixture-process.ts";
import { currentHost, REPO_ROOT } from "./helpers/hosts.ts";
import { itemsRan, itemsServer } from "./helpers/items-fixture.ts";
import { runPrint } from "./helpers/pi-print.ts";
import { startSession } from "./helpers/pi-session.ts";
import { startPiTui } from "./helpers/pi-tui.ts";
import { processesWithMarker } from "./helpers/processes.ts";
import { startNpmRegistry } from "./helpers/npm-registry-fixture.ts";
import { type RegistryFixture, startRegistry } from "./helpers/registry-fixture.ts";

const host = currentHost();
const harness = faultHarness();
const EVERYTHING = "io.github.modelcontextprotocol/server-everything";
const EVERYTHING_SPEC = "@modelcontextprotocol/server-everything@2.0.0";
const RUNTIME_FIXTURE = join(REPO_ROOT, "test/fixtures/extensions/registers-at-runtime.ts");

let root: string;
/** An npm cache whose `_npx` holds the registry entry's npm package, as `npx -y <spec>` leaves it. */
let npmCache: string;
/** A home whose Cursor config defines a server (another tool's config found on this machine). */
let home: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "mcp-sources-"));
  npmCache = join(root, "npm-cache");
  await seedNpxInstall(npmCache);
  home = join(root, "home");
  await mkdir(join(home, ".cursor"), { recursive: true });
  await writeFile(join(home, ".cursor", "mcp.json"), JSON.stringify({ mcpServers: { cursor_items: itemsServer() } }));
});

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

/**
 * `_npx/<hash of the spec>` with the package at the version the registry entry pins. Its code is the installed
 * server-everything (the 2.0.0 the document names is not installed here; what npx would run is what matters).
 */
async function seedNpxInstall(cache: string): Promise<void> {
  const dir = join(cache, "_npx", createHash("sha512").update(EVERYTHING_SPEC).digest("hex").slice(0, 16));
  const real = join(REPO_ROOT, "node_modules/@modelcontextprotocol/server-everything");
  const pkg = join(dir, "node_modules/@modelcontextprotocol/server-everything");
  await mkdir(join(dir, "node_modules/.bin"), { recursive: true });
  await mkdir(pkg, { recursive: true });
  const manifest = JSON.parse(await readFile(join(real, "package.json"), "utf8")) as Record<string, unknown>;
  await writeFile(join(pkg, "package.json"), JSON.stringify({ ...manifest, version: "2.0.0" }));
  await symlink(join(real, "dist"), join(pkg, "dist"));
  await symlink("../@modelcontextprotocol/server-everything/dist/index.js", join(dir, "node_modules/.bin/mcp-server-everything"));
  await writeFile(
    join(dir, "package.json"),
    JSON.stringify({ dependencies: { "@modelcontextprotocol/server-everything": "^2.0.0" }, _npx: { packages: [EVERYTHING_SPEC] } }),
  );
}

/** PATH without uvx, whatever this machine has: the pypi entry's runtime is missing. */
function pathWithoutUvx(): string {
  return (process.env.PATH ?? "")
    .split(delimiter)
    .filter((dir) => dir !== "" && !existsSync(join(dir, "uvx")))
    .join(delimiter);
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe(`servers from the MCP Registry on Pi ${host.version}`, () => {
  let registry: RegistryFixture;
  let stopHttp: () => Promise<void>;

  beforeAll(async () => {
    // The remote's own host is out of reach: its URL points at a local server behind the same header check.
    const http = await startFixtureProcess(join(REPO_ROOT, "test/fixtures/servers/http-server.mjs"), "http fixture", {
      FIXTURE_TOKEN: "sekrit",
    });
    stopHttp = http.stop;
    registry = await startRegistry({ remoteUrl: { "com.apify/apify-mcp-server": `${http.base}/auth/mcp` } });
  });

  afterAll(async () => {
    await registry?.close();
    await stopHttp?.();
  });

  test("no server: the three ways in; search and add an npm entry (ToolSearch finds its tools), a remote with a secret header, a pypi entry without uvx; import", async () => {
    const dirs = await harness.dirs({}, { registry: { url: registry.url } });
    const userFile = join(dirs.agentDir, "mcp.json");
    harness.env("HOME", home);
    harness.env("npm_config_cache", npmCache);
    harness.env("PATH", pathWithoutUvx());
    harness.env("APIFY_MCP_SERVER_AUTHORIZATION", "Bearer sekrit");
    // npx looks at the project it starts in first, and this process runs in the repository, where server-everything is
    // installed: a server started from here would run through npm. Pi's own directory is the project's.
    const testDir = process.cwd();
    process.chdir(dirs.cwd);
    harness.onCleanup(() => process.chdir(testDir));
    const offered: string[][] = [];
    const session = await startSession({
      extensions: [join(REPO_ROOT, ENTRY)],
      agentDir: dirs.agentDir,
      cwd: dirs.cwd,
      // The user picks server-everything from the search results.
      dialogs: {
        select: (title, options) => {
          offered.push(options);
          // Airtable runs as an npm package or a container: the user picks npm.
          if (title.includes("how should it run?")) return options.find((option) => option.startsWith("npm "));
          return options.find((option) => option.startsWith(EVERYTHING));
        },
      },
    });
    harness.onCleanup(() => session.dispose());

    const empty = (await session.command("/mcp status")).text;
    expect(empty).toContain("MCP: no servers configured. Three ways to add one:");
    expect(empty).toContain("  1. Import what was found on this machine: /mcp import cursor (server: cursor_items)");
    expect(empty).toContain(`  2. Search the MCP registry at ${registry.url}: /mcp search <words>, then /mcp add <registry name>`);
    expect(empty).toContain(`  3. Add by command or URL: /mcp add <name> <command> [args…] or /mcp add <name> <url> (or edit ${userFile})`);

    const added = await session.command("/mcp search server");
    // Names containing "server", as the official registry matches them.
    expect(offered[0]).toEqual([
      "com.apify/apify-mcp-server 0.17.4 — Extract data from any website with thousands of scrapers, crawlers, and automations on Apify Store ⚡ · remote",
      "io.github.domdomegg/airtable-mcp-server 1.7.3 — Read and write access to Airtable database schemas, tables, and records. · npm, oci, mcpb",
      "io.github.modelcontextprotocol/server-everything 2.0.0 — MCP server that exercises all the features of the MCP protocol · npm",
    ]);
    expect(added.error).toBeUndefined();
    expect(added.text).toMatch(
      new RegExp(`^Added MCP server "server-everything" to ${escapeRegExp(userFile)}: \\d+ tools \\([^)]*server_everything__echo`),
    );
    expect(added.text).toContain(`From ${EVERYTHING} 2.0.0: npm @modelcontextprotocol/server-everything 2.0.0.`);
    const written = JSON.parse(await readFile(userFile, "utf8")) as { mcpServers: Record<string, Record<string, unknown>> };
    expect(written.mcpServers["server-everything"]).toEqual({
      command: "npx",
      args: ["-y", EVERYTHING_SPEC, "stdio"],
      description: "MCP server that exercises all the features of the MCP protocol",
    });

    // The same session: ToolSearch finds the new server's tools, and the model calls one.
    session.script([search("echo back a message"), callLoaded("server_everything__echo", { message: "from the registry" }), "done"]);
    await session.prompt("echo something");
    expect(session.toolResults.find((result) => result.toolName === "ToolSearch")?.text).toContain("server_everything__echo");
    expect(session.toolResults.at(-1)?.text).toContain("from the registry");
    // Through our npx path: node runs the package's bin, no npm parent.
    expect((await session.command("/mcp status")).text).toMatch(/✓ server-everything: [^\n]+\n {4}[^\n]+\n {4}npx: resolved to node /);

    const remote = await session.command("/mcp add com.apify/apify-mcp-server");
    expect(remote.text).toMatch(/^Added MCP server "apify-mcp-server" to [^\n]+: \d+ tools/);
    expect(remote.text).toContain("It reads APIFY_MCP_SERVER_AUTHORIZATION from Pi's environment (set now).");
    const file = await readFile(userFile, "utf8");
    expect(JSON.parse(file).mcpServers["apify-mcp-server"]).toMatchObject({
      type: "http",
      headers: { Authorization: "${APIFY_MCP_SERVER_AUTHORIZATION}" },
    });
    expect(file).not.toContain("sekrit");
    const remoteStatus = (await session.command("/mcp status apify-mcp-server")).text;
    expect(remoteStatus).toContain('\n    auth: the "Authorization" header in its config\n');
    expect(remoteStatus).not.toContain("sekrit");

    // A secret environment variable that is not set: written as a reference, and the user told what to set.
    const airtable = await session.command("/mcp add io.github.domdomegg/airtable-mcp-server");
    expect(offered.at(-1)).toEqual([
      "npm airtable-mcp-server 1.7.3",
      expect.stringMatching(/^oci docker\.io\/domdomegg\/airtable-mcp-server:1\.7\.3( \(needs docker, which is not installed here\))?$/),
    ]);
    expect(airtable.text.split("\n")).toEqual([
      `Added MCP server "airtable-mcp-server" to ${userFile}.`,
      "From io.github.domdomegg/airtable-mcp-server 1.7.3: npm airtable-mcp-server 1.7.3.",
      expect.stringMatching(
        /^It starts once these are set in Pi's environment \(then restart Pi\): AIRTABLE_API_KEY \(secret\): Airtable personal access token/,
      ),
    ]);
    expect(JSON.parse(await readFile(userFile, "utf8")).mcpServers["airtable-mcp-server"]).toMatchObject({
      command: "npx",
      args: ["-y", "airtable-mcp-server@1.7.3"],
      env: { AIRTABLE_API_KEY: "${AIRTABLE_API_KEY}" },
    });
    // Skipped until the variable is set, and still the user's to remove.
    expect((await session.command("/mcp status airtable-mcp-server")).text).toContain(
      "environment variable AIRTABLE_API_KEY is not set (it holds a secret: set it in Pi's environment, not in a config file, and start Pi again)",
    );
    expect((await session.command("/mcp remove airtable-mcp-server")).text).toBe(
      `Removed MCP server "airtable-mcp-server" from ${userFile}.`,
    );
    expect(await readFile(userFile, "utf8")).toBe(file); // as it was before the add
    const beforePypi = await readFile(userFile, "utf8");

    const pypi = await session.command("/mcp add io.github.domdomegg/time-mcp-pypi");
    expect(pypi.text).toBe(
      "/mcp add: not added: pypi time-mcp-pypi 1.0.6 runs with uvx (PyPI packages), which is not installed here: install uv (https://docs.astral.sh/uv/getting-started/installation/), then /mcp add io.github.domdomegg/time-mcp-pypi again",
    );
    expect(await readFile(userFile, "utf8")).toBe(beforePypi);

    const imported = await session.command("/mcp import cursor");
    expect(imported.text).toBe(`Imported cursor (written to "imports" in ${userFile}): 1 server, cursor_items.`);
    expect((await waitForStatus(session, /cursor_items: [^\n]*10 tools/)).split("\n")).toContain(
      `    source: ${join(home, ".cursor", "mcp.json")} (cursor)`,
    );
    expect(session.errors).toEqual([]);
  });
});

describe(`the MCP Registry in print mode on Pi ${host.version}`, () => {
  test("a search pages through several messages of one run, a NuGet-only entry marked; /mcp add says which version or package npm lacks", async () => {
    const registry = await startRegistry({ pageSize: 2 });
    harness.onCleanup(() => registry.close());
    // server-everything exists on this npm, but not at the 2.0.0 the registry entry pins; @acme/missing-mcp not at all.
    const npm = await startNpmRegistry({ "@modelcontextprotocol/server-everything": ["1.0.0", "1.1.0"] });
    harness.onCleanup(() => npm.close());
    const dirs = await harness.dirs({}, { registry: { url: registry.url } });
    const userFile = join(dirs.agentDir, "mcp.json");
    const result = await runPrint({
      extensions: [REPO_ROOT],
      script: [],
      prompts: [
        "/mcp search io.github",
        "/mcp search --more",
        "/mcp search --more",
        "/mcp search --more",
        `/mcp add ${EVERYTHING}`,
        "/mcp add missing npx -y @acme/missing-mcp@1.0.0",
      ],
      agentDir: dirs.agentDir,
      cwd: dirs.cwd,
      env: { npm_config_registry: npm.url, npm_config_cache: join(dirs.cwd, "npm-cache"), npm_config_update_notifier: "false" },
      timeoutMs: 120_000,
    });
    expect(result.exitCode, result.stderr).toBe(0);
    const output = result.stdout + result.stderr;
    // Five names hold "io.github", two a page: three pages, then the end said as such.
    const pages = [...output.matchAll(/^The MCP registry at [^,]+, "io\.github": (\d) servers?( \(more: \/mcp search --more\))?$/gm)];
    expect(pages.map(([, count, more]) => [count, more !== undefined])).toEqual([
      ["2", true],
      ["2", true],
      ["1", false],
    ]);
    expect(output).toContain('No more results for "io.github".');
    expect(output).toMatch(/^ {2}io\.github\.domdomegg\/time-mcp-nuget [^\n]* · nuget \(not installable here\)$/m);
    expect(output).toMatch(/^ {2}io\.github\.domdomegg\/airtable-mcp-server [^\n]* · npm, oci, mcpb$/m);
    expect(output).toContain(
      `Added MCP server "server-everything" to ${userFile}, but it did not connect: MCP server "server-everything" failed to connect: ` +
        `npm has no version 2.0.0 of @modelcontextprotocol/server-everything (npm ETARGET): change the version in the "args" of ` +
        `"server-everything" in ${userFile}, e.g. to @modelcontextprotocol/server-everything@latest.`,
    );
    expect(output).toContain(
      `MCP server "missing" failed to connect: npm has no package @acme/missing-mcp (npm E404: none by that name, or a private one npm ` +
        `is not signed in for): check the package name in the "args" of "missing" in ${userFile}.`,
    );
  }, 150_000);
});

describe(`servers of a Pi package and of a Claude Code plugin on Pi ${host.version}`, () => {
  test("each listed with its source, the plugin's skill offered to the model; a registry that is down is one line", async () => {
    const plugin = join(root, `plugins-${host.version}`, "acme-plugin");
    await mkdir(join(plugin, ".claude-plugin"), { recursive: true });
    await mkdir(join(plugin, "skills", "triage"), { recursive: true });
    await writeFile(join(plugin, ".claude-plugin", "plugin.json"), JSON.stringify({ name: "acme-plugin", version: "1.0.0" }));
    await writeFile(
      join(plugin, ".mcp.json"),
      JSON.stringify({ mcpServers: { notes: { command: "node", args: ["${CLAUDE_PLUGIN_ROOT}/server.mjs"] } } }),
    );
    await writeFile(
      join(plugin, "server.mjs"),
      `import ${JSON.stringify(pathToFileURL(join(REPO_ROOT, "test/fixtures/servers/items-server.mjs")).href)};\n`,
    );
    await writeFile(
      join(plugin, "skills", "triage", "SKILL.md"),
      "---\nname: triage\ndescription: Sorts incoming issues by urgency\n---\nSort them.\n",
    );
    const port = await closedPort();
    const dirs = await harness.dirs({}, { registry: { url: `http://127.0.0.1:${port}` } });
    await writeFile(
      join(dirs.agentDir, "mcp.json"),
      JSON.stringify({
        claudePlugins: [{ path: plugin, mcp: true, skills: true }],
        settings: { registry: { url: `http://127.0.0.1:${port}` } },
      }),
    );
    const pkg = join(dirs.agentDir, "pkgs", "acme-tools");
    await mkdir(pkg, { recursive: true });
    await writeFile(
      join(pkg, "package.json"),
      JSON.stringify({ name: "@acme/tools", version: "1.0.0", keywords: ["pi-package"], pi: { mcp: "./mcp.json", extensions: [] } }),
    );
    await writeFile(join(pkg, "mcp.json"), JSON.stringify({ mcpServers: { docs: itemsServer() } }));
    await writeFile(
      join(dirs.agentDir, "settings.json"),
      JSON.stringify({ retry: { enabled: false }, cacheWarming: "off", packages: ["./pkgs/acme-tools"] }),
    );

    const result = await runPrint({
      extensions: [REPO_ROOT],
      script: ["ok"],
      prompts: ["/mcp search anything", "/mcp status", "hi"],
      agentDir: dirs.agentDir,
      cwd: dirs.cwd,
      env: { HOME: home },
    });
    expect(result.exitCode, result.stderr).toBe(0);
    const lines = result.stderr.split("\n");
    expect(lines.filter((line) => line.includes("/mcp search"))).toEqual([
      `[mcp] /mcp search: the MCP registry at http://127.0.0.1:${port} cannot be reached (connection refused)`,
    ]);
    expect(result.stderr).toMatch(/acme_tools__docs: [^\n]*10 tools/);
    expect(lines).toContain(`    source: ${join(pkg, "mcp.json")} (pi-package: ./pkgs/acme-tools)`);
    expect(result.stderr).toMatch(/notes: [^\n]*10 tools/);
    expect(lines).toContain(`    source: ${join(plugin, ".mcp.json")} (claude-plugin: acme-plugin)`);
    expect(result.requests[0]!.systemPrompt).toMatch(
      new RegExp(
        `<name>triage</name>\\s*<description>Sorts incoming issues by urgency</description>\\s*<location>${escapeRegExp(join(plugin, "skills", "triage", "SKILL.md"))}</location>`,
      ),
    );
  });
});

describe(`servers another extension registers at runtime on Pi ${host.version}`, () => {
  test.each([
    ["before", [RUNTIME_FIXTURE, ENTRY]],
    ["after", [ENTRY, RUNTIME_FIXTURE]],
  ])("an extension loaded %s the adapter: answered in the call, listed as runtime, called, disposed", async (_order, extensions) => {
    const dirs = await harness.dirs({});
    const session = await startSession({ extensions, agentDir: dirs.agentDir, cwd: dirs.cwd });
    harness.onCleanup(() => session.dispose());
    expect((await session.command("/rt-result")).text).toBe(
      'rt: registered\nrt: refused: MCP server registration refused: a server named "rt" is registered already',
    );
    const status = await waitForStatus(session, /rt: [^\n]*10 tools/);
    expect(status).toContain("    source: event pi-mcp-adapter:runtime-register:v1 (runtime)");
    session.script([search("select:rt__echo"), callLoaded("rt__echo", { text: "registered at runtime" }), "done"]);
    await session.prompt("echo");
    expect(itemsRan(dirs)).toContain("echo");
    await session.command("/rt-dispose");
    expect((await session.command("/mcp status")).text).not.toContain("rt:");
    // /reload: the extensions load again and the new copy of the adapter answers (the replaced one stopped listening).
    await session.reload();
    expect((await session.command("/rt-result")).text).toMatch(/^rt: registered\n/);
    await waitForStatus(session, /rt: [^\n]*10 tools/);
    expect(session.errors).toEqual([]);
  });
});

describe(`the /mcp panel's ways in on Pi ${host.version} (TUI)`, () => {
  test("no server: the panel offers import, the registry and a command; Add from the MCP Registry adds one", async () => {
    const registry = await startRegistry();
    harness.onCleanup(() => registry.close());
    const dirs = await harness.dirs({}, { registry: { url: registry.url } });
    const steps = join(dirs.agentDir, "steps.json");
    await writeFile(steps, "[]");
    const tui = await startPiTui({
      ...dirs,
      extensions: ["test/helpers/faux-json-script.ts"],
      env: { PI_FAUX_STEPS: steps, HOME: home, npm_config_cache: npmCache },
    });
    harness.onCleanup(() => tui.close());
    await tui.ready();
    await tui.command("mcp");
    await expect.poll(tui.screen, { timeout: 30_000 }).toContain("MCP servers (0)");
    expect(tui.screen()).toContain("No servers yet. To add one:");
    expect(tui.screen()).toMatch(/→ \+ Import from cursor +found on this machine: \/mcp import cursor \(server: cursor_items\)/);
    expect(tui.screen()).toMatch(/\+ Add from the MCP Registry +search http:\/\/127\.0\.0\.1:\d+, then pick a server/);
    expect(tui.screen()).toMatch(/\+ Add by command or URL/);

    tui.keys("Down");
    tui.keys("Enter");
    await expect.poll(tui.screen, { timeout: 30_000 }).toContain("Search the MCP Registry for");
    tui.keys("everything");
    tui.keys("Enter");
    await expect.poll(tui.screen, { timeout: 30_000 }).toMatch(/→ io\.github\.modelcontextprotocol\/server-everything 2\.0\.0/);
    tui.keys("Enter");
    // The panel again, with the server added, connected and listed.
    await expect.poll(tui.screen, { timeout: 60_000 }).toMatch(/server-everything +[^\n]*\d+ tools/);
    expect(tui.history()).toMatch(/Added MCP server "server-everything"/);
    tui.keys("Escape");
    await expect.poll(tui.screen, { timeout: 30_000 }).not.toContain("MCP servers (1)");
    tui.keys("/quit", "Enter");
    await expect.poll(() => processesWithMarker(dirs.agentDir), { timeout: 30_000 }).toEqual([]);
  }, 300_000);
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * Managing servers from inside the session, in the real Pi of this run's host: `/mcp disable` and `/mcp enable` write
 * `enabled` to the file the user picks and take effect at once (tools gone / back, process stopped), leaving the
 * rest of a commented JSONC file byte for byte; `/mcp add` of a real server makes its tools searchable in the same
 * session and `/mcp remove` takes them away again, restoring the file; bad names, unwritable and broken files are
 * refused with the file named and nothing written. Print mode picks the file with a flag.
 */
import { chmod, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { currentHost, REPO_ROOT } from "./helpers/hosts.ts";
import { itemsServer, warmCache } from "./helpers/items-fixture.ts";
import { type McpDirs, mcpDirs, REAL_SERVERS, trustProject } from "./helpers/mcp-setup.ts";
import { runPrint, runRpc } from "./helpers/pi-print.ts";
import { type PiSession, startSession } from "./helpers/pi-session.ts";
import { descendantProcesses } from "./helpers/processes.ts";
import { startRegistry } from "./helpers/registry-fixture.ts";

const host = currentHost();
const ENTRY = "pi-mcp-adapter.ts";
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A user file as people write them: comments, an odd layout, a setting after the servers. */
function commentedConfig(items: Record<string, unknown>): string {
  const entry = JSON.stringify(items, null, 2).replace(/\n/g, "\n    ");
  return `{
  // my MCP servers
  "mcpServers": {
    /* the inventory */
    "items": ${entry}, // keep this one
    "spare": { "command": "pi-mcp-no-such-command", "enabled": false }
  },
  "settings": { "idleTimeout": 5 } // minutes
}
`;
}

async function setup(): Promise<{ dirs: McpDirs; userFile: string; original: string }> {
  const dirs = await mcpDirs({ mcpServers: { items: itemsServer() } });
  cleanups.push(dirs.cleanup);
  await warmCache(dirs, "items");
  const userFile = join(dirs.agentDir, "mcp.json");
  const original = commentedConfig(itemsServer());
  await writeFile(userFile, original);
  return { dirs, userFile, original };
}

async function session(dirs: McpDirs, pickFile: "user" | "project" = "user"): Promise<PiSession> {
  const pi = await startSession({
    extensions: [ENTRY],
    agentDir: dirs.agentDir,
    cwd: dirs.cwd,
    dialogs: { select: (_title, options) => options.find((option) => option.startsWith(`${pickFile}:`)) },
  });
  cleanups.push(() => pi.dispose());
  return pi;
}

/** What ToolSearch answers the model for `query`. */
async function search(pi: PiSession, query: string): Promise<string> {
  pi.script([{ toolCalls: [{ name: "ToolSearch", arguments: { query } }] }, "ok"]);
  await pi.prompt(`find ${query}`);
  return pi.toolResults.at(-1)!.text;
}

describe(`/mcp enable, disable, add, remove on Pi ${host.version}`, () => {
  test("disable then enable: the server's tools go and come back, its process stops, the file keeps every comment", async () => {
    const { dirs, userFile, original } = await setup();
    const pi = await session(dirs);
    await pi.command("/mcp reconnect items");
    expect(await descendantProcesses("items-server.mjs")).toHaveLength(1);

    const disabled = await pi.command("/mcp disable items");
    expect(disabled.ui.find((entry) => entry.kind === "dialog")).toMatchObject({
      dialog: "select",
      title: 'Disable MCP server "items" in',
    });
    expect(disabled.text).toContain(`Disabled MCP server "items" (${userFile}): its tools are gone, and it does not run.`);
    const afterDisable = await readFile(userFile, "utf8");
    expect(afterDisable).toBe(
      original.replace(
        /("ITEMS_LOG": "[^"]+"\n      \})\n    \}, \/\/ keep this one/,
        '$1,\n      "enabled": false\n    }, // keep this one',
      ),
    );
    expect(await descendantProcesses("items-server.mjs")).toEqual([]);
    expect(pi.activeToolNames().filter((name) => name.startsWith("items__"))).toEqual([]);
    expect(await search(pi, "echo text back")).not.toContain("items__echo");
    expect((await pi.command("/mcp status")).text).toContain("- items: disabled");

    const enabled = await pi.command("/mcp enable items");
    expect(enabled.text).toMatch(/Enabled MCP server "items" \([^)]+\): 10 tools \(items__echo, /);
    expect(await readFile(userFile, "utf8")).toBe(
      afterDisable.replace('"enabled": false\n    }, // keep', '"enabled": true\n    }, // keep'),
    );
    expect(await search(pi, "select:items__echo")).toContain("items__echo");
    expect(pi.errors).toEqual([]);
  });

  test("a server the project file defines can only be disabled there; the user's pick is not asked for", async () => {
    const { dirs, userFile, original } = await setup();
    const projectFile = join(dirs.cwd, ".pi", "mcp.json");
    await mkdir(join(dirs.cwd, ".pi"));
    await writeFile(projectFile, JSON.stringify({ mcpServers: { local: itemsServer() } }, null, 2));
    await trustProject(dirs);
    const pi = await session(dirs);
    const output = await pi.command("/mcp disable local");
    expect(output.ui.filter((entry) => entry.kind === "dialog")).toEqual([]);
    expect(output.text).toContain(`Disabled MCP server "local" (${projectFile})`);
    expect(JSON.parse(await readFile(projectFile, "utf8")).mcpServers.local.enabled).toBe(false);
    expect(await readFile(userFile, "utf8")).toBe(original);
  });

  test("a server name with spaces works quoted or not, in /mcp reconnect and in /mcp disable", async () => {
    const { dirs } = await setup();
    const projectFile = join(dirs.cwd, ".pi", "mcp.json");
    await mkdir(join(dirs.cwd, ".pi"));
    await writeFile(projectFile, JSON.stringify({ mcpServers: { "Local Items": itemsServer() } }, null, 2));
    await trustProject(dirs);
    const pi = await session(dirs);
    expect((await pi.command('/mcp reconnect "Local Items"')).text).toMatch(/^✓ Local Items: connected/);
    expect((await pi.command("/mcp reconnect Local Items")).text).toMatch(/^✓ Local Items: connected/);
    expect((await pi.command("/mcp disable Local Items")).text).toContain(`Disabled MCP server "Local Items" (${projectFile})`);
    expect(pi.errors).toEqual([]);
  });

  test("add a real server: its tools are searchable in the same session; remove: gone again, the file as it was", async () => {
    const { dirs, userFile, original } = await setup();
    const pi = await session(dirs);
    const [node, script, mode] = [REAL_SERVERS.everything.command, ...REAL_SERVERS.everything.args];
    const added = await pi.command(`/mcp add everything "${node}" "${script}" ${mode}`);
    expect(added.text).toMatch(/Added MCP server "everything" to [^:]+: \d+ tools \(everything__echo, /);
    const written = JSON.parse((await readFile(userFile, "utf8")).replace(/\/\/.*|\/\*.*?\*\//g, ""));
    expect(written.mcpServers.everything).toEqual({ command: node, args: [script, mode] });
    expect(await search(pi, "echo back the input message")).toContain("everything__echo");
    expect(await descendantProcesses("server-everything/dist/index.js")).toEqual([]); // lazy: listed, then ended

    const removed = await pi.command("/mcp remove everything");
    expect(removed.text).toContain(`Removed MCP server "everything" from ${userFile}`);
    expect(await readFile(userFile, "utf8")).toBe(original);
    expect(await search(pi, "echo back the input message")).not.toContain("everything__echo");
    expect(pi.errors).toEqual([]);
  });

  test("a server skipped for an unset secret is still configured: status says to set it, enable says so, disable and remove work", async () => {
    const { dirs, userFile, original } = await setup();
    const needsKey = `"needskey": {\n      "command": "needskey-mcp",\n      "env": { "API_KEY": "\${NEEDSKEY_API_KEY}" }\n    },\n    `;
    const withSkipped = original.replace("/* the inventory */\n    ", `/* the inventory */\n    ${needsKey}`);
    await writeFile(userFile, withSkipped);
    const pi = await session(dirs);
    const status = (await pi.command("/mcp status")).text;
    expect(status).toMatch(/^MCP servers: 1 enabled, 1 disabled, 1 skipped\n/);
    expect(status).toContain(
      `✗ needskey: skipped\n    error: ${userFile}: server "needskey": "env.API_KEY": environment variable NEEDSKEY_API_KEY is not set (it holds a secret: set it in Pi's environment, not in a config file, and start Pi again)`,
    );
    expect((await pi.command("/mcp enable needskey")).text).toMatch(/^MCP server "needskey" is skipped, which enabling does not change: /);
    expect(await readFile(userFile, "utf8")).toBe(withSkipped);

    expect((await pi.command("/mcp disable needskey")).text).toBe(`Disabled MCP server "needskey" (${userFile}).`);
    expect((await pi.command("/mcp status")).text).toContain("\n- needskey: disabled · source: ");
    expect((await pi.command("/mcp remove needskey")).text).toBe(`Removed MCP server "needskey" from ${userFile}.`);
    // The first entry gone with its lines: the rest as it was.
    expect(await readFile(userFile, "utf8")).toBe(original);
    expect((await pi.command("/mcp disable needskey")).ui).toContainEqual(
      expect.objectContaining({ kind: "notify", message: '/mcp disable: no MCP server named "needskey" (servers: items, spare)' }),
    );
    expect(pi.errors).toEqual([]);
  });

  test("refusals name the problem and write nothing: a bad name, a taken name, a bad entry, an unwritable or broken file", async () => {
    const { dirs, userFile, original } = await setup();
    const pi = await session(dirs);
    const refusal = async (line: string) =>
      (await pi.command(line)).ui
        .filter((entry) => entry.kind === "notify" && entry.level === "error")
        .map((entry) => (entry as { message: string }).message)
        .join("\n");
    expect(await refusal("/mcp add bad/name node x.js")).toContain('"bad/name" is not a usable server name');
    expect(await refusal("/mcp add items node x.js")).toContain(`a server named "items" exists already (${userFile})`);
    expect(await refusal("/mcp add web ftp://example.com/mcp")).toContain("not added:");
    expect(await refusal("/mcp disable nothere")).toContain('no MCP server named "nothere"');
    expect(await readFile(userFile, "utf8")).toBe(original);

    await chmod(userFile, 0o444);
    cleanups.push(() => chmod(userFile, 0o644));
    if (process.getuid?.() !== 0)
      expect(await refusal("/mcp add web https://example.com/mcp")).toContain(`cannot write ${userFile}: EACCES`);
    await chmod(userFile, 0o644);
    await writeFile(userFile, original.replace('"settings"', '"settings" oops'));
    expect(await refusal("/mcp remove items")).toMatch(
      new RegExp(`${userFile.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} has a syntax error at line \\d+, column \\d+`),
    );
    expect(await readFile(userFile, "utf8")).toBe(original.replace('"settings"', '"settings" oops'));
    expect(pi.errors).toEqual([]);
  });
});

describe(`a config file edited by hand on Pi ${host.version}`, () => {
  test("is followed without /reload: by /mcp commands (a server, the registry's URL) and at a prompt; a broken edit keeps the config", async () => {
    const registry = await startRegistry();
    cleanups.push(() => registry.close());
    const dirs = await mcpDirs({});
    cleanups.push(dirs.cleanup);
    const userFile = join(dirs.agentDir, "mcp.json");
    await rm(userFile);
    const pi = await session(dirs);
    expect((await pi.command("/mcp status")).text).toContain(`MCP: no servers configured.`);

    const config = (servers: Record<string, unknown>) =>
      JSON.stringify({ mcpServers: servers, settings: { registry: { url: registry.url } } }, null, 2);
    await writeFile(userFile, config({ items: itemsServer() }));
    const followed = (await pi.command("/mcp status")).text;
    expect(followed).toContain(`MCP: ${userFile} changed; the session follows it (now used: items).`);
    expect(followed).toMatch(/\n. items: /);
    // The registry the file now names is the one searched (the list offered is dismissed).
    await pi.command("/mcp search everything");
    expect(registry.requests.some((request) => request.includes("search=everything"))).toBe(true);

    // At a prompt: a server written meanwhile is found by ToolSearch in that very run.
    await writeFile(userFile, config({ items: itemsServer(), more: itemsServer() }));
    expect(await search(pi, "select:more__echo")).toContain("more__echo");

    // Half an edit: the session keeps its servers and says so once; the file fixed, it is followed again.
    await writeFile(userFile, config({ items: itemsServer(), more: itemsServer() }).replace(/\}$/, ""));
    const broken = (await pi.command("/mcp status")).text;
    expect(broken).toContain(`the session keeps the config it had until the file is fixed`);
    expect(broken).toMatch(/\n. more: /);
    expect((await pi.command("/mcp status")).text).not.toContain("keeps the config it had");
    await writeFile(userFile, config({ items: itemsServer() }));
    const fixed = (await pi.command("/mcp status")).text;
    expect(fixed).toContain("(no longer used: more)");
    expect(fixed).not.toMatch(/\n. more: /);
    expect(pi.errors).toEqual([]);
  });
});

describe(`/mcp disable in print mode on Pi ${host.version}`, () => {
  test("--project writes the project file; without a flag the user file, where an enable is then overruled (and said so)", async () => {
    const dirs = await mcpDirs({ mcpServers: { items: itemsServer() } });
    cleanups.push(dirs.cleanup);
    const result = await runPrint({
      extensions: [REPO_ROOT],
      script: [],
      prompts: ["/mcp disable items --project", "/mcp status", "/mcp enable items"],
      agentDir: dirs.agentDir,
      cwd: dirs.cwd,
    });
    expect(result.exitCode).toBe(0);
    const projectFile = join(dirs.cwd, ".pi", "mcp.json");
    expect(result.stdout + result.stderr).toContain(`Disabled MCP server "items" (${projectFile})`);
    expect(result.stdout + result.stderr).toContain("- items: disabled");
    expect(JSON.parse(await readFile(projectFile, "utf8"))).toEqual({ mcpServers: { items: { enabled: false } } });
    const userFile = join(dirs.agentDir, "mcp.json");
    expect(result.stdout + result.stderr).toContain(
      `Wrote "enabled": true for "items" to ${userFile}, but the server is still disabled: a higher-precedence file sets it`,
    );
    expect(JSON.parse(await readFile(userFile, "utf8")).mcpServers.items.enabled).toBe(true);
  });
});

describe(`bare /mcp in RPC mode on Pi ${host.version}`, () => {
  test("RPC cannot show the panel: /mcp notifies the status text", async () => {
    const dirs = await mcpDirs({ mcpServers: { items: itemsServer() } });
    cleanups.push(dirs.cleanup);
    const result = await runRpc({ extensions: [REPO_ROOT], script: [], prompts: ["/mcp"], agentDir: dirs.agentDir, cwd: dirs.cwd });
    const notices = (result.rpcLines ?? []).filter((line) => line.type === "extension_ui_request" && line.method === "notify");
    expect(notices).toContainEqual(expect.objectContaining({ message: expect.stringMatching(/^MCP servers: 1 enabled\n. items: /) }));
  });
});

/**
 * Bad input end to end in the real Pi: broken config files, a damaged metadata cache, and whatever the model
 * sends. The session always starts, the good servers work, and every problem is a message naming where it is.
 */
import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { CACHE_VERSION } from "../metadata-cache.ts";
import { currentHost } from "./helpers/hosts.ts";
import { callLoaded, faultHarness, faulty, notifications, search } from "./helpers/fault-setup.ts";
import { trustProject } from "./helpers/mcp-setup.ts";
import type { ToolCallSpec } from "./helpers/faux-script.ts";
import type { PiSession } from "./helpers/pi-session.ts";

const host = currentHost();
const harness = faultHarness();

/** Each tool call of the session with its result, in the order the model made them (they run in parallel). */
function callsWithResults(pi: PiSession): { name: string; arguments: unknown; isError: boolean; text: string }[] {
  const calls = pi.session.messages.flatMap((message) =>
    message.role === "assistant" && Array.isArray(message.content)
      ? (message.content as { type: string; id: string; name: string; arguments: unknown }[]).filter((block) => block.type === "toolCall")
      : [],
  );
  return calls.map((call) => {
    const result = pi.toolResults.find((record) => record.toolCallId === call.id);
    return { name: call.name, arguments: call.arguments, isError: result?.isError ?? true, text: result?.text ?? "(no result)" };
  });
}

const usage = (reason: string) =>
  `${reason}\nDescribe the tool you need in a few words, or use "select:name1,name2" with exact tool names.\nMCP servers: good.`;

describe(`bad input on Pi ${host.version}`, () => {
  test("config: invalid JSON and TOML, wrong types, an unknown lifecycle (lazy instead), a missing variable, no command or url: each named; the good servers work", async () => {
    const dirs = await harness.dirs({
      good: faulty(),
      wrongTypes: { command: 42, args: "server.js" },
      sometimes: faulty({}, { lifecycle: "sometimes" }),
      needsToken: { command: "node", env: { TOKEN: "${PI_MCP_FAULTS_UNSET_VARIABLE}" } },
      noTarget: { args: ["server.js"] },
    });
    // The user file also imports Codex, whose config is not valid TOML; the project's own file is not valid JSON.
    const userFile = join(dirs.agentDir, "mcp.json");
    const user = JSON.parse(await readFile(userFile, "utf8"));
    await writeFile(userFile, JSON.stringify({ ...user, imports: ["codex"] }));
    const codexHome = join(dirs.cwd, "codex-home");
    await mkdir(codexHome);
    await writeFile(join(codexHome, "config.toml"), '[mcp_servers.broken]\ncommand = "node\n');
    harness.env("CODEX_HOME", codexHome);
    harness.env("PI_MCP_FAULTS_UNSET_VARIABLE", undefined);
    await mkdir(join(dirs.cwd, ".pi"));
    const projectFile = join(dirs.cwd, ".pi", "mcp.json");
    await writeFile(projectFile, '{ "mcpServers": { "half": { "command": "node", } ');
    await trustProject(dirs); // else the project's file is not read (and its error not reported)

    const pi = await harness.session(dirs, [search("echo the text back"), callLoaded("good__echo", { text: "configured" }), "done"]);
    await pi.prompt("echo");

    expect(pi.toolResults.at(-1)).toMatchObject({ isError: false, text: "configured" });
    const problems = [
      `${projectFile}: invalid JSON at end of file: close brace expected`,
      `${userFile}: server "wrongTypes": "command": must be a non-empty string (got the number 42)`,
      `${userFile}: server "wrongTypes": "args": must be an array of strings (got a string)`,
      `${userFile}: server "noTarget": "command": has "args" but needs "command" (a process) or "url" (an HTTP endpoint)`,
      `${join(codexHome, "config.toml")}: invalid TOML at line 2, column 16: control characters are not allowed in strings`,
      `${userFile}: server "needsToken": "env.TOKEN": environment variable PI_MCP_FAULTS_UNSET_VARIABLE is not set (it holds a secret: set it in Pi's environment, not in a config file, and start Pi again)`,
    ];
    const unknownLifecycle = `${userFile}: server "sometimes": "lifecycle": must be one of "lazy", "eager", "keep-alive", "lazy-keep-alive" (got "sometimes"); using "lazy"`;
    const notices = problems.map((problem) => ({ level: "error", message: `MCP config: ${problem}` }));
    notices.splice(3, 0, { level: "warning", message: `MCP config: ${unknownLifecycle}` });
    expect(notifications(pi)).toEqual(notices);
    const status = (await pi.command("/mcp status")).text;
    expect(status).toMatch(/^MCP servers: 2 enabled, 3 skipped\n✓ good: connected/);
    expect(status).toMatch(/\n○ sometimes: [^\n]+ · lazy · [^\n]+\n    command: [^\n]+\n    source: [^\n]+\n    warning: /);
    expect(status).toContain(`\n    warning: ${unknownLifecycle}\n`);
    // A server that could not be loaded is listed, skipped, with its reasons; the rest concerns whole files.
    const [projectSyntax, wrongCommand, wrongArgs, noTarget, codexSyntax, unsetVariable] = problems;
    expect(status).toContain(`\n✗ wrongTypes: skipped\n    error: ${wrongCommand}\n    error: ${wrongArgs}\n`);
    expect(status).toContain(`\n✗ noTarget: skipped\n    error: ${noTarget}\n`);
    expect(status).toContain(`\n✗ needsToken: skipped\n    error: ${unsetVariable}\n`);
    expect(status.slice(status.indexOf("\nConfig errors:"))).toBe(`\nConfig errors:\n  ${projectSyntax}\n  ${codexSyntax}`);
    expect(pi.errors).toEqual([]);
  });

  const damagedCaches: [string, (path: string) => Promise<void>, string][] = [
    [
      "truncated",
      (path) => writeFile(path, '{"version":1,"servers":{"good":{"configHash":"ab'),
      "not valid JSON (Unterminated string in JSON at position 48",
    ],
    ["corrupt", (path) => writeFile(path, Buffer.from([0x00, 0xff, 0x7b, 0x13, 0x37])), "not valid JSON"],
    [
      "of an older version than is read",
      (path) => writeFile(path, JSON.stringify({ version: 1, servers: {} })),
      `cache version 1, expected ${CACHE_VERSION}`,
    ],
    [
      "of a future version",
      (path) => writeFile(path, JSON.stringify({ version: CACHE_VERSION + 1, servers: { good: { tools: "elsewhere" } }, index: [] })),
      `cache version ${CACHE_VERSION + 1}, expected ${CACHE_VERSION}`,
    ],
    // Tests run as root, for whom no file mode is unreadable: a directory in its place cannot be read by anyone.
    ["unreadable", (path) => mkdir(path), "cannot be read (EISDIR: illegal operation on a directory, read)"],
  ];

  test.each(damagedCaches)(
    "a cache file that is %s is ignored with a warning, and rebuilt if it can be; the session works",
    async (kind, damage, problem) => {
      const dirs = await harness.dirs({ good: faulty() });
      const cacheFile = join(dirs.agentDir, "mcp-cache.json");
      await damage(cacheFile);
      const pi = await harness.session(dirs, [search("echo the text back"), callLoaded("good__echo", { text: "cache-free" }), "done"]);
      await pi.prompt("echo");
      await pi.dispose(); // flushes cache writes

      expect(pi.toolResults.at(-1)).toMatchObject({ isError: false, text: "cache-free" });
      const warnings = notifications(pi).filter((notice) => notice.level !== "info");
      expect(warnings[0]).toEqual({ level: "warning", message: expect.stringContaining(`MCP cache: ${cacheFile}: ${problem}`) });
      expect(pi.errors).toEqual([]);
      // One warning, whatever the damage: a listing the cache cannot take waits in its journal (tools/cache-writer.ts),
      // and a cache that stays unreadable is said again by the next start's warning above.
      expect(warnings).toHaveLength(1);
      if (kind === "unreadable") return;
      const rebuilt = JSON.parse(await readFile(cacheFile, "utf8"));
      expect(rebuilt.version).toBe(CACHE_VERSION);
      expect(Object.keys(rebuilt.servers)).toEqual(["good"]);
      expect((await stat(cacheFile)).mode & 0o777).toBe(0o600);
    },
  );

  test("the model's input: empty, huge and regex-like queries, unknown names, wrong, extra and missing arguments, garbage for McpCall", async () => {
    const dirs = await harness.dirs({ good: faulty() });
    const searches: ToolCallSpec[] = [
      { name: "ToolSearch", arguments: { query: "" } },
      { name: "ToolSearch", arguments: { query: "  \n\t " } },
      { name: "ToolSearch", arguments: { query: `${"nothing like it ".repeat(6_000)}` } },
      { name: "ToolSearch", arguments: { query: "(.*+?[\\^$|{}" } },
      { name: "ToolSearch", arguments: { query: "select:nope,,good/nope" } },
      { name: "ToolSearch", arguments: {} },
      { name: "ToolSearch", arguments: { query: ["echo"] } },
      { name: "ToolSearch", arguments: { query: "select:good__echo" } },
    ];
    const echoCalls: Record<string, unknown>[] = [{ text: { nested: true } }, { text: 42 }, { text: "extra", colour: "red" }, {}];
    const pi = await harness.session(dirs, [{ toolCalls: searches }, "searched"]);
    await pi.prompt("search badly");
    // From the next prompt on, every host offers the loaded tool directly.
    pi.script([{ toolCalls: echoCalls.map((args) => ({ name: "good__echo", arguments: args })) }, "called"]);
    await pi.prompt("call badly");
    if (!host.refreshesToolsEachTurn) {
      const garbage = [
        { tool: 42 },
        { tool: "nope", arguments: {} },
        { tool: "good__echo", arguments: "text" },
        { tool: "good__echo", arguments: { text: [] } },
        {},
      ];
      pi.script([{ toolCalls: garbage.map((args) => ({ name: "McpCall", arguments: args })) }, "proxied"]);
      await pi.prompt("proxy badly");
    }

    const answers = callsWithResults(pi).map(({ name, isError, text }) => [name, isError, text]);
    const validation = (tool: string, problem: string) =>
      expect.stringMatching(new RegExp(`^Validation failed for tool "${tool}":\\n  - ${problem}\\n`));
    // The host's own validator words the problem (pi-ai's; 1.x validates with pi-schema, which words it otherwise).
    const newWording = host.version.startsWith("1.");
    const missing = (field: string) => `${field}: ${newWording ? "missing" : `must have required properties ${field}`}`;
    const notA = (field: string, type: string, got: string) =>
      `${field}: ${newWording ? `expected ${type}, got ${got}` : `must be ${type}`}`;
    expect(answers.slice(0, 8)).toEqual([
      ["ToolSearch", false, usage("The query was empty.")],
      ["ToolSearch", false, usage("The query was empty.")],
      ["ToolSearch", false, usage(`No MCP tool matches "${"nothing like it ".repeat(4)}nothing like it…".`)],
      ["ToolSearch", false, usage('No MCP tool matches "(.*+?[\\^$|{}".')],
      [
        "ToolSearch",
        false,
        `No MCP tool is named "nope".\nNo MCP tool is named "good/nope" (closest: good__change_tools).\n${usage("Nothing was loaded.")}`,
      ],
      ["ToolSearch", true, validation("ToolSearch", missing("query"))],
      ["ToolSearch", true, validation("ToolSearch", notA("query", "string", "array"))],
      ["ToolSearch", false, expect.stringContaining("- good__echo: Echoes the text back")],
    ]);
    expect(answers.slice(8, 12)).toEqual([
      ["good__echo", true, validation("good__echo", notA("text", "string", "object"))],
      ["good__echo", false, "42"], // Pi coerces what it can
      ["good__echo", false, "extra"], // extra fields are the server's business
      ["good__echo", true, validation("good__echo", missing("text"))],
    ]);
    if (!host.refreshesToolsEachTurn) {
      expect(answers.slice(12)).toEqual([
        ["McpCall", true, '"42" is not an MCP tool. Use ToolSearch to find and load one first.'],
        ["McpCall", true, '"nope" is not an MCP tool. Use ToolSearch to find and load one first.'],
        ["McpCall", true, validation("McpCall", notA("arguments", "object", "string"))],
        ["McpCall", true, validation("good__echo", notA("text", "string", "array"))],
        ["McpCall", true, validation("McpCall", missing("tool"))],
      ]);
    }
    expect(pi.errors).toEqual([]);
    expect((await pi.command("/mcp status")).text).toMatch(/✓ good: connected/);
  });
});

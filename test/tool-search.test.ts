/**
 * ToolSearch and McpCall without Pi: a session view built by hand (buildToolView over listed inventories) and a fake of
 * Pi's active tool set. What a query loads, `select:` names, the answer's text on both kinds of host, close matches,
 * server instructions, waiting for startup, and McpCall's checks. In the real Pi: search-answer.e2e.test.ts,
 * adapter.e2e.test.ts.
 */
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { describe, expect, it, vi } from "vitest";
import type { SearchHit } from "../search/tool-index.ts";
import { mcpCallDefinition, type ToolSearchContext, toolSearchDefinition } from "../tool-search.ts";
import { buildToolView, type ServerInventoryEntry } from "../tool-view.ts";
import type { McpTool, ServerDefinition } from "../types.ts";

/** ToolSearch and McpCall do not read Pi's context (McpCall hands it to the runner as it is). */
const NO_CONTEXT = undefined as unknown as ExtensionContext;
const NOTE_TOOLS = 8;

const tool = (name: string, description: string, inputSchema: McpTool["inputSchema"] = { type: "object", properties: {} }): McpTool => ({
  name,
  description,
  inputSchema,
});

const SERVERS: Record<string, { tools: McpTool[]; instructions?: string }> = {
  files: {
    tools: [
      tool("read_file", "Read the contents of a file from disk", {
        type: "object",
        properties: { path: { type: "string" } },
        required: ["path"],
      }),
      tool("write_file", "Write text to a file on disk, replacing it"),
      tool("list_directory", "List the entries of a directory"),
    ],
  },
  web: {
    tools: [tool("fetch_page", "Fetch a web page and return its text"), tool("take_screenshot", "Take a screenshot of the browser window")],
    instructions: "Call fetch_page before take_screenshot.",
  },
  // Eight tools that answer "note" equally well: five are loaded, the others are close matches.
  notes: { tools: Array.from({ length: NOTE_TOOLS }, (_, index) => tool(`note_${index + 1}`, "Store a short note")) },
  alpha: { tools: [tool("search", "Search alpha records")] },
  beta: { tools: [tool("search", "Search beta records")] },
};

function definition(name: string): ServerDefinition {
  return { name, command: "x", source: { kind: "user", path: "/u/mcp.json" } };
}

interface FakeSession extends ToolSearchContext {
  /** What the adapter was asked to register with Pi. */
  registered: string[];
}

interface Options {
  refreshesToolsEachTurn?: boolean;
  offeredThisRun?: string[];
  /** Servers configured whose tools are not known (not listed yet). */
  unlisted?: string[];
  startup?: Promise<void>;
  semantic?: ToolSearchContext["semantic"];
  /** Listed servers besides SERVERS. */
  more?: typeof SERVERS;
}

function session(options: Options = {}): FakeSession {
  const listed = { ...SERVERS, ...options.more };
  const names = [...Object.keys(listed), ...(options.unlisted ?? [])];
  const config = { servers: names.map(definition), settings: {}, problems: [], userFile: "/u/mcp.json" };
  const live = new Map(
    Object.entries(listed).map(([name, { tools, instructions }]): [string, ServerInventoryEntry] => [
      name,
      { definition: definition(name), tools, resources: [], prompts: [], instructions, origin: "live", listedAt: 0 },
    ]),
  );
  const registered: string[] = [];
  return {
    ...buildToolView(config, { path: "/none", servers: new Map(), problems: [] }, live),
    startup: options.startup ?? Promise.resolve(),
    searchIndex: undefined,
    semantic: options.semantic,
    manager: { preloadConnectionCode: () => {} },
    host: { refreshesToolsEachTurn: options.refreshesToolsEachTurn ?? true },
    instructionsShown: new Set(),
    offeredThisRun: new Set(options.offeredThisRun ?? []),
    registerTools: (toolNames) => registered.push(...toolNames),
    registered,
  };
}

function fakePi(active: string[] = ["read", "ToolSearch"]) {
  return {
    active,
    getActiveTools: () => [...active],
    setActiveTools: (toolNames: string[]) => void active.splice(0, active.length, ...toolNames),
  };
}

async function search(state: FakeSession, query: string, pi = fakePi(), signal?: AbortSignal) {
  const result = await toolSearchDefinition(pi, () => state, "catalog").execute("call-1", { query }, signal, undefined, NO_CONTEXT);
  const text = result.content.map((block) => (block.type === "text" ? block.text : "")).join("");
  return { text, details: result.details, pi };
}

describe("ToolSearch: a query", () => {
  it("loads the best tools, registers and activates them, and says to call them directly on a host that refreshes", async () => {
    const state = session();
    const { text, details, pi } = await search(state, "screenshot of the browser");
    expect(details).toEqual({ query: "screenshot of the browser", loaded: ["web__take_screenshot"], instructed: ["web"] });
    expect(state.registered).toEqual(["web__take_screenshot"]);
    expect(pi.active).toEqual(["read", "ToolSearch", "web__take_screenshot"]);
    expect(text).toBe(
      [
        "Loaded this tool; call it directly:",
        "- web__take_screenshot: Take a screenshot of the browser window",
        'Instructions from MCP server "web" (shown once):',
        "Call fetch_page before take_screenshot.",
      ].join("\n"),
    );
  });

  it("on an older host, gives the schema and says to call through McpCall, unless the run already offers the tool", async () => {
    const state = session({ refreshesToolsEachTurn: false, offeredThisRun: ["files__write_file"] });
    const { text } = await search(state, "select:files__read_file,files__write_file");
    expect(text).toBe(
      [
        "Loaded this tool; call it directly:",
        "- files__write_file: Write text to a file on disk, replacing it",
        "Loaded this tool. It joins your tool list with the user's next message; until then call it through McpCall, " +
          'e.g. McpCall({"tool": "files__read_file", "arguments": {...}}):',
        "- files__read_file: Read the contents of a file from disk",
        '  Parameters (JSON Schema): {"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}',
      ].join("\n"),
    );
  });

  it("does not list as loaded what the model has already, and never drops an active tool", async () => {
    const state = session();
    const pi = fakePi(["read", "web__fetch_page"]);
    const { details } = await search(state, "select:web__fetch_page,web__take_screenshot", pi);
    expect(details.loaded).toEqual(["web__take_screenshot"]);
    expect(pi.active).toEqual(["read", "web__fetch_page", "web__take_screenshot"]);
  });

  it("shows a server's instructions once per session", async () => {
    const state = session();
    await search(state, "select:web__fetch_page");
    const { text, details } = await search(state, "select:web__take_screenshot");
    expect(details.instructed).toBeUndefined();
    expect(text).not.toContain("Instructions from");
    expect([...state.instructionsShown]).toEqual(["web"]);
  });

  it("names the close matches it did not load when the best tools are no clear answer", async () => {
    const { text, details } = await search(session(), "note");
    expect(details.loaded).toHaveLength(5);
    const lines = text.split("\n");
    const heading = lines.indexOf('Close matches not loaded (load one with ToolSearch "select:<name>"):');
    expect(heading).toBeGreaterThan(0);
    expect(lines.slice(heading + 1)).toHaveLength(NOTE_TOOLS - 5);
    for (const line of lines.slice(heading + 1)) expect(line).toMatch(/^- notes__note_\d: Store a short note$/);
    const named = lines.slice(heading + 1).map((line) => line.slice(2, line.indexOf(":")));
    expect(named.filter((name) => details.loaded.includes(name))).toEqual([]);
  });

  it("names no close match when one tool answers clearly", async () => {
    const { text } = await search(session(), "list directory entries");
    expect(text).not.toContain("Close matches");
  });

  it("follows the semantic ranker's order when there is one", async () => {
    const rerank = vi.fn(async (_query: string, lexical: readonly SearchHit[]) => [...lexical].reverse());
    const state = session({ semantic: { rerank } });
    const lexical = (await search(session(), "file")).details.loaded;
    const { details } = await search(state, "file");
    expect(rerank).toHaveBeenCalledOnce();
    expect(details.loaded[0]).not.toBe(lexical[0]);
  });

  it("answers an empty query, or one nothing matches, with how to search and the servers", async () => {
    const usage = [
      'Describe the tool you need in a few words, or use "select:name1,name2" with exact tool names.',
      "MCP servers: files, web, notes, alpha, beta.",
    ];
    expect(await search(session(), "  ")).toMatchObject({
      text: ["The query was empty.", ...usage].join("\n"),
      details: { query: "  ", loaded: [] },
    });
    expect((await search(session(), "zzqx")).text).toBe(['No MCP tool matches "zzqx".', ...usage].join("\n"));
    const long = "zzqx ".repeat(30).trim();
    expect((await search(session(), long)).text.split("\n")[0]).toBe(`No MCP tool matches "${long.slice(0, 79)}…".`);
  });
});

describe("ToolSearch: select:", () => {
  it("takes exact names, a name in another case, server/tool and an MCP name only one server has", async () => {
    const { details } = await search(session(), "SELECT: files__read_file, FILES__WRITE_FILE ,web/fetch_page,list_directory");
    expect(details.loaded).toEqual(["files__read_file", "files__write_file", "web__fetch_page", "files__list_directory"]);
  });

  it("reports unknown names with the closest match, and ambiguous ones with their candidates", async () => {
    const state = session();
    const { text, details, pi } = await search(state, "select:read_files,search");
    expect(details.loaded).toEqual([]);
    expect(pi.active).toEqual(["read", "ToolSearch"]);
    expect(text).toBe(
      [
        'No MCP tool is named "read_files" (closest: files__read_file).',
        '"search" is ambiguous: alpha__search, beta__search.',
        "Nothing was loaded.",
        'Describe the tool you need in a few words, or use "select:name1,name2" with exact tool names.',
        "MCP servers: files, web, notes, alpha, beta.",
      ].join("\n"),
    );
  });

  it("loads what it found and notes what it did not", async () => {
    const { text, details } = await search(session(), "select:alpha/search,nothing_like_it");
    expect(details.loaded).toEqual(["alpha__search"]);
    expect(text.split("\n").slice(0, 3)).toEqual([
      'No MCP tool is named "nothing_like_it".',
      "Loaded this tool; call it directly:",
      "- alpha__search: Search alpha records",
    ]);
  });

  it("loads at most five and names the rest", async () => {
    const names = Array.from({ length: 7 }, (_, index) => `notes__note_${index + 1}`);
    const { text, details } = await search(session(), `select:${names.join(",")}`);
    expect(details.loaded).toEqual(names.slice(0, 5));
    expect(text.split("\n")[0]).toBe("Loaded the first 5; not loaded: notes__note_6, notes__note_7.");
  });
});

describe("ToolSearch: servers whose tools are not known yet", () => {
  it("waits for startup to learn them, then searches what it learned", async () => {
    let learn = () => {};
    const state = session({ unlisted: ["late"], startup: new Promise<void>((resolve) => (learn = resolve)) });
    const answer = search(state, "select:late__hello");
    await new Promise((resolve) => setTimeout(resolve, 20));
    const { servers, inventories, tools, directToolNames } = session({ more: { late: { tools: [tool("hello", "Say hello")] } } });
    Object.assign(state, { servers, inventories, tools, directToolNames });
    learn();
    expect((await answer).details.loaded).toEqual(["late__hello"]);
  });

  it("stops waiting when the call is aborted", async () => {
    const state = session({ unlisted: ["late"], startup: new Promise<void>(() => {}) });
    const controller = new AbortController();
    const answer = search(state, "select:files__read_file", fakePi(), controller.signal);
    controller.abort();
    expect((await answer).details.loaded).toEqual(["files__read_file"]);
  });
});

describe("McpCall", () => {
  it("validates and coerces the arguments as Pi would, activates the tool and runs it", async () => {
    const state = session();
    const pi = fakePi();
    const run = vi.fn(async () => ({ content: [{ type: "text" as const, text: "ran" }], details: undefined }));
    const call = mcpCallDefinition(pi, () => state, run);
    const result = await call.execute("call-2", { tool: "files__read_file", arguments: { path: 42 } }, undefined, undefined, NO_CONTEXT);
    expect(result.content).toEqual([{ type: "text", text: "ran" }]);
    expect(run).toHaveBeenCalledWith("files__read_file", { path: "42" }, undefined, undefined, NO_CONTEXT);
    expect(pi.active).toContain("files__read_file");
    expect(state.registered).toEqual(["files__read_file"]);
  });

  it("refuses a name that is not an MCP tool, and arguments the tool's schema rejects", async () => {
    const state = session();
    const run = vi.fn();
    const call = mcpCallDefinition(fakePi(), () => state, run);
    await expect(call.execute("c", { tool: "nope" }, undefined, undefined, NO_CONTEXT)).rejects.toThrow(
      '"nope" is not an MCP tool. Use ToolSearch to find and load one first.',
    );
    await expect(call.execute("c", { tool: "files__read_file" }, undefined, undefined, NO_CONTEXT)).rejects.toThrow(
      /Validation failed for tool "files__read_file":\n {2}- path: must have required properties path/,
    );
    expect(run).not.toHaveBeenCalled();
  });
});

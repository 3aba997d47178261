import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { buildToolMetadata, type ServerInventory } from "../tool-metadata.ts";
import { BUILTIN_TOOL_NAMES } from "../tool-names.ts";
import { TOOL_SEARCH_NAME } from "../types.ts";
import { isValidToolName } from "./helpers/tool-names.ts";
import type { McpResource, McpTool, ServerDefinition, ToolPrefixMode } from "../types.ts";

interface CorpusServer {
  server: string;
  tools: McpTool[];
  resources?: McpResource[];
}

const corpus: CorpusServer[] = JSON.parse(readFileSync(new URL("./fixtures/corpus/tool-corpus.json", import.meta.url), "utf8"));

function definition(name: string, extra: Partial<ServerDefinition> = {}): ServerDefinition {
  return { name, command: "node", source: { kind: "user", path: "/home/u/.pi/agent/mcp.json" }, ...extra };
}

function inventory(name: string, tools: McpTool[], resources: McpResource[] = [], extra: Partial<ServerDefinition> = {}): ServerInventory {
  return { definition: definition(name, extra), tools, resources };
}

const corpusInventories = corpus.map((entry) => inventory(entry.server, entry.tools, entry.resources ?? []));
const corpusToolCount = corpus.reduce((sum, entry) => sum + entry.tools.length, 0);
const corpusResources = corpus.flatMap((entry) => entry.resources ?? []);
/** The resources that are tools' views (MCP Apps): no tool of their own. */
const corpusViewCount = corpusResources.filter((resource) => resource.mimeType === "text/html;profile=mcp-app").length;
const corpusResourceCount = corpusResources.length - corpusViewCount;

function hasCycle(value: unknown, seen = new Set<unknown>()): boolean {
  if (typeof value !== "object" || value === null) return false;
  if (seen.has(value)) return true;
  seen.add(value);
  const cyclic = Object.values(value).some((item) => hasCycle(item, seen));
  seen.delete(value);
  return cyclic;
}

function refKeys(value: unknown): number {
  if (typeof value !== "object" || value === null) return 0;
  return Object.entries(value).reduce((n, [key, item]) => n + (key === "$ref" ? 1 : 0) + refKeys(item), 0);
}

describe("buildToolMetadata over the real 1,052-tool corpus", () => {
  it.each<ToolPrefixMode>(["server", "short", "none"])("gives every tool a valid unique name and a provider-safe schema (%s)", (mode) => {
    expect([corpusToolCount, corpusViewCount]).toEqual([1052, 7]);
    const index = buildToolMetadata(corpusInventories, { toolPrefix: mode });
    expect(index.skipped).toEqual([]);
    expect(index.byName.size).toBe(corpusToolCount + corpusResourceCount);
    for (const metadata of index.byName.values()) {
      expect(isValidToolName(metadata.name), metadata.name).toBe(true);
      expect(BUILTIN_TOOL_NAMES.has(metadata.name)).toBe(false);
      expect(metadata.name).not.toBe(TOOL_SEARCH_NAME);
      const schema = metadata.inputSchema;
      expect(schema.type, metadata.name).toBe("object");
      expect(typeof schema.properties, metadata.name).toBe("object");
      expect(
        Object.keys(schema).every((key) => ["type", "properties", "required", "additionalProperties", "description"].includes(key)),
      ).toBe(true);
      expect(refKeys(schema), metadata.name).toBe(0);
      expect(hasCycle(schema), metadata.name).toBe(false);
      expect(JSON.parse(JSON.stringify(schema))).toEqual(schema);
    }
  });

  it("groups by server in the servers' own order and reports the cross-server collisions of toolPrefix none", () => {
    const index = buildToolMetadata(corpusInventories, { toolPrefix: "none" });
    expect([...index.byServer.keys()]).toEqual(corpus.map((entry) => entry.server));
    const filesystem = index.byServer.get("filesystem") ?? [];
    expect(filesystem.map((m) => m.originalName)).toEqual(corpus.find((e) => e.server === "filesystem")?.tools.map((t) => t.name));
    // filesystem and desktop-commander both offer read_file: one keeps it, the other gets a hashed name.
    const readFile = index.conflicts.find((c) => c.wanted === "read_file");
    expect(readFile?.reason).toBe("duplicate");
    expect(index.byName.get("read_file")?.serverName).toBe(readFile?.keptBy?.serverName);
    expect(index.byName.get(readFile?.assigned ?? "")?.serverName).toBe(readFile?.serverName);
  });

  it("keeps real recursive schemas (notion) usable: references inlined, recursion bounded", () => {
    const index = buildToolMetadata(corpusInventories, { toolPrefix: "server" });
    const patch = index.byName.get("notion__API-patch-block-children");
    const children = (patch!.inputSchema.properties as Record<string, any>).children;
    expect(children.type).toBe("array");
    expect(JSON.stringify(children.items)).toContain("paragraph");
    expect(patch?.inputSchema.required).toEqual(["block_id", "children"]);
  });

  it("is deterministic whatever the inventory order", () => {
    const names = (inventories: ServerInventory[]) =>
      [...buildToolMetadata(inventories, { toolPrefix: "none" }).byName.values()]
        .map((m) => `${m.serverName}/${m.originalName}=${m.name}`)
        .sort();
    expect(names([...corpusInventories].reverse())).toEqual(names(corpusInventories));
  });
});

describe("buildToolMetadata: tools", () => {
  it("prefixes names, keeps the original name, description and a safe schema", () => {
    const index = buildToolMetadata([
      inventory("my-server", [
        { name: "echo", description: "Echoes", inputSchema: { type: "object", properties: { m: { type: "string" } } } },
        { name: "titled", title: "Only a title" },
      ]),
    ]);
    expect(index.byServer.get("my-server")).toEqual([
      {
        name: "my_server__echo",
        serverName: "my-server",
        originalName: "echo",
        description: "Echoes",
        inputSchema: { type: "object", properties: { m: { type: "string" } } },
      },
      {
        name: "my_server__titled",
        serverName: "my-server",
        originalName: "titled",
        description: "Only a title",
        inputSchema: { type: "object", properties: {} },
      },
    ]);
  });

  it("never takes a builtin's or ToolSearch's name", () => {
    const index = buildToolMetadata([inventory("fs", [{ name: "read" }, { name: "ToolSearch" }])], { toolPrefix: "none" });
    const names = [...index.byName.keys()];
    expect(names).not.toContain("read");
    expect(names).not.toContain("ToolSearch");
    expect(index.conflicts.map((c) => c.reason).sort()).toEqual(["builtin", "reserved"]);
  });

  it("skips nameless and duplicate tools and says so", () => {
    const index = buildToolMetadata([
      inventory("s", [{ name: "a" }, { name: "a", description: "again" }, { nope: 1 } as unknown as McpTool]),
    ]);
    expect([...index.byName.keys()]).toEqual(["s__a"]);
    expect(index.skipped.map((s) => s.reason)).toEqual(["the server lists this tool name twice; the first is used", "tool without a name"]);
  });

  it("uses only the first inventory of a server given twice", () => {
    const index = buildToolMetadata([inventory("s", [{ name: "a" }]), inventory("s", [{ name: "b" }])]);
    expect([...index.byName.keys()]).toEqual(["s__a"]);
    expect(index.skipped).toHaveLength(1);
  });
});

describe("buildToolMetadata: excludeTools", () => {
  it("excludes by original name or by prefixed name, per server", () => {
    const tools = [{ name: "keep" }, { name: "drop-original" }, { name: "drop_prefixed" }];
    const index = buildToolMetadata([
      inventory("srv", tools, [], { excludeTools: ["drop-original", "srv__drop_prefixed"] }),
      inventory("other", tools),
    ]);
    expect(index.byServer.get("srv")?.map((m) => m.originalName)).toEqual(["keep"]);
    expect(index.byServer.get("other")).toHaveLength(3);
  });

  it("lets an excluded tool take no name, so the kept one is not renamed", () => {
    const index = buildToolMetadata(
      [inventory("a", [{ name: "search" }], [], { excludeTools: ["search"] }), inventory("b", [{ name: "search" }])],
      { toolPrefix: "none" },
    );
    expect(index.byName.get("search")?.serverName).toBe("b");
    expect(index.conflicts).toEqual([]);
  });

  it("excludes a tool by the hashed name it got after a conflict", () => {
    const first = buildToolMetadata([inventory("a", [{ name: "search" }]), inventory("b", [{ name: "search" }])], { toolPrefix: "none" });
    const hashed = first.conflicts[0].assigned;
    const index = buildToolMetadata(
      [inventory("a", [{ name: "search" }]), inventory("b", [{ name: "search" }], [], { excludeTools: [hashed] })],
      { toolPrefix: "none" },
    );
    expect([...index.byName.keys()]).toEqual(["search"]);
    expect(index.byServer.get("b")).toEqual([]);
    expect(index.conflicts).toEqual([]);
  });
});

describe("buildToolMetadata: resources as tools", () => {
  const resources: McpResource[] = [
    { uri: "console://logs", name: "Browser console logs", mimeType: "text/plain" },
    { uri: "memory://knowledge-graph", name: "knowledge-graph", description: "The full graph" },
  ];

  it("exposes resources by default, as get_<name> tools with an empty schema", () => {
    const index = buildToolMetadata([inventory("mem", [], resources)]);
    expect(index.byServer.get("mem")).toEqual([
      {
        name: "mem__get_browser_console_logs",
        serverName: "mem",
        originalName: "Browser console logs",
        description: "Read resource: console://logs",
        inputSchema: { type: "object", properties: {} },
        resourceUri: "console://logs",
      },
      {
        name: "mem__get_knowledge_graph",
        serverName: "mem",
        originalName: "knowledge-graph",
        description: "Read resource: memory://knowledge-graph\nThe full graph",
        inputSchema: { type: "object", properties: {} },
        resourceUri: "memory://knowledge-graph",
      },
    ]);
  });

  it("does not expose resources when exposeResources is false", () => {
    const index = buildToolMetadata([inventory("mem", [{ name: "t" }], resources, { exposeResources: false })]);
    expect(index.byServer.get("mem")?.map((m) => m.name)).toEqual(["mem__t"]);
  });

  it("keeps a resource apart from a tool or resource that wants the same name", () => {
    const index = buildToolMetadata([
      inventory(
        "s",
        [{ name: "get_config" }],
        [
          { uri: "config://a", name: "config" },
          { uri: "config://b", name: "Config" },
          { uri: "config://a", name: "config" },
        ],
      ),
    ]);
    const entries = index.byServer.get("s") ?? [];
    expect(entries.map((m) => m.resourceUri)).toEqual([undefined, "config://a", "config://b"]);
    expect(new Set(entries.map((m) => m.name)).size).toBe(3);
    expect(entries[0].name).toBe("s__get_config");
    expect(index.skipped.map((s) => s.reason)).toEqual(["the server lists resource config://a twice"]);
  });

  it("names a resource without letters from its URI, and excludes resources by name or tool name", () => {
    const index = buildToolMetadata([
      inventory(
        "s",
        [],
        [
          { uri: "file:///tmp/report.txt", name: "???" },
          { uri: "x://hidden", name: "hidden" },
          { uri: "x://gone", name: "gone" },
        ],
        { excludeTools: ["hidden", "get_gone"] },
      ),
    ]);
    expect(index.byServer.get("s")?.map((m) => m.name)).toEqual(["s__get_tmp_report_txt"]);
  });

  it("makes no tool of a view (MCP Apps): a ui:// resource or template, or anything of the views' MIME type", () => {
    const index = {
      ...inventory(
        "basic",
        [{ name: "get-time", ui: { resourceUri: "ui://get-time/mcp-app.html" } }],
        [
          { uri: "ui://get-time/mcp-app.html", name: "ui://get-time/mcp-app.html", mimeType: "text/html" },
          { uri: "UI://unnamed/view", name: "no tool names it" },
          { uri: "https://example.com/view.html", name: "other view", mimeType: "text/html; profile=MCP-App" },
          { uri: "notes://readme", name: "readme", mimeType: "text/html" },
        ],
      ),
      resourceTemplates: [
        { uriTemplate: "ui://views/{id}", name: "views" },
        { uriTemplate: "pages://{id}", name: "pages", mimeType: "text/html;profile=mcp-app" },
        { uriTemplate: "notes://{id}", name: "note" },
      ],
    };
    expect(
      buildToolMetadata([index])
        .byServer.get("basic")
        ?.map((m) => m.name),
    ).toEqual(["basic__get-time", "basic__get_readme", "basic__get_note"]);
  });
});

describe("buildToolMetadata: skill files", () => {
  it("makes no tool of a skill's files or of the skills template (they reach the model as skills, verified)", () => {
    const skills = {
      ...inventory(
        "docs",
        [],
        [
          { uri: "skill://pdf-tools/SKILL.md", name: "pdf-tools" },
          { uri: "docs://readme", name: "readme" },
        ],
      ),
      resourceTemplates: [
        { uriTemplate: "skill://{+path}", name: "io.modelcontextprotocol/skills" },
        { uriTemplate: "docs://{page}", name: "page" },
      ],
    };
    const { byName } = buildToolMetadata([skills]);
    expect([...byName.values()].map((tool) => tool.resourceUri ?? tool.uriTemplate)).toEqual(["docs://readme", "docs://{page}"]);
  });
});

/**
 * Which protocol a server is spoken to in (connection/era.ts), against real servers over stdio: a 2026-07-28 server
 * on the official SDK v2, a 2025 one (the reference server-everything), and faulty-server.mjs behaving as servers in
 * the wild do with a request they do not know before `initialize` (exit, or no answer), or with no version in common.
 * And what the manager keeps of it: the verdict saves the next connect its probe; a stale one costs one retry.
 */
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LEGACY_VERDICT_MAX_AGE_MS } from "../connection/era.ts";
import type { ProtocolVerdict } from "../connection/session.ts";
import { IncompatibleServerError, McpServerManager } from "../server-manager.ts";
import type { ServerDefinition } from "../types.ts";
import { FAULTY_SERVER } from "./helpers/fault-setup.ts";
import { readEvents } from "./helpers/fixture-log.ts";
import { type FixtureProcess, startFixtureProcess } from "./helpers/fixture-process.ts";
import { REPO_ROOT } from "./helpers/hosts.ts";
import { everythingStdioDef, failure, killLeftovers, serverDef, tempDir, waitFor } from "./server-manager-helpers.ts";

const V2_SERVER = join(REPO_ROOT, "test/fixtures/servers/v2-server.mjs");

let dir: ReturnType<typeof tempDir>;
let manager: McpServerManager | undefined;
/** What the manager is told a server spoke last time, by name. */
const verdicts = new Map<string, ProtocolVerdict>();

beforeEach(() => {
  dir = tempDir();
  verdicts.clear();
});

afterEach(async () => {
  await manager?.closeAll();
  manager = undefined;
  killLeftovers(dir.path);
  dir.remove();
});

function newManager(): McpServerManager {
  manager = new McpServerManager({ agentDir: dir.path, resolveNpx: false, known: (def) => ({ protocol: verdicts.get(def.name) }) });
  return manager;
}

const logFile = (name: string) => join(dir.path, `${name}.log`);
const v2 = (name: string, env: Record<string, string> = {}): ServerDefinition =>
  serverDef(name, { command: process.execPath, args: [V2_SERVER], env: { V2_LOG: logFile(name), ...env } });
const faulty = (name: string, env: Record<string, string>): ServerDefinition =>
  serverDef(name, { command: process.execPath, args: [FAULTY_SERVER], env: { FAULT_LOG: logFile(name), ...env } });
const everything = (name: string): ServerDefinition => everythingStdioDef(name);

/** The methods the server received, in order (both fixtures log them). */
function methodsReceived(name: string): string[] {
  return readEvents(logFile(name)).flatMap((entry) => {
    const method = (entry as { method?: unknown }).method;
    return typeof method === "string" && !method.startsWith("notifications/") ? [method] : [];
  });
}

describe("the era a server is spoken to in", () => {
  it("a 2026-07-28 server: probed with server/discover, then stateless (no initialize)", async () => {
    const connection = await newManager().connect(v2("modern"));
    expect(connection.protocol).toMatchObject({ era: "modern", version: "2026-07-28" });
    expect(methodsReceived("modern")[0]).toBe("server/discover");
    expect(methodsReceived("modern")).not.toContain("initialize");
    expect((await manager!.callTool("modern", "echo", { text: "hi" })).content).toEqual([{ type: "text", text: "hi" }]);
  });

  it("a 2025 server: its answer to the probe sends the connect on to initialize", async () => {
    const connection = await newManager().connect(everything("legacy"));
    expect(connection.protocol).toMatchObject({ era: "legacy", version: "2025-11-25" });
    expect(connection.tools.map((tool) => tool.name)).toContain("get-sum");
  });

  it("a server that exits on the probe is a 2025 server: started again, and initialized", async () => {
    const connection = await newManager().connect(faulty("exits", { FAULT_PREINIT: "exit" }));
    expect(connection.protocol.era).toBe("legacy");
    const starts = readEvents(logFile("exits")).filter((entry) => entry.event === "start");
    expect(starts).toHaveLength(2);
    expect(methodsReceived("exits")).toEqual(["server/discover", "initialize", "tools/list"]);
  });

  it("a server that does not answer the probe is taken for a 2025 server after the probe's time", async () => {
    const connection = await newManager().connect(faulty("silent", { FAULT_PREINIT: "silent" }));
    expect(connection.protocol.era).toBe("legacy");
    expect(methodsReceived("silent").slice(0, 2)).toEqual(["server/discover", "initialize"]);
  });

  it("no version in common: one line naming both sides' versions, and no second attempt", async () => {
    const error = await failure(newManager().connect(faulty("alien", { FAULT_VERSIONS: "2030-01-01,2031-01-01" })));
    expect(error).toBeInstanceOf(IncompatibleServerError);
    expect(error.message).toBe(
      'MCP server "alien" speaks no protocol version this adapter does: it supports 2030-01-01, 2031-01-01; ' +
        "the adapter supports 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05, 2024-10-07",
    );
    expect(readEvents(logFile("alien")).filter((entry) => entry.event === "start")).toHaveLength(1);
  });
});

describe("the verdict kept for the next connect", () => {
  it("a modern verdict skips the probe: the first requests are the listings", async () => {
    const first = await newManager().connect(v2("kept"));
    verdicts.set("kept", first.protocol);
    await manager!.close("kept");
    const before = methodsReceived("kept").length;
    const second = await manager!.connect(v2("kept"));
    expect(second.protocol.era).toBe("modern");
    expect(methodsReceived("kept").slice(before)[0]).toMatch(/^(tools|resources|prompts)\/list$/);
    expect(methodsReceived("kept").slice(before)).not.toContain("server/discover");
  });

  it("a legacy verdict skips the probe while it is recent, and is checked again once it is old", async () => {
    const first = await newManager().connect(faulty("old", {}));
    verdicts.set("old", first.protocol);
    await manager!.close("old");
    const before = methodsReceived("old").length;
    await manager!.connect(faulty("old", {}));
    expect(methodsReceived("old").slice(before)[0]).toBe("initialize");
    await manager!.close("old");

    verdicts.set("old", { ...first.protocol, checkedAt: Date.now() - LEGACY_VERDICT_MAX_AGE_MS - 1 });
    const again = methodsReceived("old").length;
    await manager!.connect(faulty("old", {}));
    expect(methodsReceived("old").slice(again)[0]).toBe("server/discover");
  });

  it("a stale modern verdict (the server went back to 2025) costs one more connect, which probes", async () => {
    const modern = await newManager().connect(v2("moved"));
    verdicts.set("moved", modern.protocol);
    await manager!.close("moved");
    const connection = await manager!.connect({ ...everything("moved") });
    expect(connection.protocol.era).toBe("legacy");
    expect(connection.tools.map((tool) => tool.name)).toContain("get-sum");
  });
});

describe("lists a 2026 server said are still valid", () => {
  it("are noted with their time, and a connect while they are valid asks for none of them", async () => {
    const first = await newManager().connect(v2("ttl"));
    const { tools, resources, prompts } = first.freshUntil;
    for (const until of [tools, resources, prompts]) expect(until).toBeGreaterThan(Date.now() + 50_000);
    await manager!.close("ttl");
    const before = methodsReceived("ttl").length;
    const fresh = {
      tools: { items: first.tools, freshUntil: tools! },
      resources: { items: first.resources, templates: first.resourceTemplates, freshUntil: resources! },
      prompts: { items: first.prompts, freshUntil: prompts! },
    };
    const known = { protocol: first.protocol, fresh };
    manager = new McpServerManager({ agentDir: dir.path, resolveNpx: false, known: () => known });
    const second = await manager.connect(v2("ttl"));
    expect(methodsReceived("ttl").slice(before)).toEqual([]);
    expect(second.tools.map((tool) => tool.name)).toEqual(first.tools.map((tool) => tool.name));
    expect((await manager.callTool("ttl", "echo", { text: "no listing needed" })).content).toEqual([
      { type: "text", text: "no listing needed" },
    ]);
  });

  it("a 2025 server gives none: its lists are asked for at every connect", async () => {
    const connection = await newManager().connect(everything("old-style"));
    expect(connection.freshUntil).toEqual({});
  });
});

describe("a 2026 server's list changes", () => {
  it("come on the subscriptions/listen stream the adapter opens, and its tools are read again", async () => {
    const changed: string[] = [];
    manager = new McpServerManager({ agentDir: dir.path, resolveNpx: false, onMetadataChanged: (name) => changed.push(name) });
    await manager.connect(v2("changing"));
    await waitFor(() => methodsReceived("changing").includes("subscriptions/listen"));
    await manager.callTool("changing", "add_tool", { name: "late" });
    await waitFor(() => changed.includes("changing"));
    expect(manager.getConnection("changing")!.tools.map((tool) => tool.name)).toContain("late");
    expect((await manager.callTool("changing", "late", {})).content).toEqual([{ type: "text", text: "I am late" }]);
  });
});

describe("a 2026 server over Streamable HTTP", () => {
  let http: FixtureProcess | undefined;
  afterEach(async () => {
    await http?.stop();
    http = undefined;
  });

  async function v2Http(name: string, env: Record<string, string> = {}): Promise<ServerDefinition> {
    http = await startFixtureProcess(V2_SERVER, "v2 HTTP server", { V2_TRANSPORT: "http", V2_LOG: logFile(name), ...env });
    return serverDef(name, { url: `${http.base}/mcp` });
  }

  it("gets the headers a tool declares for its arguments, and the standard ones", async () => {
    await newManager().connect(await v2Http("headers", { V2_LEGACY: "reject" }));
    const result = await manager!.callTool("headers", "header_echo", { region: "eu-west" });
    const headers = JSON.parse((result.content[0] as { text: string }).text) as Record<string, string>;
    expect(headers).toMatchObject({
      "mcp-method": "tools/call",
      "mcp-name": "header_echo",
      "mcp-param-region": "eu-west",
      "mcp-protocol-version": "2026-07-28",
    });
  });

  it("a tool whose header declarations break the rules is not offered, and the listing says why", async () => {
    const connection = await newManager().connect(await v2Http("strict", { V2_INVALID_HEADER: "1" }));
    expect(connection.tools.map((tool) => tool.name)).not.toContain("bad_header");
    expect(connection.tools.map((tool) => tool.name)).toContain("header_echo");
    expect(connection.problems).toEqual([
      expect.stringMatching(/^tool "bad_header" left out: its input schema declares HTTP headers wrongly \(/),
    ]);
  });
});

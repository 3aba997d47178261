/**
 * Running an MCP tool without Pi: the executor over a real server manager and lifecycle, with the scriptable stdio
 * fixture and the content fixture as servers. A call connects a lazy server, finds a server by the tool's prefix,
 * reads a resource, streams progress; failures reach the model as errors that say why (the server's error result,
 * arguments it refused, a time limit, a cancel, a crash, a shutdown, a missing approval). In the real Pi:
 * adapter.e2e.test.ts, call-limits.e2e.test.ts, call-abort.e2e.test.ts.
 */
import type { AgentToolResult, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SessionApprovals } from "../calls/approvals.ts";
import { UnansweredPages } from "../connection/elicitation-url.ts";
import { McpLifecycleManager } from "../lifecycle.ts";
import { createCacheEntry } from "../metadata-cache.ts";
import { McpServerManager } from "../server-manager.ts";
import { executeMcpTool, type ToolCallContext } from "../tool-executor.ts";
import { buildToolView, updateServerInventory } from "../tool-view.ts";
import type { ServerDefinition } from "../types.ts";
import { fixtureDef, killLeftovers, serverDef, tempDir } from "./server-manager-helpers.ts";

const CONTENT_FIXTURE = join(import.meta.dirname, "fixtures", "content-server.mjs");

interface Recorded {
  server: string;
  tool: string;
  ok: boolean;
}

interface Session extends ToolCallContext {
  readonly manager: McpServerManager;
  readonly unansweredPages: UnansweredPages;
  /** What the call statistics were told. */
  readonly recorded: Recorded[];
}

let dir: ReturnType<typeof tempDir>;
const managers: McpServerManager[] = [];

beforeEach(() => {
  dir = tempDir();
});

afterEach(async () => {
  await Promise.all(managers.splice(0).map((manager) => manager.closeAll()));
  killLeftovers(dir.path);
  dir.remove();
});

/**
 * A session over `servers`, with the tools of `listed` known before any call (as from the cache); a server that
 * connects updates them, as the adapter does.
 */
function session(servers: ServerDefinition[], listed: Record<string, { tools: string[]; resources?: string[] }>): Session {
  const config = { servers, settings: {}, problems: [], userFile: join(dir.path, "mcp.json") };
  const inventories = new Map(
    Object.entries(listed).map(([name, { tools, resources = [] }]) => {
      const definition = servers.find((server) => server.name === name)!;
      const entry = createCacheEntry(
        definition,
        tools.map((tool) => ({ name: tool, inputSchema: { type: "object", properties: { text: { type: "string" } } } })),
        resources.map((resource) => ({ uri: `fixture://${resource}`, name: resource })),
      );
      return [name, { definition, ...entry, origin: "cache" as const, listedAt: entry.cachedAt }];
    }),
  );
  const view = buildToolView(config, { path: join(dir.path, "cache.json"), servers: new Map(), problems: [] }, inventories);
  const recorded: Recorded[] = [];
  const manager = new McpServerManager({ agentDir: dir.path });
  managers.push(manager);
  const lifecycle = new McpLifecycleManager(manager, {
    onReconnect: (name) => {
      const connection = manager.getConnection(name)!;
      updateServerInventory(view, name, createCacheEntry(view.servers.get(name)!, connection.tools, connection.resources));
    },
  });
  lifecycle.registerServers(servers);
  return Object.assign(view, {
    agentDir: dir.path,
    manager,
    lifecycle,
    approvals: new SessionApprovals([], () => {}),
    stats: { record: (server: string, tool: string, _ms: number, ok: boolean) => void recorded.push({ server, tool, ok }) },
    unansweredPages: new UnansweredPages(),
    // The fixture runs no tool as a task (tasks.test.ts has those).
    tasks: { await: () => Promise.reject(new Error("no tool of these servers runs as a task")) },
    shutDown: false,
    recorded,
  });
}

const fx = (extra: Partial<ServerDefinition> = {}) => fixtureDef("fx", { FIXTURE_RESOURCES: "ok" }, extra);
const FX_TOOLS = { tools: ["echo", "wait", "crash", "gone"], resources: ["one"] };

function call(
  state: Session,
  name: string,
  params: unknown = {},
  options: { signal?: AbortSignal; onUpdate?: (update: AgentToolResult<unknown>) => void; ctx?: ExtensionContext } = {},
) {
  return executeMcpTool(state, name, params, options.signal, options.onUpdate, options.ctx);
}

async function failure(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("expected the call to fail");
}

const textOf = (result: AgentToolResult<unknown>) => result.content.map((block) => (block.type === "text" ? block.text : "")).join("\n");

describe("a call that succeeds", () => {
  it("connects a lazy server on the first call, returns its answer and records it", async () => {
    const state = session([fx()], { fx: FX_TOOLS });
    expect(state.manager.getConnection("fx")).toBeUndefined();
    const result = await call(state, "fx__echo", { text: "hello" });
    expect(textOf(result)).toBe("hello");
    expect(result.details).toEqual({ server: "fx", tool: "echo", truncated: false, toonEncoded: false });
    expect(state.manager.getConnection("fx")).toBeDefined();
    expect(state.recorded).toEqual([{ server: "fx", tool: "echo", ok: true }]);
  });

  it("reads the resource a resource tool stands for", async () => {
    const state = session([fx()], { fx: FX_TOOLS });
    expect(textOf(await call(state, "fx__get_one"))).toBe("content of fixture://one");
  });

  it("finds the server of a tool whose server was never listed by its prefix, and learns its tools", async () => {
    const state = session([fx()], {});
    expect(textOf(await call(state, "fx__echo", { text: "learned" }))).toBe("learned");
    expect(state.tools.byName.has("fx__crash")).toBe(true);
  });

  it("streams the server's progress", async () => {
    const state = session([fx()], { fx: FX_TOOLS });
    const controller = new AbortController();
    const updates: string[] = [];
    const onUpdate = (update: AgentToolResult<unknown>) => {
      updates.push(textOf(update));
      if (updates.length === 2) controller.abort();
    };
    await failure(call(state, "fx__wait", {}, { signal: controller.signal, onUpdate }));
    expect(updates).toEqual(["Progress: 1", "Progress: 2"]);
  });

  it("tells the model about pages the server asked the user to open that nobody could be asked about", async () => {
    const state = session([fx()], { fx: FX_TOOLS });
    const page = { url: "https://example.com/sign-in", message: "Sign in" };
    const told = new UnansweredPages();
    told.add("fx", page);
    state.unansweredPages.add("fx", page);
    const result = await call(state, "fx__echo", { text: "done" });
    expect(result.content).toEqual([
      { type: "text", text: "done" },
      { type: "text", text: told.take("fx") },
    ]);
    expect(textOf(result)).toContain('MCP server "fx" asked the user to open');
    expect(state.unansweredPages.take("fx")).toBeUndefined();
  });
});

describe("a server closed between its connect and the request (the end of a listing, an idle close)", () => {
  /** The race, made certain: the first time the lifecycle hands out a connection, the server is closed at once. */
  function closedAfterFirstConnect(state: Session): void {
    const ensureConnected = state.lifecycle.ensureConnected.bind(state.lifecycle);
    let closed = false;
    state.lifecycle.ensureConnected = async (name, signal) => {
      const connection = await ensureConnected(name, signal);
      if (!closed) void state.manager.close(name);
      closed = true;
      return connection;
    };
  }

  it("a tool call connects it again and is answered", async () => {
    const state = session([fx()], { fx: FX_TOOLS });
    closedAfterFirstConnect(state);
    expect(textOf(await call(state, "fx__echo", { text: "still here" }))).toBe("still here");
  });

  it("a resource read connects it again and is answered", async () => {
    const state = session([fx()], { fx: FX_TOOLS });
    closedAfterFirstConnect(state);
    expect(textOf(await call(state, "fx__get_one"))).toBe("content of fixture://one");
  });
});

describe("a call for a codemode script (Pi 1.x)", () => {
  const content = () => serverDef("content", { command: process.execPath, args: [CONTENT_FIXTURE] });
  const forScripts = (state: Session, name: string, params: unknown = {}) =>
    executeMcpTool(state, name, params, undefined, undefined, undefined, { scriptResults: true });

  it("carries the whole answer, structured content and blocks as the server sent them, beside the model's text", async () => {
    const state = session([content()], { content: { tools: ["structured-only"] } });
    const result = await forScripts(state, "content__structured-only");
    expect(result.structuredContent).toEqual({ content: [], structuredContent: { temperature: 21.5, unit: "C" } });
    expect(textOf(result)).toContain("21.5");
    expect(result.isError).toBeUndefined();
  });

  it("returns the server's error result as one, keeping what it said, and records a failure", async () => {
    const state = session([content()], { content: { tools: ["fail"] } });
    const result = await forScripts(state, "content__fail");
    expect(result).toMatchObject({ isError: true, content: [{ type: "text", text: "Repository not found: acme/nothing" }] });
    expect(result.structuredContent).toEqual({ content: [{ type: "text", text: "Repository not found: acme/nothing" }], isError: true });
    expect(state.recorded).toEqual([{ server: "content", tool: "fail", ok: false }]);
  });

  it("gives a resource a resource tool reads as an embedded resource block", async () => {
    const state = session([fx()], { fx: FX_TOOLS });
    const result = await forScripts(state, "fx__get_one");
    expect(result.structuredContent).toEqual({
      content: [{ type: "resource", resource: expect.objectContaining({ uri: "fixture://one", text: "content of fixture://one" }) }],
    });
  });

  it("leaves the model's calls as they were: no script result, an error result thrown", async () => {
    const state = session([content()], { content: { tools: ["structured-only", "fail"] } });
    expect((await call(state, "content__structured-only")).structuredContent).toBeUndefined();
    expect(await failure(call(state, "content__fail"))).toBe("Repository not found: acme/nothing");
  });
});

describe("a call that fails", () => {
  it("passes on the server's error result", async () => {
    const state = session([serverDef("content", { command: process.execPath, args: [CONTENT_FIXTURE] })], { content: { tools: ["fail"] } });
    expect(await failure(call(state, "content__fail"))).toBe("Repository not found: acme/nothing");
    expect(state.recorded).toEqual([{ server: "content", tool: "fail", ok: false }]);
  });

  it("names a tool nobody offers, without starting a server", async () => {
    const state = session([fx()], { fx: FX_TOOLS });
    expect(await failure(call(state, "nope__tool"))).toBe('Unknown MCP tool "nope__tool". Use ToolSearch to find the tool you need.');
    expect(state.manager.getConnection("fx")).toBeUndefined();
  });

  it("says a disabled server's tool cannot run", async () => {
    const state = session([fx({ enabled: false })], {});
    expect(await failure(call(state, "fx__echo"))).toBe('MCP server "fx" is not configured (or is disabled)');
  });

  it("says when the server, once connected, no longer offers the tool", async () => {
    const state = session([fx()], { fx: FX_TOOLS });
    expect(await failure(call(state, "fx__gone"))).toBe('MCP server "fx" no longer offers "gone". Use ToolSearch to find another tool.');
    expect(state.tools.byName.has("fx__gone")).toBe(false);
  });

  it("gives the expected parameters when the server refused the arguments", async () => {
    const state = session([fx()], { fx: FX_TOOLS });
    // Connected past the lifecycle, so the view keeps "gone" (which the fixture refuses with -32602).
    await state.manager.connect(fx());
    expect(await failure(call(state, "fx__gone", { text: 1 }))).toMatch(/^MCP tool "gone" on server "fx": unknown tool gone\n.*text/s);
  });

  it("says which time limit ended it and how to raise it", async () => {
    const state = session([fx({ maxTotalTimeoutMs: 300 })], { fx: FX_TOOLS });
    expect(await failure(call(state, "fx__wait"))).toBe(
      'MCP tool "wait" on server "fx" timed out: it ran 0.3 s in all (the maxTotalTimeoutMs limit) and was cancelled at the server. ' +
        'If it needs longer, the user can raise "maxTotalTimeoutMs" for server "fx" in the MCP config ' +
        "(mcpServers.fx.maxTotalTimeoutMs or settings.maxTotalTimeoutMs, in milliseconds); otherwise ask the tool for less.",
    );
  });

  it("says it was cancelled when the call was aborted", async () => {
    const state = session([fx()], { fx: FX_TOOLS });
    await call(state, "fx__echo", { text: "connect first" });
    const controller = new AbortController();
    const running = call(state, "fx__wait", {}, { signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    expect(await failure(running)).toBe('MCP tool "wait" on server "fx" was cancelled.');
  });

  it("gives the server's last output when it died during the call", async () => {
    const state = session([fx()], { fx: FX_TOOLS });
    await call(state, "fx__echo", { text: "connect first" });
    const pid = state.manager.getState("fx").pid;
    expect(await failure(call(state, "fx__crash"))).toMatch(
      new RegExp(
        `^MCP tool "crash" on server "fx": the server closed the connection during the call \\(.*\\)\\. The next call starts it again\\.\n` +
          `Last server output:\nfixture server ${pid} starting$`,
      ),
    );
  });

  it("says the session ended, not the server, when a shutdown cut it short", async () => {
    const state = session([fx()], { fx: FX_TOOLS });
    await call(state, "fx__echo", { text: "connect first" });
    const running = call(state, "fx__wait");
    await new Promise((resolve) => setTimeout(resolve, 100));
    Object.assign(state, { shutDown: true, shutdownReason: "reload" });
    const stopped = failure(running);
    await state.manager.closeAll();
    expect(await stopped).toBe(
      'MCP tool "wait" on server "fx" was stopped before it answered: the MCP adapter is reloading (/reload). The server did not fail.',
    );
  });

  it("does not run (nor start the server of) a tool that needs approval when no one can be asked", async () => {
    const state = session([fx({ approveTools: ["echo"] })], { fx: FX_TOOLS });
    expect(await failure(call(state, "fx__echo", { text: "x" }))).toMatch(
      /^MCP tool "echo" on server "fx" needs the user's approval, and there is no one to ask/,
    );
    expect(state.manager.getConnection("fx")).toBeUndefined();
  });

  it("adds to the error the pages the server asked the user to open", async () => {
    const state = session([fx()], { fx: FX_TOOLS });
    await state.manager.connect(fx());
    state.unansweredPages.add("fx", { url: "https://example.com/pay", message: "Pay" });
    expect(await failure(call(state, "fx__gone"))).toMatch(/unknown tool gone\n(.|\n)*\nMCP server "fx" asked the user to open/);
  });
});

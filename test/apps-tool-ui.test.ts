/**
 * MCP Apps, what every start needs: a tool's `_meta.ui` read from a listing (bad parts cost only the view), kept in
 * the metadata cache, and what it decides (app-only tools are never the model's; a tool with a view carries its
 * URI), the extension the client declares, and the `apps` switches of the config.
 */
import { EXTENSION_ID, RESOURCE_MIME_TYPE } from "@modelcontextprotocol/ext-apps/server";
import type { Client } from "@modelcontextprotocol/client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { appsSettings, UI_EXTENSION_ID, uiExtension, VIEW_MIME_TYPE, viewsOffered } from "../apps.ts";
import { listTools } from "../connection/listing.ts";
import { createCacheEntry, parseEntry } from "../tools/cache-entry.ts";
import { buildToolMetadata } from "../tool-metadata.ts";
import type { McpTool, ServerDefinition } from "../types.ts";
import { createConfigSandbox, serversByName, type ConfigSandbox } from "./config-sandbox.ts";

const VIEW = "ui://get-time/mcp-app.html";
const definition: ServerDefinition = { name: "basic", command: "node", source: { kind: "user", path: "/u/mcp.json" } };

/** A client whose tools/list answers these entries (the listing reads the raw answer). */
const listing = (tools: unknown[]) => ({ request: async () => ({ tools }) }) as unknown as Client;

describe("a tool's _meta.ui, from the listing to the model", () => {
  it("the listing keeps the view URI (nested, or the older flat key) and the visibility; a non-ui:// URI costs only the view", async () => {
    const { items, problems } = await listTools(
      listing([
        { name: "get-time", _meta: { ui: { resourceUri: VIEW, visibility: ["model", "app", "robot"] } } },
        { name: "legacy", _meta: { "ui/resourceUri": "ui://legacy/app.html" } },
        { name: "refresh", _meta: { ui: { resourceUri: VIEW, visibility: ["app"] } } },
        { name: "web", _meta: { ui: { resourceUri: "https://example.com/app.html" } } },
        { name: "plain" },
      ]),
    );
    expect(items.map(({ name, ui }) => ({ name, ui }))).toEqual([
      { name: "get-time", ui: { resourceUri: VIEW, visibility: ["model", "app"] } },
      { name: "legacy", ui: { resourceUri: "ui://legacy/app.html" } },
      { name: "refresh", ui: { resourceUri: VIEW, visibility: ["app"] } },
      { name: "web", ui: undefined },
      { name: "plain", ui: undefined },
    ]);
    expect(problems).toEqual(['tool "web" names its view "https://example.com/app.html", not a ui:// resource: it opens no view']);
  });

  it("the metadata cache keeps it; a malformed one read back costs only the view", () => {
    const tools: McpTool[] = [{ name: "get-time", inputSchema: { type: "object" }, ui: { resourceUri: VIEW, visibility: ["app"] } }];
    const entry = createCacheEntry(definition, tools, [], 1);
    const back = parseEntry(JSON.parse(JSON.stringify(entry)));
    expect(back?.tools[0]?.ui).toEqual({ resourceUri: VIEW, visibility: ["app"] });
    const tampered = { ...entry, tools: [{ name: "get-time", ui: { resourceUri: "javascript:alert(1)", visibility: "app" } }] };
    expect(parseEntry(tampered)?.tools[0]).toEqual({ name: "get-time" });
  });

  it("a tool only the view may call is never offered to the model; a tool with a view carries its URI", () => {
    const index = buildToolMetadata([
      {
        definition,
        resources: [],
        tools: [
          { name: "get-time", ui: { resourceUri: VIEW } },
          { name: "refresh", ui: { resourceUri: VIEW, visibility: ["app"] } },
          { name: "nobody", ui: { visibility: [] } },
          { name: "plain" },
        ],
      },
    ]);
    expect([...index.byName.keys()]).toEqual(["basic__get-time", "basic__plain"]);
    expect(index.byName.get("basic__get-time")?.viewUri).toBe(VIEW);
    expect(index.byName.get("basic__plain")?.viewUri).toBeUndefined();
  });
});

describe("what the client declares, and the switches", () => {
  it("declares io.modelcontextprotocol/ui with the MIME type it renders: the official package's names", () => {
    expect([UI_EXTENSION_ID, VIEW_MIME_TYPE]).toEqual([EXTENSION_ID, RESOURCE_MIME_TYPE]);
    expect(uiExtension()).toEqual({ [EXTENSION_ID]: { mimeTypes: [RESOURCE_MIME_TYPE] } });
  });

  it("views are on by default; settings.apps false, or a server's apps false, turns them off", () => {
    expect(appsSettings({})).toEqual({ enabled: true, openBrowser: true });
    expect(appsSettings({ apps: { openBrowser: false } })).toEqual({ enabled: true, openBrowser: false });
    expect(viewsOffered({}, {})).toBe(true);
    expect(viewsOffered({ apps: false }, {})).toBe(false);
    expect(viewsOffered({}, { apps: false })).toBe(false);
  });
});

describe("the apps fields of a config file", () => {
  let sandbox: ConfigSandbox;
  beforeEach(() => {
    sandbox = createConfigSandbox();
  });
  afterEach(() => sandbox.remove());

  it("settings.apps and a server's apps are read; a bad server value opens no view, a bad setting field is ignored", () => {
    sandbox.write("home/.pi/agent/mcp.json", {
      settings: { apps: { enabled: true, openBrowser: "no" } },
      mcpServers: { basic: { command: "node", apps: false }, odd: { command: "node", apps: "off" } },
    });
    const config = sandbox.load();
    expect(config.settings.apps).toEqual({ enabled: true });
    expect(serversByName(config)).toMatchObject({ basic: { apps: false }, odd: { apps: false } });
    expect(config.problems.map(({ message }) => message.split(": ").slice(-2).join(": "))).toEqual([
      '"apps": must be true or false (got a string); its tools open no view',
      '"settings.apps.openBrowser": must be true or false (got a string); ignored (the default applies)',
    ]);
  });
});

/**
 * Loading the extension the way Pi does (jiti without a module cache, in a fresh process) must not load the MCP SDK,
 * the npx resolver or the app bridge of tools' views: with lazy servers nothing connects at startup, and they are most of the load time. The SDK half
 * of the connection code comes with the first connect.
 */
import { describe, expect, it } from "vitest";
import { currentHost } from "./helpers/hosts.ts";
import { importAsPi } from "./helpers/module-load.ts";

const CONNECTION_ONLY = [
  "/@modelcontextprotocol/client/",
  "/@modelcontextprotocol/core/",
  "/node_modules/zod/",
  "/node_modules/npm-package-arg/",
  // The app bridge (MCP Apps) comes with the first view.
  "/@modelcontextprotocol/ext-apps/",
];

function connectionOnlyFiles(module: string): string[] {
  const { loaded = [] } = importAsPi(module, { trace: true });
  return loaded.filter((url) => CONNECTION_ONLY.some((part) => url.includes(part)));
}

describe(`module loading on Pi ${currentHost().version}`, () => {
  it("the extension and the server manager load no file of the MCP SDK, zod, the npx resolver or the app bridge", () => {
    expect(connectionOnlyFiles("pi-mcp-adapter.ts")).toEqual([]);
    expect(connectionOnlyFiles("server-manager.ts")).toEqual([]);
  });

  it("the SDK half of the connection code does load the SDK (the trace sees it)", () => {
    expect(connectionOnlyFiles("connection/sdk-session.ts")).toEqual(
      expect.arrayContaining([expect.stringContaining("/@modelcontextprotocol/client/dist/index.mjs")]),
    );
  });
});

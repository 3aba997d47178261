/**
 * Two `oauth` fields of Pi 1.x's built-in MCP (its docs/mcp.md, "Authenticate with OAuth") mean the same here, from a
 * config file read as the extension reads it, against the real OAuth fixture (test/fixtures/servers/oauth-server.mjs)
 * signed in to by a headless browser:
 * - a `clientSecret` written as `!command` is the command's output, run when the secret is needed (a sign-in, a
 *   refresh), from the user's own files only;
 * - `authServerMetadataUrl` names the authorization server's metadata when the server's own metadata names the wrong
 *   one, for the sign-in and for later refreshes.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { openInBrowser } from "../util/browser.ts";
import { McpServerManager } from "../server-manager.ts";
import type { LoadedConfig, ServerDefinition } from "../types.ts";
import { createConfigSandbox, type ConfigSandbox } from "./config-sandbox.ts";
import { HEADLESS_BROWSER, WRONG_AUTH_SERVER, type OAuthFixture, REGISTERED_CLIENT, startOAuthFixture } from "./helpers/oauth-fixture.ts";

const headless = { openAuthorizationUrl: (url: string) => void openInBrowser(url, { BROWSER: HEADLESS_BROWSER }) };

let sandbox: ConfigSandbox;
let manager: McpServerManager;
beforeEach(() => {
  sandbox = createConfigSandbox();
  manager = new McpServerManager({ agentDir: sandbox.agentDir, resolveNpx: false });
});
afterEach(async () => {
  await manager.closeAll();
  sandbox.remove();
});

function userServer(config: Record<string, unknown>, name: string): ServerDefinition {
  sandbox.write("home/.pi/agent/mcp.json", { mcpServers: { [name]: config } });
  return definition(sandbox.load(), name);
}

function definition(config: LoadedConfig, name: string): ServerDefinition {
  expect(config.problems).toEqual([]);
  const def = config.servers.find((server) => server.name === name);
  if (!def) throw new Error(`no server "${name}" in the config`);
  return def;
}

async function failure(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    () => {
      throw new Error("expected a failure");
    },
    (error: Error) => error,
  );
}

describe("oauth.clientSecret written as !command", () => {
  let fixture: OAuthFixture;
  beforeAll(async () => {
    fixture = await startOAuthFixture({
      ...REGISTERED_CLIENT,
      FIXTURE_CC_ID: "machine",
      FIXTURE_CC_SECRET: "machine-secret",
    });
  });
  afterAll(() => fixture.stop());

  /** Each run of the secret's command adds a line to this file. */
  const runsFile = () => path.join(sandbox.root, "runs");
  const runs = () => (existsSync(runsFile()) ? readFileSync(runsFile(), "utf8").split("\n").filter(Boolean).length : 0);

  it("from the user's file: runs for the sign-in and for a refresh (once each), never before, and its output is the secret", async () => {
    const def = userServer(
      { url: fixture.mcpUrl, oauth: { clientId: "registered", clientSecret: `!echo run >> '${runsFile()}'; printf s3cret` } },
      "registered",
    );
    // Nothing to sign in with yet: the secret is not needed.
    await failure(manager.connect(def));
    expect(runs()).toBe(0);

    const before = (await fixture.events()).length;
    await manager.signIn(def, headless);
    expect(runs()).toBe(1);
    const tokenEvents = (await fixture.events()).slice(before).filter((event) => event.event === "token");
    expect(tokenEvents).toEqual([expect.objectContaining({ grant_type: "authorization_code", client_secret: "right" })]);

    await manager.connect(def);
    expect(runs()).toBe(1);
    await fixture.expireTokens();
    const beforeRefresh = (await fixture.events()).length;
    expect((await manager.callTool("registered", "echo", { text: "refreshed" })).content).toEqual([{ type: "text", text: "refreshed" }]);
    const refreshes = (await fixture.events()).slice(beforeRefresh).filter((event) => event.event === "token");
    expect(refreshes).toEqual([expect.objectContaining({ grant_type: "refresh_token", client_secret: "right" })]);
    expect(runs()).toBe(2);
  });

  it("runs for a client_credentials server when it connects (its token needs the secret then)", async () => {
    const oauth = { grantType: "client_credentials", clientId: "machine", authorizationServer: fixture.url("") };
    const def = userServer({ url: fixture.mcpUrl, oauth: { ...oauth, clientSecret: "!printf machine-secret" } }, "machine");
    await manager.connect(def);
    expect((await manager.callTool("machine", "echo", { text: "machine" })).content).toEqual([{ type: "text", text: "machine" }]);
  });

  it("a failing command fails the sign-in naming the server and the field, never showing its output", async () => {
    const def = userServer({ url: fixture.mcpUrl, oauth: { clientId: "registered", clientSecret: "!echo s3cret; exit 3" } }, "failing");
    const error = await failure(manager.signIn(def, headless));
    expect(error.message).toBe(
      'The sign-in to MCP server "failing" failed: MCP server "failing": "oauth.clientSecret": the "!" command exited with code 3; its output is not shown',
    );
  });

  it("!! is a literal !; from another tool's file nothing of oauth is read, so nothing runs", async () => {
    const literal = userServer({ url: fixture.mcpUrl, oauth: { clientId: "registered", clientSecret: "!!s3cret" } }, "literal");
    expect(literal.oauth?.clientSecret).toBe("!s3cret");
    expect(literal.commandValues).toBeUndefined();

    const marker = path.join(sandbox.root, "ran");
    sandbox.write("home/.claude.json", {
      mcpServers: { imported: { url: fixture.mcpUrl, oauth: { clientId: "registered", clientSecret: `!touch '${marker}'` } } },
    });
    sandbox.write("home/.pi/agent/mcp.json", { imports: ["claude-code"] });
    const imported = definition(sandbox.load(), "imported");
    expect(imported.oauth).toBeUndefined();
    await manager.signIn(imported, headless);
    expect(existsSync(marker)).toBe(false);
  });
});

describe("oauth.authServerMetadataUrl", () => {
  let fixture: OAuthFixture;
  beforeAll(async () => {
    // The resource metadata names an authorization server that does not exist; the real one's metadata is elsewhere.
    fixture = await startOAuthFixture(WRONG_AUTH_SERVER);
  });
  afterAll(() => fixture.stop());

  it("without it the sign-in goes to the advertised authorization server and fails", async () => {
    const def = userServer({ url: fixture.mcpUrl }, "advertised");
    const before = (await fixture.events()).length;
    await failure(manager.signIn(def, headless));
    expect((await fixture.events()).slice(before).map((event) => event.event)).toEqual([]);
  });

  it("with it the sign-in uses that document instead of discovery, and so do later refreshes", async () => {
    const def = userServer({ url: fixture.mcpUrl, oauth: { authServerMetadataUrl: fixture.url("/tenant/metadata") } }, "configured");
    const before = (await fixture.events()).length;
    await manager.signIn(def, headless);
    expect((await fixture.events()).slice(before).map((event) => event.event)).toEqual(["register", "authorize", "token"]);

    await manager.connect(def);
    await fixture.expireTokens();
    const beforeRefresh = (await fixture.events()).length;
    expect((await manager.callTool("configured", "echo", { text: "again" })).content).toEqual([{ type: "text", text: "again" }]);
    const tokens = (await fixture.events()).slice(beforeRefresh).filter((event) => event.event === "token");
    expect(tokens.map((event) => event.grant_type)).toEqual(["refresh_token"]);
  });

  it("a document that is not there fails the sign-in naming the field and the server", async () => {
    const def = userServer({ url: fixture.mcpUrl, oauth: { authServerMetadataUrl: fixture.url("/nowhere") } }, "missing");
    const error = await failure(manager.signIn(def, headless));
    expect(error.message).toBe(
      `The sign-in to MCP server "missing" failed: MCP server "missing": "oauth.authServerMetadataUrl" (${fixture.url("/nowhere")}) answered HTTP 404`,
    );
  });
});

/**
 * Signing in to an OAuth-protected MCP server in the real Pi (test/fixtures/servers/oauth-server.mjs, its own
 * authorization server), with `$BROWSER` set to a headless browser that follows the authorization server's redirect
 * to the adapter's callback: the model's first call fails saying the user must run /mcp-auth (and the user is told
 * once), /mcp-auth signs in and the call works, a restarted Pi is still signed in from the token file, sign-out
 * forgets it. Tokens stay in their private file: not in the cache, not in anything shown. In print mode the command
 * waits for the browser, then ends.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createCacheEntry, writeServerEntries } from "../metadata-cache.ts";
import { OAUTH_DIR_NAME } from "../connection/oauth-store.ts";
import { callLoaded, ENTRY, faultHarness, notifications, search, waitForStatus } from "./helpers/fault-setup.ts";
import { currentHost } from "./helpers/hosts.ts";
import { HEADLESS_BROWSER, WRONG_AUTH_SERVER, type OAuthFixture, REGISTERED_CLIENT, startOAuthFixture } from "./helpers/oauth-fixture.ts";
import { runPrint } from "./helpers/pi-print.ts";
import type { PiSession } from "./helpers/pi-session.ts";

const host = currentHost();
const harness = faultHarness();
const ECHO = "notes__echo";
const SIGN_IN_NEEDED = "the user has to run /mcp-auth notes (the assistant cannot do it)";

let fixture: OAuthFixture;
beforeAll(async () => {
  fixture = await startOAuthFixture();
});
afterAll(() => fixture.stop());

/** Everything the session showed: notifications and status texts. */
function shown(pi: PiSession): string {
  return pi.ui.map((entry) => (entry.kind === "notify" ? entry.message : entry.kind === "status" ? (entry.text ?? "") : "")).join("\n");
}

async function waitForNotification(pi: PiSession, pattern: RegExp, timeoutMs = 20_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = notifications(pi).find((entry) => pattern.test(entry.message));
    if (found) return found.message;
    if (Date.now() > deadline) throw new Error(`no notification matched ${pattern} within ${timeoutMs} ms:\n${shown(pi)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** `pi -p "/mcp-auth notes"`, with the headless browser. */
function signInInPrintMode(dirs: { agentDir: string; cwd: string }) {
  return runPrint({
    extensions: [ENTRY],
    script: [],
    prompts: ["/mcp-auth notes"],
    agentDir: dirs.agentDir,
    cwd: dirs.cwd,
    env: { BROWSER: HEADLESS_BROWSER },
  });
}

describe(`OAuth sign-in on Pi ${host.version}`, () => {
  test("a call that needs a sign-in tells the model the user must run /mcp-auth; /mcp-auth signs in; a restart stays signed in", async () => {
    const entry = { url: fixture.mcpUrl, auth: "oauth" } as const;
    const dirs = await harness.dirs({ notes: entry });
    // Known from an earlier session: the model can find and call the tool before any connect.
    const tools = [
      { name: "echo", description: "Echoes its text back", inputSchema: { type: "object", properties: { text: { type: "string" } } } },
    ];
    await writeServerEntries(dirs.agentDir, { notes: createCacheEntry(entry, tools, []) });
    harness.env("BROWSER", HEADLESS_BROWSER);

    const pi = await harness.session(dirs, [search(`select:${ECHO}`), callLoaded(ECHO, { text: "first" }), "done"]);
    await pi.prompt("echo first");
    const refused = pi.toolResults.at(-1)!;
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain(`MCP server "notes" needs a sign-in (OAuth): ${SIGN_IN_NEEDED}`);
    // Asked again (the backoff cleared): still refused, and the user is not told twice.
    await pi.command("/mcp reconnect notes");
    expect(notifications(pi).filter((note) => note.message.includes(SIGN_IN_NEEDED) && note.level === "warning")).toHaveLength(1);
    expect(await waitForStatus(pi, /✗ notes: needs-auth · sign-in needed · lazy/)).toBeTruthy();

    const before = (await fixture.events()).length;
    const started = await pi.command("/mcp-auth notes");
    expect(started.text).toMatch(
      /^Sign in to MCP server "notes" in your browser; if no page opened, open this address:\nhttp:\/\/127\.0\.0\.1:\d+\/authorize\?/,
    );
    expect(await waitForNotification(pi, /^Signed in: /)).toBe('Signed in: MCP server "notes" is connected (2 tools).');
    expect((await fixture.events()).slice(before).map((event) => event.event)).toEqual(
      expect.arrayContaining(["register", "authorize", "token"]),
    );
    expect(await waitForStatus(pi, /✓ notes: connected · signed in · lazy/)).toBeTruthy();

    pi.script([callLoaded(ECHO, { text: "second" }), "done"]);
    await pi.prompt("echo second");
    expect(pi.toolResults.at(-1)).toMatchObject({ isError: false, text: "second" });

    const signInsBeforeRestart = (await fixture.events()).filter((event) => event.event === "authorize").length;
    await pi.restart();
    pi.script([search(`select:${ECHO}`), callLoaded(ECHO, { text: "after restart" }), "done"]);
    await pi.prompt("echo after restart");
    expect(pi.toolResults.at(-1)).toMatchObject({ isError: false, text: "after restart" });
    expect((await fixture.events()).filter((event) => event.event === "authorize")).toHaveLength(signInsBeforeRestart);

    // The token: in its private file only.
    const oauthDir = join(dirs.agentDir, OAUTH_DIR_NAME);
    const [file] = readdirSync(oauthDir);
    expect(statSync(join(oauthDir, file!)).mode & 0o777).toBe(0o600);
    const { tokens } = JSON.parse(readFileSync(join(oauthDir, file!), "utf8")) as {
      tokens: { access_token: string; refresh_token: string };
    };
    await pi.command("/mcp status");
    for (const secret of [tokens.access_token, tokens.refresh_token]) {
      expect(readFileSync(join(dirs.agentDir, "mcp-cache.json"), "utf8")).not.toContain(secret);
      expect(shown(pi)).not.toContain(secret);
    }

    expect((await pi.command("/mcp-auth notes --logout")).text).toBe(
      'Signed out of MCP server "notes": its tokens and client registration are forgotten.',
    );
    expect(readdirSync(oauthDir)).toEqual([]);
    expect((await pi.command("/mcp status")).text).toMatch(/○ notes: stopped · lazy/);
  });

  test("in print mode /mcp-auth waits for the browser, signs in and ends", async () => {
    const dirs = await harness.dirs({ notes: { url: fixture.mcpUrl } });
    const result = await signInInPrintMode(dirs);
    expect(result.exitCode).toBe(0);
    const output = result.stdout + result.stderr;
    expect(output).toContain('Sign in to MCP server "notes" in your browser');
    expect(output).toContain('Signed in: MCP server "notes" is connected (2 tools).');
    expect(readdirSync(join(dirs.agentDir, OAUTH_DIR_NAME))).toHaveLength(1);
  });
});

describe(`OAuth with Pi 1.x's oauth fields on Pi ${host.version}`, () => {
  let tenant: OAuthFixture;
  beforeAll(async () => {
    // A pre-registered client with a secret; the resource metadata names an authorization server that does not exist.
    tenant = await startOAuthFixture({ ...REGISTERED_CLIENT, ...WRONG_AUTH_SERVER });
  });
  afterAll(() => tenant.stop());

  test("/mcp-auth signs in through authServerMetadataUrl with a clientSecret a !command prints", async () => {
    const oauth = { clientId: "registered", clientSecret: "!printf s3cret", authServerMetadataUrl: tenant.url("/tenant/metadata") };
    const dirs = await harness.dirs({ notes: { url: tenant.mcpUrl, oauth } });
    const result = await signInInPrintMode(dirs);
    expect(result.exitCode).toBe(0);
    expect(result.stdout + result.stderr).toContain('Signed in: MCP server "notes" is connected (2 tools).');
    const tokens = (await tenant.events()).filter((event) => event.event === "token");
    expect(tokens).toEqual([expect.objectContaining({ grant_type: "authorization_code", client_secret: "right" })]);
    expect(result.stdout + result.stderr).not.toContain("s3cret");
  });
});

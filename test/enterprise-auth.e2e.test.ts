/**
 * The company sign-ins in the real Pi, against the OAuth fixture (test/fixtures/servers/oauth-server.mjs) as both the
 * company's authorization server and its MCP server: a server reached with the workload token a platform put in a
 * file (SEP-1933) and a server whose tokens are bound to a DPoP key (SEP-1932), signed in to with /mcp-auth and the
 * headless browser. After a restart the DPoP server is reached with the key kept with its tokens, with no new sign-in.
 * With MCP_DEBUG on, no token, workload JWT or private key turns up in the debug log or in anything Pi showed.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createCacheEntry, writeServerEntries } from "../metadata-cache.ts";
import { OAUTH_DIR_NAME } from "../connection/oauth-store.ts";
import { DEBUG_LOG_FILE } from "../util/debug-log.ts";
import { callLoaded, faultHarness, notifications, search } from "./helpers/fault-setup.ts";
import { currentHost } from "./helpers/hosts.ts";
import { HEADLESS_BROWSER, type OAuthFixture, startOAuthFixture, WORKLOAD_PUBLIC_KEY, workloadJwt } from "./helpers/oauth-fixture.ts";
import type { PiSession } from "./helpers/pi-session.ts";

const host = currentHost();
const harness = faultHarness();
const ECHO = {
  name: "echo",
  description: "Echoes its text back",
  inputSchema: { type: "object", properties: { text: { type: "string" } } },
};

let fixture: OAuthFixture;
beforeAll(async () => {
  fixture = await startOAuthFixture({ FIXTURE_WIF_PUBLIC_KEY: WORKLOAD_PUBLIC_KEY, FIXTURE_DPOP: "1" });
});
afterAll(() => fixture.stop());

/** Everything the session showed: notifications, status texts, tool results. */
function shown(pi: PiSession): string {
  const ui = pi.ui.map((entry) => (entry.kind === "notify" ? entry.message : entry.kind === "status" ? (entry.text ?? "") : ""));
  return [...ui, ...pi.toolResults.map((result) => result.text)].join("\n");
}

async function signedIn(pi: PiSession, timeoutMs = 20_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = notifications(pi).find((entry) => entry.message.startsWith("Signed in: "));
    if (found) return found.message;
    if (Date.now() > deadline) throw new Error(`no "Signed in" notification within ${timeoutMs} ms:\n${shown(pi)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe(`company sign-ins on Pi ${host.version}`, () => {
  test("a workload's token file reaches one server; /mcp-auth binds another's tokens to a DPoP key kept for the next session; no secret in the debug log", async () => {
    const workloadToken = await workloadJwt(fixture);
    // Where the platform mounts the token.
    const tokenDir = mkdtempSync(join(tmpdir(), "mcp-e2e-workload-"));
    harness.onCleanup(() => rmSync(tokenDir, { recursive: true, force: true }));
    const tokenFile = join(tokenDir, "token.jwt");
    writeFileSync(tokenFile, workloadToken);
    const servers = {
      ci: { url: fixture.mcpUrl, oauth: { workloadTokenFile: tokenFile, authorizationServer: fixture.url("") } },
      pay: { url: fixture.mcpUrl, oauth: { dpop: true } },
    };
    const dirs = await harness.dirs(servers);
    await writeServerEntries(dirs.agentDir, {
      ci: createCacheEntry(servers.ci, [ECHO], []),
      pay: createCacheEntry(servers.pay, [ECHO], []),
    });
    harness.env("BROWSER", HEADLESS_BROWSER);
    harness.env("MCP_DEBUG", "1");

    const pi = await harness.session(dirs, [
      search("select:ci__echo,pay__echo"),
      callLoaded("ci__echo", { text: "from the pipeline" }),
      callLoaded("pay__echo", { text: "before signing in" }),
      "done",
    ]);
    await pi.prompt("echo twice");
    expect(pi.toolResults.slice(-2).map((result) => [result.isError, result.text])).toEqual([
      [false, "from the pipeline"],
      [true, expect.stringContaining('MCP server "pay" needs a sign-in (OAuth): the user has to run /mcp-auth pay')],
    ]);
    expect((await fixture.events()).filter((event) => event.event === "jwt-bearer")).toEqual([
      { event: "jwt-bearer", assertion: "workload" },
    ]);

    await pi.command("/mcp-auth pay");
    expect(await signedIn(pi)).toBe('Signed in: MCP server "pay" is connected (2 tools).');
    const jkt = (await fixture.events()).filter((event) => event.event === "token" && event.jkt).at(-1)?.jkt;
    expect(jkt).toEqual(expect.any(String));

    await pi.restart();
    const beforeRestart = (await fixture.events()).length;
    pi.script([search("select:pay__echo"), callLoaded("pay__echo", { text: "bound to the key" }), "done"]);
    await pi.prompt("echo after the restart");
    expect(pi.toolResults.at(-1)).toMatchObject({ isError: false, text: "bound to the key" });
    const after = (await fixture.events()).slice(beforeRestart);
    expect(after.map((event) => event.event)).not.toContain("authorize");
    expect(after.filter((event) => event.event === "mcp").at(-1)).toEqual({ event: "mcp", token: "valid", scheme: "DPoP", jkt });

    // The key: in the tokens' private file only. Nothing secret in the debug log or anything shown.
    const oauthDir = join(dirs.agentDir, OAUTH_DIR_NAME);
    const [file] = readdirSync(oauthDir);
    expect(statSync(join(oauthDir, file!)).mode & 0o777).toBe(0o600);
    const { dpopKey } = JSON.parse(readFileSync(join(oauthDir, file!), "utf8")) as { dpopKey: { jwk: { d: string } } };
    await pi.command("/mcp status");
    const log = readFileSync(join(dirs.agentDir, DEBUG_LOG_FILE), "utf8");
    expect(log).toContain("pay: connect failed");
    const secrets = [...(await fixture.issued()), workloadToken, dpopKey.jwk.d];
    for (const secret of secrets) {
      expect(log).not.toContain(secret);
      expect(shown(pi)).not.toContain(secret);
      expect(readFileSync(join(dirs.agentDir, "mcp-cache.json"), "utf8")).not.toContain(secret);
    }
  });
});

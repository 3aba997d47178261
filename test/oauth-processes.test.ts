/**
 * Two Pi processes signed in to one OAuth server through one agent dir, whose access token expires under both at
 * once: one of them refreshes (refresh tokens rotate at this server: spending one twice fails), the other uses what
 * it stored, and both keep working; the store keeps one file, with the registration made at the sign-in.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { OAUTH_DIR_NAME } from "../connection/oauth-store.ts";
import { McpServerManager } from "../server-manager.ts";
import { openInBrowser } from "../util/browser.ts";
import { HEADLESS_BROWSER, type OAuthFixture, startOAuthFixture } from "./helpers/oauth-fixture.ts";
import { serverDef, tempDir } from "./server-manager-helpers.ts";

const SESSION = fileURLToPath(new URL("./fixtures/oauth-session.mjs", import.meta.url));
const ROUNDS = 3;

let fixture: OAuthFixture;
const dir = tempDir();
const children: ChildProcess[] = [];

beforeAll(async () => {
  fixture = await startOAuthFixture();
});
afterAll(async () => {
  await fixture.stop();
  dir.remove();
});
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});

interface Session {
  child: ChildProcess;
  /** The next line it prints. */
  next(): Promise<string>;
}

function startSession(): Session {
  const child = spawn(process.execPath, [SESSION, dir.path, fixture.mcpUrl], { stdio: ["pipe", "pipe", "inherit"] });
  children.push(child);
  const lines: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  createInterface({ input: child.stdout! }).on("line", (line) => {
    const waiter = waiting.shift();
    if (waiter) waiter(line);
    else lines.push(line);
  });
  return { child, next: () => (lines.length > 0 ? Promise.resolve(lines.shift()!) : new Promise((resolve) => waiting.push(resolve))) };
}

function storedRecords(): Record<string, unknown>[] {
  const store = join(dir.path, OAUTH_DIR_NAME);
  return readdirSync(store).map((name) => JSON.parse(readFileSync(join(store, name), "utf8")) as Record<string, unknown>);
}

it(`two processes whose token expires at once: both keep working, ${ROUNDS} times, with one refresh each time and one token file`, {
  timeout: 60_000,
}, async () => {
  const def = serverDef("notes", { url: fixture.mcpUrl });
  const manager = new McpServerManager({ agentDir: dir.path, resolveNpx: false });
  await manager.connect(def).catch(() => {});
  await manager.signIn(def, { openAuthorizationUrl: (url: string) => void openInBrowser(url, { BROWSER: HEADLESS_BROWSER }) });
  await manager.closeAll();
  const [signedIn] = storedRecords();
  const clientId = (signedIn?.client as { client_id?: string } | undefined)?.client_id;
  expect(clientId).toMatch(/^client-/);

  const sessions = [startSession(), startSession()];
  expect(await Promise.all(sessions.map((session) => session.next()))).toEqual(["ready", "ready"]);
  for (let round = 0; round < ROUNDS; round++) {
    await fixture.expireTokens();
    const before = (await fixture.events()).length;
    for (const session of sessions) session.child.stdin!.write("go\n");
    const answers = (await Promise.all(sessions.map((session) => session.next()))).map((line) => JSON.parse(line) as unknown);
    expect(answers).toEqual(sessions.map((session) => ({ ok: true, text: `from ${session.child.pid}` })));
    const events = (await fixture.events()).slice(before);
    expect(events.filter((event) => event.event === "token").map((event) => event.grant_type)).toEqual(["refresh_token"]);
    expect(events.map((event) => event.event)).not.toContain("authorize");
    expect(events.map((event) => event.event)).not.toContain("register");
  }
  const records = storedRecords();
  expect(records).toHaveLength(1);
  expect(records[0]).toMatchObject({ client: { client_id: clientId }, tokens: { token_type: "Bearer" } });
  for (const session of sessions) session.child.stdin!.end();
});

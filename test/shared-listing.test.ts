/**
 * A lazy server missing from the cache is started at session start only to be listed, then ended. A call that comes
 * while that listing finishes (the user's first prompt, on a slow machine) uses the same connection: the listing must
 * then leave the server running, as any call leaves a lazy server (its idle timeout ends it), or what the call did
 * there is lost (a page opened, a prompt added and announced with prompts/list_changed). Held at a known point (the
 * listing waits for its cache write), with real server processes, so the order is fixed without sleeps. A call may
 * come through the lifecycle (a connect asked for) or straight on the live connection (the tool executor's path).
 */
import { afterEach, beforeEach, expect, test } from "vitest";
import { McpLifecycleManager } from "../lifecycle.ts";
import { McpServerManager } from "../server-manager.ts";
import { listUncachedServers } from "../tools/shared-listing.ts";
import { deferred } from "./helpers/deferred.ts";
import { fixtureDef, isRunning, killLeftovers, tempDir, waitFor } from "./server-manager-helpers.ts";

let dir: ReturnType<typeof tempDir>;
let manager: McpServerManager;
let lifecycle: McpLifecycleManager;

beforeEach(() => {
  dir = tempDir();
  manager = new McpServerManager({ agentDir: dir.path });
  lifecycle = new McpLifecycleManager(manager, {});
  lifecycle.registerServers([fixtureDef("lazy", {})]);
});

afterEach(async () => {
  await lifecycle.stop();
  killLeftovers(dir.path);
  dir.remove();
});

/** Lists the lazy server; its cache write is held until `release()`. */
function startListing() {
  const stored = deferred();
  const context = { agentDir: dir.path, lifecycle, cacheWriter: { stored: () => stored.promise }, shutDown: false };
  const done = listUncachedServers(context, [fixtureDef("lazy", {})], () => {});
  return { done, release: stored.resolve };
}

test("a server started only to be listed is ended once the listing is stored", async () => {
  const listing = startListing();
  await waitFor(() => manager.getConnection("lazy") !== undefined);
  const pid = manager.getConnection("lazy")!.pid!;
  listing.release();
  await listing.done;
  expect(manager.getConnection("lazy")).toBeUndefined();
  expect(isRunning(pid)).toBe(false);
});

test("a call during the listing keeps the server running afterwards, on the connection the call used", async () => {
  const listing = startListing();
  await waitFor(() => manager.getConnection("lazy") !== undefined);
  const used = await lifecycle.ensureConnected("lazy");
  expect((await manager.callTool("lazy", "echo", { text: "during the listing" })).isError).toBeFalsy();
  listing.release();
  await listing.done;
  expect(manager.getConnection("lazy")).toBe(used);
  expect(isRunning(used.pid!)).toBe(true);
});

test("a call made straight on the live connection during the listing (no connect asked for) keeps it running too", async () => {
  const listing = startListing();
  await waitFor(() => manager.getConnection("lazy") !== undefined);
  const used = manager.getConnection("lazy")!;
  expect((await manager.callTool("lazy", "echo", { text: "during the listing" })).isError).toBeFalsy();
  listing.release();
  await listing.done;
  expect(manager.getConnection("lazy")).toBe(used);
});

test("a listing that joins a server a call started leaves it running", async () => {
  const used = await lifecycle.ensureConnected("lazy");
  const listing = startListing();
  listing.release();
  await listing.done;
  expect(manager.getConnection("lazy")).toBe(used);
});

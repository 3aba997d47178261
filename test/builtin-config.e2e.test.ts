/**
 * A config written as Pi 1.x's built-in MCP docs show it (docs/mcp.md: `exposure`, `toolExposure` with a pattern,
 * `timeout`, `description`, a `!command` header value) behaves as documented there, in the real Pi with the items
 * fixture server.
 */
import { describe, expect, test } from "vitest";
import { callLoaded, search } from "./helpers/fault-setup.ts";
import { faultHarness } from "./helpers/fault-setup.ts";
import { currentHost } from "./helpers/hosts.ts";
import { itemsRan, itemsServer, warmCache } from "./helpers/items-fixture.ts";

const host = currentHost();
const harness = faultHarness();

describe(`Pi 1.x's built-in MCP fields on Pi ${host.version}`, () => {
  test("exposure direct/hidden, toolExposure (exact beats pattern) and description: direct from the first request, hidden nowhere", async () => {
    const items = itemsServer({
      description: "Keeps the household pantry",
      exposure: "deferred",
      toolExposure: { list_items: "direct", "echo*": "direct", echo_twice: "codemode", "delete_*": "hidden" },
      // The log's path comes out of a command (run when the server starts, in Pi's environment): the calls logged
      // there prove it ran and its output became the value.
      env: { ITEMS_LOG: `!printf '%s/items.log' "$BUILTIN_CONFIG_PROJECT"` },
    });
    const dirs = await harness.dirs({ items });
    harness.env("BUILTIN_CONFIG_PROJECT", dirs.cwd);
    await warmCache(dirs, "items");
    const pi = await harness.session(dirs, [
      search("household pantry"),
      search("select:items__delete_item"),
      callLoaded("items__delete_all"),
      callLoaded("items__list_items"),
      "done",
    ]);
    await pi.prompt("what is in the pantry?");

    const first = pi.requests[0]!;
    const offered = first.tools.map((tool) => tool.name);
    expect(offered).toEqual(expect.arrayContaining(["items__list_items", "items__echo", "ToolSearch"]));
    for (const name of ["items__echo_twice", "items__ecru", "items__delete_item", "items__delete_all"]) expect(offered).not.toContain(name);
    const catalog = first.tools.find((tool) => tool.name === "ToolSearch")!.description;
    expect(catalog).toContain("\nitems (Keeps the household pantry)");
    expect(catalog).not.toContain("delete");

    const [pantry, hidden, deleteAll, listed] = pi.toolResults;
    // Only the server's description says "household pantry": its tools are found by it, its hidden ones are not.
    expect(pantry!.text).toContain("items__echo_twice");
    expect(pantry!.text).not.toContain("delete");
    expect(hidden!.text).toContain(`No MCP tool is named "items__delete_item"`);
    expect(deleteAll!.isError).toBe(true);
    expect(listed).toMatchObject({ isError: false, text: "apple, pear" });
    expect(itemsRan(dirs)).toEqual(["list_items"]); // no delete_* ever reached the server
    const { text } = await pi.command("/mcp status");
    expect(text).toContain("exposure: deferred with toolExposure · 2 direct, 2 hidden of 9 tools");
    expect(pi.errors).toEqual([]);
    // Two whole Pi sessions (the cache warmed by a real listing, then the run): over a minute on a busy 2-core machine.
  }, 180_000);

  // The tool would answer only after ten minutes: the limit is first whatever the machine's load (no race of two timers).
  test("timeout: 1 cuts a call that would take ten minutes, cancelled at the server; /mcp status and the model are told the timeout field applies", async () => {
    const dirs = await harness.dirs({ items: itemsServer({ timeout: 1 }) }, { requestTimeoutMs: 600_000 });
    const pi = await harness.session(dirs, [search("select:items__wait"), callLoaded("items__wait", { seconds: 600 }), "done"]);
    await pi.prompt("wait");

    const waited = pi.toolResults[1]!;
    expect(waited.isError).toBe(true);
    expect(waited.text).toContain(
      `timed out: it ran 1 s without an answer or progress (the timeout limit) and was cancelled at the server`,
    );
    expect(waited.text).toContain(`raise "timeout" for server "items" in the MCP config (mcpServers.items.timeout, in seconds)`);
    const { text } = await pi.command("/mcp status");
    expect(text).toContain("time limit: 1 s per request without an answer or progress (timeout)");
  });
});

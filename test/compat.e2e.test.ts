/**
 * What users of upstream pi-mcp-adapter 2.x bring, end to end in the real Pi: its config fields (lazy-keep-alive,
 * includeTools) and approvals (`approveTools`), with the items fixture server (a harmless echo, destructive
 * deletes, a resource).
 */
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { callLoaded, ENTRY, faultHarness, notifications, search, waitForStatus } from "./helpers/fault-setup.ts";
import { currentHost } from "./helpers/hosts.ts";
import { ITEMS_SERVER, itemsRan, itemsServer, warmCache } from "./helpers/items-fixture.ts";
import { runPrint } from "./helpers/pi-print.ts";
import { type DialogAnswers, startSession } from "./helpers/pi-session.ts";
import { descendantProcesses } from "./helpers/processes.ts";

const host = currentHost();
const harness = faultHarness();

const ALLOW_ONCE = "Allow once";
const DENY = "Deny";
const NEEDS_APPROVAL = 'MCP tool "delete_item" on server "items" needs the user\'s approval, and there is no one to ask in this mode.';

/** Answers each approval dialog with the next answer given, and records the questions. */
function answering(...answers: string[]): DialogAnswers & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    select: (title, options) => {
      asked.push(title);
      const answer = answers.shift();
      return answer === undefined ? undefined : options.find((option) => option.startsWith(answer));
    },
  };
}

describe(`upstream configs and approvals on Pi ${host.version}`, () => {
  test('lifecycle "lazy-keep-alive" and includeTools ["ec*"]: exactly the matching tools exist for Pi, no error; a call works and the server stays up', async () => {
    const dirs = await harness.dirs({ items: itemsServer({ lifecycle: "lazy-keep-alive", includeTools: ["ec*"] }) });
    const pi = await harness.session(dirs, [
      search("select:items__delete_item,items__echo"),
      callLoaded("items__echo", { text: "kept" }),
      "done",
    ]);
    await waitForStatus(pi, /items: [^\n]* · lazy-keep-alive · [^\n]*3 tools(?! \(from the cache)/);

    expect((await pi.command("/mcp tools items")).text).toMatch(
      /^items \(3 tools\):\n {2}items__echo — [^\n]+\n {2}items__echo_twice — [^\n]+\n {2}items__ecru — [^\n]+$/,
    );
    await pi.prompt("echo something");
    const catalog = pi.requests[0]!.tools.find((tool) => tool.name === "ToolSearch")!.description;
    expect(catalog).toContain("MCP servers (3 tools on 1 server) and what their tools are about:");
    expect(catalog).not.toMatch(/delete|list_items/);
    const [found, echoed] = pi.toolResults;
    expect(found!.text).toContain('No MCP tool is named "items__delete_item"');
    expect(echoed).toMatchObject({ isError: false, text: "kept" });
    // Pi gets a tool learned during the session when it is loaded: only echo was.
    expect(
      pi.session
        .getAllTools()
        .map((tool) => tool.name)
        .filter((name) => name.startsWith("items__")),
    ).toEqual(["items__echo"]);
    expect(notifications(pi).filter((notice) => notice.level !== "info")).toEqual([]);
    expect(pi.errors).toEqual([]);
    expect(await waitForStatus(pi, /✓ items: connected · lazy-keep-alive/)).toBeTruthy();
    await pi.dispose();
    expect(await descendantProcesses(ITEMS_SERVER)).toEqual([]);
  });

  test('approveTools ["delete_*", "*inventory"] with a UI: deny, allow once, allow the tool and then the server for the session; grants survive /reload; other tools never ask', async () => {
    const dirs = await harness.dirs({ items: itemsServer({ approveTools: ["delete_*", "*inventory"] }) });
    const dialogs = answering(DENY, ALLOW_ONCE, ALLOW_ONCE, "Allow delete_item", "Allow every tool of items");
    const pi = await startSession({ extensions: [ENTRY], agentDir: dirs.agentDir, cwd: dirs.cwd, dialogs });
    harness.onCleanup(() => pi.dispose());
    const deleteItem = (id: string) => callLoaded("items__delete_item", { id });

    pi.script([
      search("select:items__delete_item,items__echo,items__get_inventory"),
      deleteItem("a"),
      callLoaded("items__echo", { text: "free" }),
      "denied",
    ]);
    await pi.prompt("delete a");
    expect(pi.toolResults.slice(1).map((result) => [result.isError, result.text])).toEqual([
      [true, 'The user denied MCP tool "delete_item" on server "items". Do not call it again unless the user asks for it.'],
      [false, "free"],
    ]);
    expect(dialogs.asked).toEqual(['MCP server "items" wants to run delete_item with {"id":"a"}. Allow it?']);

    pi.script([deleteItem("b"), callLoaded("items__get_inventory"), deleteItem("c"), "once"]);
    await pi.prompt("delete b, read, delete c");
    expect(pi.toolResults.slice(3).map((result) => [result.isError, result.text])).toEqual([
      [false, "deleted b"],
      [false, "apple, pear"],
      [false, "deleted c"],
    ]);
    expect(dialogs.asked.slice(1)).toEqual([
      'MCP server "items" wants to run delete_item with {"id":"b"}. Allow it?',
      'MCP server "items" wants to read items://inventory. Allow it?',
      'MCP server "items" wants to run delete_item with {"id":"c"}. Allow it?',
    ]);

    // delete_item is allowed for the session now.
    const listed = (await pi.command("/mcp tools items")).text;
    expect(
      listed
        .split("\n")
        .filter((line) => line.includes("[asks first]"))
        .map((line) => line.trim().split(" ")[0]),
    ).toEqual(["items__delete_all", "items__get_inventory"]);
    pi.script([deleteItem("d"), deleteItem("e"), "granted"]);
    await pi.prompt("delete d and e");
    expect(pi.toolResults.slice(6).map((result) => result.text)).toEqual(["deleted d", "deleted e"]);
    expect(dialogs.asked).toHaveLength(4);

    await pi.reload();
    pi.script([
      search("select:items__delete_item,items__delete_all"),
      deleteItem("f"),
      callLoaded("items__delete_all"),
      callLoaded("items__get_inventory"),
      "after reload",
    ]);
    await pi.prompt("delete f, then everything");
    expect(pi.toolResults.slice(8).map((result) => [result.isError, result.text])).toEqual([
      [false, expect.stringContaining("items__delete_item")],
      [false, "deleted f"],
      [false, "deleted everything"],
      [false, "apple, pear"],
    ]);
    expect(dialogs.asked.slice(4)).toEqual(['MCP server "items" wants to run delete_all. Allow it?']);
    expect(itemsRan(dirs)).toEqual([
      "echo",
      "delete_item",
      "read inventory",
      "delete_item",
      "delete_item",
      "delete_item",
      "delete_item",
      "delete_all",
      "read inventory",
    ]);
    const stored = pi.session.sessionManager.getBranch().filter((entry) => entry.type === "custom");
    expect(stored.map((entry) => [entry.customType, entry.data])).toEqual([
      ["mcp-approval", { server: "items", tool: "delete_item" }],
      ["mcp-approval", { server: "items" }],
    ]);
    expect(pi.errors).toEqual([]);
  });

  test("print mode (no UI): an approveTools tool fails closed and says how to allow it; the other tools run unasked", async () => {
    const dirs = await harness.dirs({ items: itemsServer({ approveTools: ["delete_*"], directTools: true }) });
    const configFile = join(dirs.agentDir, "mcp.json");
    await warmCache(dirs, "items");
    const before = itemsRan(dirs).length;
    const result = await runPrint({
      extensions: [ENTRY],
      agentDir: dirs.agentDir,
      cwd: dirs.cwd,
      script: [
        {
          toolCalls: [
            { name: "items__delete_item", arguments: { id: "x" } },
            { name: "items__echo", arguments: { text: "unasked" } },
          ],
        },
        "done",
      ],
      prompts: ["delete x"],
    });
    expect(result.exitCode).toBe(0);
    expect(result.toolResults.map((record) => [record.toolName, record.isError])).toEqual([
      ["items__delete_item", true],
      ["items__echo", false],
    ]);
    expect(result.toolResults[0]!.text).toBe(
      `${NEEDS_APPROVAL} To let it run without asking, the user can take it out of the "approveTools" of server "items" in ${configFile} ` +
        `(or set "approveTools": false on server "items"), or run it in an interactive session and allow it there.`,
    );
    expect(result.toolResults[1]!.text).toBe("unasked");
    expect(itemsRan(dirs).slice(before)).toEqual(["echo"]);
  });
});

/**
 * `codemode` on hosts without one (issue 22), end to end in the real Pi with the scripted model and the orders
 * fixture server: the data task done with direct calls and with one script saves the same summary; a script's
 * calls go through the executor (approvals included); a script that loops or eats memory is stopped at its limit
 * and Pi answers the next prompt; errors name the line, the tool and server, or close matches.
 */
import { describe, expect, test } from "vitest";
import { hostHasCodemode } from "../host.ts";
import { ENTRY, faultHarness } from "./helpers/fault-setup.ts";
import { runPrint } from "./helpers/pi-print.ts";
import { currentHost, importHostSdk } from "./helpers/hosts.ts";
import { warmCache } from "./helpers/items-fixture.ts";
import { ordersLog, ordersServer, runOrdersTask, TASK_PROMPT, TASK_SCRIPT } from "./helpers/orders-task.ts";
import type { PiSession } from "./helpers/pi-session.ts";

const host = currentHost();
const harness = faultHarness();
/** Pi 1.x: the host's own codemode reaches our tools, and the adapter registers none. */
const hostHasOwnCodemode = hostHasCodemode(await importHostSdk(host));
const PI_CODEMODE = "test/fixtures/extensions/pi-codemode.ts";
/** What the orders task saves (the five largest disputed orders in the north of the fixture's 240). */
const TASK_SUMMARY = { title: "North disputes", order_ids: ["ORD-1164", "ORD-1044", "ORD-1144", "ORD-1024", "ORD-1124"], total: 2144.95 };

const script = (code: string) => ({ toolCalls: [{ name: "codemode", arguments: { code } }] });

async function scriptSession(settings: Record<string, unknown> = {}, server: Record<string, unknown> = {}) {
  const dirs = await harness.dirs({ orders: ordersServer(server) }, { script: { ...settings } });
  await warmCache(dirs, "orders");
  const pi = await harness.session(dirs);
  return { dirs, pi };
}

function lastResult(pi: PiSession) {
  const result = pi.toolResults.at(-1);
  if (!result) throw new Error("no tool result");
  return result;
}

test.runIf(hostHasOwnCodemode)(
  `Pi ${host.version} has its own codemode: the adapter registers none, whatever settings.script says`,
  async () => {
    const pi = await harness.session(await harness.dirs({ orders: ordersServer() }, { script: true }));
    // SDK sessions load none of Pi's built-in extensions: any codemode here would be ours.
    const all = (pi.session as unknown as { getAllTools(): { name: string }[] }).getAllTools().map((tool) => tool.name);
    expect(all).not.toContain("codemode");
  },
);

test.runIf(hostHasOwnCodemode)(`Pi ${host.version}: the same task script through Pi's own codemode saves the same summary`, async () => {
  // Direct tools: Pi 1.x's codemode calls our tools while they are active (docs/pi-1x.md).
  const dirs = await harness.dirs({ orders: ordersServer({ directTools: true }) });
  await warmCache(dirs, "orders");
  const pi = await harness.session(dirs, [script(TASK_SCRIPT), "done"], [PI_CODEMODE]);
  await pi.prompt(TASK_PROMPT);
  expect(lastResult(pi)).toMatchObject({ toolName: "codemode", isError: false });
  expect(ordersLog(dirs)).toEqual([TASK_SUMMARY]);
});

describe.skipIf(hostHasOwnCodemode)(`codemode script tool on Pi ${host.version}`, () => {
  test("the orders task: direct calls and one script save the same summary", async () => {
    const direct = await runOrdersTask("direct");
    harness.onCleanup(async () => {
      await direct.pi.dispose();
      await direct.dirs.cleanup();
    });
    const scripted = await runOrdersTask("script");
    harness.onCleanup(async () => {
      await scripted.pi.dispose();
      await scripted.dirs.cleanup();
    });
    const saved = ordersLog(direct.dirs);
    expect(saved).toEqual([TASK_SUMMARY]);
    expect(ordersLog(scripted.dirs)).toEqual(saved);
    // The script's answer is what it printed and returned, not the orders.
    const answer = lastResult(scripted.pi);
    expect(answer.isError).toBe(false);
    expect(answer.text).toBe(`5 of 240 orders picked\nSummary "North disputes" saved: 5 orders, total ${TASK_SUMMARY.total}`);
    // Only codemode was called by the model in the script run; its tools were never offered to the model.
    expect(scripted.pi.toolResults.map((result) => result.toolName)).toEqual(["codemode"]);
    expect(scripted.pi.requests[0]!.tools.map((tool) => tool.name)).not.toContain("orders__list_orders");
  }, 180_000);

  test("is off by default: not registered, it costs the model nothing", async () => {
    const dirs = await harness.dirs({ orders: ordersServer() });
    const pi = await harness.session(dirs);
    const all = (pi.session as unknown as { getAllTools(): { name: string }[] }).getAllTools().map((tool) => tool.name);
    expect(all).toContain("ToolSearch");
    expect(all).not.toContain("codemode");
  });

  test("searchTools, describeTool, describeNamespace and ALL_TOOLS answer from the adapter's tools", async () => {
    const { pi } = await scriptSession();
    pi.script([
      script(`const found = await searchTools("refund an order", { limit: 1 });
const described = await describeTool("orders__write_summary");
const namespace = await describeNamespace("orders");
return { found: found.map((tool) => tool.name), required: described.parameters.required, tools: namespace.tools, all: ALL_TOOLS.length, none: await describeTool("nope") };`),
      "ok",
    ]);
    await pi.prompt("look around");
    const result = lastResult(pi);
    expect(result.isError).toBe(false);
    expect(JSON.parse(result.text)).toEqual({
      found: ["orders__refund_order"],
      required: ["title", "order_ids", "total"],
      tools: ["orders__list_orders", "orders__write_summary", "orders__refund_order"],
      all: 3,
    });
  });

  test("errors name their line, or close matches; an error the server reports resolves, with isError, as on Pi 1.x", async () => {
    const { pi } = await scriptSession();
    pi.script([
      script("const a = 1;\nconst b = ;"),
      script(
        "const saved = await tools.orders__write_summary({ title: 'x', order_ids: 'ORD-1', total: 1 });\nreturn saved.isError + ': ' + saved.content[0].text;",
      ),
      script("\n\nawait tools.orders__list_order({});"),
      "done",
    ]);
    await pi.prompt("try things");
    const [syntax, reported, unknown] = pi.toolResults.map((result) => ({ isError: result.isError, text: result.text }));
    expect(syntax).toMatchObject({ isError: true, text: expect.stringMatching(/^Script failed at line 2: SyntaxError: /) });
    expect(reported).toEqual({ isError: false, text: "true: order_ids must be an array" });
    expect(unknown).toMatchObject({
      isError: true,
      text: expect.stringMatching(/^Script failed at line 3: No tool is named "orders__list_order". Close matches: orders__list_orders/),
    });
  });

  test("an endless loop and a memory bomb are stopped at their limits, and Pi answers the next prompt", async () => {
    const looping = (await scriptSession({ timeoutMs: 1_500 })).pi;
    looping.script([script("let i = 0;\nwhile (true) { i++; }"), "stopped", "still here"]);
    await looping.prompt("loop forever");
    expect(lastResult(looping)).toMatchObject({
      isError: true,
      text: expect.stringMatching(/^Script stopped: it ran longer than its 1\.5 s limit \(settings\.script\.timeoutMs\)/),
    });
    await looping.prompt("are you there?");
    expect(looping.requests.at(-1)!.messages.at(-1)).toMatchObject({ role: "user" });

    // A time limit only a hang reaches: on a loaded machine the bomb allocates slowly, and 1.5 s stopped it first.
    const eating = (await scriptSession({ timeoutMs: 600_000, memoryMb: 16 })).pi;
    eating.script([script("const keep = [];\nfor (;;) keep.push(new Array(100000).fill(keep.length));"), "stopped", "still here"]);
    await eating.prompt("eat memory");
    expect(lastResult(eating)).toMatchObject({
      isError: true,
      text: expect.stringMatching(/^Script stopped: it used more than its 16 MB memory limit \(settings\.script\.memoryMb\)/),
    });
    await eating.prompt("are you there?");
    expect(eating.requests.at(-1)!.messages.at(-1)).toMatchObject({ role: "user" });
  });

  test("an approval-gated tool called from a script asks the user; refused, the call never reaches the server", async () => {
    const { dirs, pi } = await scriptSession({}, { approveTools: ["refund_*"] });
    pi.script([script("return await tools.orders__refund_order({ id: 'ORD-1004' });"), "refused"]);
    await pi.prompt("refund it");
    expect(pi.ui.filter((entry) => entry.kind === "dialog")).toMatchObject([
      { dialog: "select", title: expect.stringContaining("refund_order") },
    ]);
    const result = lastResult(pi);
    expect(result).toMatchObject({ isError: true, text: expect.stringMatching(/^Script failed at line 1: .*refund_order.*orders/s) });
    expect(ordersLog(dirs)).toEqual([]);
  });

  test("print mode (no UI): an approval-gated tool called from a script is refused, never run", async () => {
    const dirs = await harness.dirs({ orders: ordersServer({ approveTools: ["refund_*"] }) }, { script: true });
    await warmCache(dirs, "orders");
    const result = await runPrint({
      extensions: [ENTRY],
      agentDir: dirs.agentDir,
      cwd: dirs.cwd,
      script: [script("return await tools.orders__refund_order({ id: 'ORD-1004' });"), "done"],
      prompts: ["refund it"],
    });
    expect(result.exitCode).toBe(0);
    expect(result.toolResults).toMatchObject([
      { toolName: "codemode", isError: true, text: expect.stringMatching(/^Script failed at line 1: .*needs the user's approval/s) },
    ]);
    expect(ordersLog(dirs)).toEqual([]);
  });

  test('settings.script: true offers it from the first request; { "enabled": false } does not', async () => {
    const on = await harness.session(await harness.dirs({ orders: ordersServer() }, { script: true }));
    expect(on.activeToolNames()).toContain("codemode");
    const off = await harness.session(await harness.dirs({ orders: ordersServer() }, { script: { enabled: false, timeoutMs: 5_000 } }));
    expect(off.activeToolNames()).not.toContain("codemode");
  });
});

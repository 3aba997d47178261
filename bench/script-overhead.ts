/**
 * 7b. What a tool call from a `codemode` script costs over a direct call of the same tool, in the same run and
 * session: direct calls run Pi's registered definition of `orders__list_orders` (a filter that matches nothing: the
 * server answers at once); a script makes N such calls in a loop and times them itself (`Date.now()` in the VM: the
 * host's clock), so its start is not in the figure; an empty script, timed from outside, is a script's fixed cost
 * (thread, VM start, result).
 * Blocks alternate between the two sides; medians over blocks (min–max). Runs on the host of this process.
 *
 *   node node_modules/jiti/lib/jiti-cli.mjs bench/script-overhead.ts [--quick]
 */
import type { ToolDefinition } from "@mariozechner/pi-coding-agent";
import { ENTRY } from "../test/helpers/fault-setup.ts";
import { currentHost, REPO_ROOT } from "../test/helpers/hosts.ts";
import { warmCache } from "../test/helpers/items-fixture.ts";
import { mcpDirs } from "../test/helpers/mcp-setup.ts";
import { ordersServer } from "../test/helpers/orders-task.ts";
import { startSession } from "../test/helpers/pi-session.ts";
import { fixed, median, reportFinding, runs, spread, table } from "./measure.ts";

const BLOCKS = runs(8, 2);
const CALLS = 50;
const ARGS = { status: "none" };
const LOOP = `const start = Date.now();\nfor (let i = 0; i < ${CALLS}; i++) await tools.orders__list_orders(${JSON.stringify(ARGS)});\nreturn Date.now() - start;`;

const host = currentHost();
const dirs = await mcpDirs({ mcpServers: { orders: ordersServer({ directTools: true }) }, settings: { script: true } });
await warmCache(dirs, "orders");
const pi = await startSession({ extensions: [`${REPO_ROOT}/${ENTRY}`], agentDir: dirs.agentDir, cwd: dirs.cwd });
try {
  const definition = (name: string) => {
    const found = (pi.session as unknown as { getToolDefinition(name: string): ToolDefinition | undefined }).getToolDefinition(name);
    if (!found) throw new Error(`Pi has no tool ${name}`);
    return found;
  };
  const list = definition("orders__list_orders");
  const codemode = definition("codemode");
  const time = async (call: () => Promise<unknown>) => {
    const start = performance.now();
    await call();
    return performance.now() - start;
  };
  const direct = () => list.execute("bench", ARGS, undefined, undefined, undefined as never);
  const script = (code: string) => () => codemode.execute("bench", { code }, undefined, undefined, undefined as never);
  // Warm-up: the server connected, the engine compiled, both paths run once.
  for (let i = 0; i < 20; i++) await direct();
  await script(LOOP)();

  const perDirect: number[] = [];
  const perScripted: number[] = [];
  const empty: number[] = [];
  for (let block = 0; block < BLOCKS; block++) {
    let directTotal = 0;
    for (let i = 0; i < CALLS; i++) directTotal += await time(direct);
    empty.push(await time(script("return 1;")));
    const loop = await script(LOOP)();
    const loopMs = Number(loop.content[0]?.type === "text" ? loop.content[0].text : NaN);
    if (!Number.isFinite(loopMs)) throw new Error(`the loop script answered ${JSON.stringify(loop.content)}`);
    perDirect.push(directTotal / CALLS);
    perScripted.push(loopMs / CALLS);
  }
  console.log(`Pi ${host.version}, ${BLOCKS} blocks of ${CALLS} calls each way:\n`);
  console.log(
    table(
      ["", "ms, median (min–max) over blocks"],
      [
        ["direct call", spread(perDirect, 2)],
        ["call from a script", spread(perScripted, 2)],
        ["a script's fixed cost (empty script)", spread(empty, 1)],
      ],
    ),
  );
  console.log();
  reportFinding(
    `Pi ${host.version}: a tool call from a script costs ${fixed(median(perScripted), 2)} ms vs ${fixed(median(perDirect), 2)} ms direct ` +
      `(${fixed(median(perScripted) / median(perDirect), 2)}×); a script starts in ${fixed(median(empty), 0)} ms`,
  );
} finally {
  await pi.dispose();
  await dirs.cleanup();
}

/**
 * The multi-step data task of issue 22 on the orders fixture (test/fixtures/servers/orders-server.mjs): read the
 * 240 orders, keep the five largest disputed orders in the north, save a summary of them. The scripted model does it
 * once with direct calls (it reads every order) and once with one `codemode` script (it reads the script's answer);
 * the end-to-end test checks both save the same summary, the bench counts what the model saw in each.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ENTRY } from "./fault-setup.ts";
import { contentText, type ModelRequest, type ScriptStep } from "./faux-script.ts";
import { hostHasCodemode } from "../../host.ts";
import { currentHost, importHostSdk, REPO_ROOT } from "./hosts.ts";
import { type McpDirs, mcpDirs } from "./mcp-setup.ts";
import { type PiSession, startSession } from "./pi-session.ts";
import { warmCache } from "./items-fixture.ts";

export const ORDERS_SERVER = join(REPO_ROOT, "test/fixtures/servers/orders-server.mjs");
const LOG_NAME = "orders.log";
export const TASK_PROMPT = "Save a summary titled 'North disputes' of the five largest disputed orders in the north region.";

/** The same text passes on every host: ours (0.73, 0.87) and Pi 1.x's own codemode. */
export const TASK_SCRIPT = `const { orders } = (await tools.orders__list_orders({})).structuredContent;
const picked = orders
  .filter((order) => order.status === "disputed" && order.region === "north")
  .sort((a, b) => b.total - a.total)
  .slice(0, 5);
const total = Math.round(picked.reduce((sum, order) => sum + order.total, 0) * 100) / 100;
const saved = await tools.orders__write_summary({ title: "North disputes", order_ids: picked.map((order) => order.id), total });
console.log(picked.length + " of " + orders.length + " orders picked");
return saved.content[0].text;`;

interface Order {
  id: string;
  region: string;
  status: string;
  total: number;
}

/** What the direct-calling model works out from the orders it read (the script's filter, in TypeScript). */
export function summaryArguments(orders: readonly Order[]): { title: string; order_ids: string[]; total: number } {
  const picked = orders
    .filter((order) => order.status === "disputed" && order.region === "north")
    .sort((a, b) => b.total - a.total)
    .slice(0, 5);
  const total = Math.round(picked.reduce((sum, order) => sum + order.total, 0) * 100) / 100;
  return { title: "North disputes", order_ids: picked.map((order) => order.id), total };
}

/** A config entry for the fixture, logging saved summaries (and refunds) to `<project>/orders.log`. */
export function ordersServer(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { command: process.execPath, args: [ORDERS_SERVER], env: { ORDERS_LOG: `\${workspaceFolder}/${LOG_NAME}` }, ...extra };
}

/** What the server logged, one entry per saved summary or refund. */
export function ordersLog(dirs: Pick<McpDirs, "cwd">): Record<string, unknown>[] {
  const file = join(dirs.cwd, LOG_NAME);
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

export type TaskMode = "direct" | "script";

/** Direct: the orders tools are offered from the first request and the model reads every order. */
function directSteps(): ScriptStep[] {
  return [
    { toolCalls: [{ name: "orders__list_orders", arguments: {} }] },
    (request: ModelRequest) => {
      const result = request.messages.filter((message) => message.role === "toolResult").at(-1);
      const { orders } = JSON.parse(contentText(result?.content)) as { orders: Order[] };
      return { toolCalls: [{ name: "orders__write_summary", arguments: summaryArguments(orders) }] };
    },
    "Saved the summary of the five largest disputed orders in the north.",
  ];
}

function scriptSteps(): ScriptStep[] {
  return [
    { toolCalls: [{ name: "codemode", arguments: { code: TASK_SCRIPT } }] },
    "Saved the summary of the five largest disputed orders in the north.",
  ];
}

export interface TaskRun {
  dirs: McpDirs;
  pi: PiSession;
}

/** Pi 1.x's own codemode, for SDK sessions: where the host has one, the adapter offers none and scripts run through it. */
const PI_CODEMODE = join(REPO_ROOT, "test/fixtures/extensions/pi-codemode.ts");

/** Dirs with the fixture (its tools cached), and a session that has done the task in `mode`. Caller disposes both. */
export async function runOrdersTask(mode: TaskMode): Promise<TaskRun> {
  const settings = mode === "script" ? { script: true } : {};
  const dirs = await mcpDirs({ mcpServers: { orders: ordersServer(mode === "direct" ? { directTools: true } : {}) }, settings });
  await warmCache(dirs, "orders");
  const pi = await startSession({
    extensions: [
      ...(mode === "script" && hostHasCodemode(await importHostSdk(currentHost())) ? [PI_CODEMODE] : []),
      join(REPO_ROOT, ENTRY),
    ],
    agentDir: dirs.agentDir,
    cwd: dirs.cwd,
    script: mode === "direct" ? directSteps() : scriptSteps(),
  });
  try {
    await pi.prompt(TASK_PROMPT);
  } catch (error) {
    await pi.dispose();
    await dirs.cleanup();
    throw error;
  }
  return { dirs, pi };
}

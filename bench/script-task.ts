/**
 * 8. The orders task of issue 22 (test/helpers/orders-task.ts): the scripted model reads 240 orders, keeps the five
 * largest disputed ones in the north and saves a summary, once with direct calls and once with one `codemode`
 * script, in the real Pi, per host (each in a child process on the host's Node). Counts, with o200k, what the model
 * sees: (a) what the task puts into the conversation (tool calls and their results, the prompt left out), and (b)
 * every request's whole input (system prompt, tools array, messages) summed over the run. Both runs must save the
 * same summary. Also what the codemode tool itself costs on every request once `settings.script` is on.
 *
 *   node node_modules/jiti/lib/jiti-cli.mjs bench/script-task.ts [--hosts=0.73.1,0.87.1]
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { contentText, type ModelRequest, type RequestMessage } from "../test/helpers/faux-script.ts";
import { REPO_ROOT } from "../test/helpers/hosts.ts";
import { ordersLog, runOrdersTask, type TaskMode } from "../test/helpers/orders-task.ts";
import { fixed, reportFinding, reportGoal, table, tokens } from "./measure.ts";
import { benchHosts } from "./session-run.ts";

const MIN_SAVING = 0.9;
const RESULT_PREFIX = "RESULT ";
const JITI_CLI = `${REPO_ROOT}/node_modules/jiti/lib/jiti-cli.mjs`;

interface TaskTokens {
  requests: number;
  /** Tool calls and tool results in the last request's messages. */
  taskTokens: number;
  /** Σ over requests of system prompt + tools + messages. */
  inputTokens: number;
  /** The codemode tool as the first request offered it (name, description, schema): its cost on every request. */
  scriptToolTokens: number;
  saved: unknown;
}

/** The model's view of one message as text: its text parts, and each tool call's name and arguments. */
function messageText(message: RequestMessage): string {
  if (!Array.isArray(message.content)) return contentText(message.content);
  return (message.content as { type?: string; text?: string; name?: string; arguments?: unknown }[])
    .map((part) => (part.type === "toolCall" ? `${part.name} ${JSON.stringify(part.arguments)}` : (part.text ?? "")))
    .join("\n");
}

function requestTokens(request: ModelRequest): number {
  return (
    tokens(request.systemPrompt) +
    tokens(JSON.stringify(request.tools)) +
    request.messages.reduce((sum, message) => sum + tokens(messageText(message)), 0)
  );
}

async function measure(mode: TaskMode): Promise<TaskTokens> {
  const { pi, dirs } = await runOrdersTask(mode);
  try {
    const last = pi.requests.at(-1)!;
    const taskMessages = last.messages.filter((message) => message.role === "toolResult" || message.role === "assistant");
    return {
      requests: pi.requests.length,
      taskTokens: taskMessages.reduce((sum, message) => sum + tokens(messageText(message)), 0),
      inputTokens: pi.requests.reduce((sum, request) => sum + requestTokens(request), 0),
      scriptToolTokens: tokens(JSON.stringify(pi.requests[0]!.tools.find((tool) => tool.name === "codemode") ?? "")),
      saved: ordersLog(dirs),
    };
  } finally {
    await pi.dispose();
    await dirs.cleanup();
  }
}

if (process.argv.includes("--child")) {
  const result = { direct: await measure("direct"), script: await measure("script") };
  console.log(`${RESULT_PREFIX}${JSON.stringify(result)}`);
  process.exit(0);
}

console.log("The orders task, direct calls vs one codemode script: tokens the model sees (o200k).\n");
for (const host of benchHosts()) {
  const { stdout } = await promisify(execFile)(host.nodeBinary, [JITI_CLI, fileURLToPath(import.meta.url), "--child"], {
    cwd: REPO_ROOT,
    env: { ...process.env, PI_TEST_HOST: host.version },
    maxBuffer: 16 * 2 ** 20,
  });
  const line = stdout.split("\n").find((text) => text.startsWith(RESULT_PREFIX));
  if (!line) throw new Error(`no result from Pi ${host.version}:\n${stdout.slice(-2_000)}`);
  const { direct, script } = JSON.parse(line.slice(RESULT_PREFIX.length)) as Record<TaskMode, TaskTokens>;
  const same = JSON.stringify(direct.saved) === JSON.stringify(script.saved);
  console.log(`Pi ${host.version}:\n`);
  console.log(
    table(
      ["run", "model requests", "task tokens (calls + results)", "input tokens, all requests"],
      [
        ["direct calls", direct.requests, fixed(direct.taskTokens), fixed(direct.inputTokens)],
        ["one script", script.requests, fixed(script.taskTokens), fixed(script.inputTokens)],
      ],
    ),
  );
  console.log();
  const saving = 1 - script.taskTokens / direct.taskTokens;
  const overall = 1 - script.inputTokens / direct.inputTokens;
  reportGoal({
    goal: `Pi ${host.version}: the script run's task tokens, same summary saved`,
    target: `≥ ${fixed(MIN_SAVING * 100)}% fewer than direct calls`,
    measured: `${fixed(saving * 100, 1)}% fewer (${fixed(script.taskTokens)} vs ${fixed(direct.taskTokens)}); all input ${fixed(overall * 100, 1)}% fewer; same summary: ${same ? "yes" : "NO"}`,
    met: same && saving >= MIN_SAVING,
    margin: `${fixed((saving - MIN_SAVING) * 100, 1)} points`,
  });
  reportFinding(
    `Pi ${host.version}: the codemode tool (the adapter's with settings.script on; Pi's own on 1.x) adds ${fixed(script.scriptToolTokens)} tokens to every request`,
  );
  console.log();
}

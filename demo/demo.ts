/**
 * `npm run demo`: a scripted session, offline, in the real Pi with the real MCP servers of examples/mcp.json
 * (server-everything, server-memory). A scripted model finds tools with ToolSearch and calls them, the way a real
 * model would follow the adapter's answers; the demo prints what the model is shown and what happens.
 *
 * Host: Pi 0.73.1 by default; `PI_TEST_HOST=0.87.1` or `=1.6.0` (with Node ≥ 22) shows a newer host.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { contentText, type ModelRequest, offeredToolNames, type ScriptStep } from "../test/helpers/faux-script.ts";
import { REPO_ROOT } from "../test/helpers/hosts.ts";
import { startSession } from "../test/helpers/pi-session.ts";

const CONFIG = resolve(REPO_ROOT, "examples/mcp.json");
/** Tool results already printed (each request carries the whole transcript). */
let resultsShown = 0;

function say(text: string): void {
  process.stdout.write(`${text}\n`);
}

function clip(text: string, max = 240): string {
  const oneLine = text.replace(/\s+/g, " ").trim();
  return oneLine.length <= max ? oneLine : `${oneLine.slice(0, max - 1)}…`;
}

/** What the model is shown at this request, and the tool results it got since its last turn. */
function narrate(request: ModelRequest): void {
  const results = request.messages.filter((message) => message.role === "toolResult");
  for (const message of results.slice(resultsShown))
    say(`   ↳ ${String(message.toolName)} answered: ${clip(contentText(message.content))}`);
  resultsShown = results.length;
  const toolTokens = encode(JSON.stringify(request.tools)).length;
  say(
    `\n[model request ${request.index + 1}] offered ${request.tools.length} tools (~${toolTokens} tokens of definitions, o200k): ${offeredToolNames(request).join(", ")}`,
  );
}

/** A model step: narrate, then call `name` directly when offered, else through McpCall (Pi 0.73.1 in this prompt). */
function call(name: string, args: Record<string, unknown>): ScriptStep {
  return (request) => {
    narrate(request);
    const direct = offeredToolNames(request).includes(name);
    const toolCall = direct ? { name, arguments: args } : { name: "McpCall", arguments: { tool: name, arguments: args } };
    say(`   model calls ${toolCall.name}(${clip(JSON.stringify(toolCall.arguments), 160)})`);
    return { toolCalls: [toolCall] };
  };
}

function search(query: string): ScriptStep {
  return (request) => {
    narrate(request);
    say(`   model calls ToolSearch(${JSON.stringify({ query })})`);
    return { toolCalls: [{ name: "ToolSearch", arguments: { query } }] };
  };
}

function reply(text: string): ScriptStep {
  return (request) => {
    narrate(request);
    say(`   model says: ${text}`);
    return text;
  };
}

const script: ScriptStep[] = [
  search("remember facts about a person in a knowledge graph"),
  call("memory__create_entities", {
    entities: [{ name: "Ada Lovelace", entityType: "person", observations: ["wrote the first program"] }],
  }),
  search("select:memory__read_graph"),
  call("memory__read_graph", {}),
  reply("I stored Ada Lovelace in the knowledge graph and read it back."),
  search("echo a message back"),
  call("everything__echo", { message: "hello from the demo" }),
  reply("The echo server answered."),
];

/**
 * The example config, in a fresh agent dir (no cache yet; `${workspaceFolder}` is the repo), with the memory
 * server's graph file there too: a graph left by an earlier run would already hold what the demo stores (the
 * server then answers `[]`, nothing created), so every run starts from an empty one.
 */
async function demoConfig(agentDir: string): Promise<ExampleConfig> {
  const config = JSON.parse(await readFile(CONFIG, "utf8")) as ExampleConfig;
  config.mcpServers.memory!.env = { ...config.mcpServers.memory!.env, MEMORY_FILE_PATH: join(agentDir, "memory.jsonl") };
  return config;
}

interface ExampleConfig {
  mcpServers: Record<string, { env?: Record<string, string> }>;
}

async function main(): Promise<void> {
  const agentDir = await mkdtemp(join(tmpdir(), "pi-mcp-demo-"));
  await writeFile(join(agentDir, "mcp.json"), JSON.stringify(await demoConfig(agentDir), null, 2));
  const pi = await startSession({ extensions: [REPO_ROOT], agentDir, cwd: REPO_ROOT, script, settings: {} });
  try {
    say(`pi-mcp-adapter demo: Pi ${pi.host.version}, offline, scripted model, real MCP servers from ${CONFIG}`);
    for (const prompt of ["Remember that Ada Lovelace wrote the first program, then show me what you remember.", "Now echo a greeting."]) {
      say(`\n=== user: ${prompt}`);
      await pi.prompt(prompt);
    }
    say("\n=== /mcp status");
    say((await pi.command("/mcp status")).text);
  } finally {
    await pi.dispose();
    await rm(agentDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`demo failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exitCode = 1;
});

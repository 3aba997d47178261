/**
 * 1. Tokens the model sees at the first request: the tools array (name, description, JSON schema of each tool, as
 * the faux provider received them) plus the system prompt, counted with o200k (an approximation: every provider
 * tokenizes and wraps tools its own way). Pi alone is the baseline; then the adapter with 1, 5, 15 and 45 corpus
 * servers cached (no server started), and with every tool direct (`MCP_DIRECT_TOOLS=*`), which is what the model
 * would see without ToolSearch. Each figure is exact for its run (no repetition needed). Per Pi host.
 *
 *   node node_modules/jiti/lib/jiti-cli.mjs bench/tokens.ts [--hosts=0.73.1,0.87.1,1.6.0]
 */
import { corpusServers, firstCorpusServers } from "./corpus.ts";
import { fixed, reportGoal, table } from "./measure.ts";
import { benchHosts, type SessionRunOptions, type SessionRunResult, spawnSessionRun } from "./session-run.ts";

/**
 * What Pi's built-in MCP (1.5.2) costs over Pi alone in its `deferred` mode on the same 45 servers: `tool_search`
 * +134 and its `mcp_servers` system-prompt section +507 (issue 21). A user who switches to us must not pay more.
 */
const MAX_OVER_BASELINE = 641;
const SERVER_COUNTS = [1, 5, 15, corpusServers().length];

interface Row {
  label: string;
  options: SessionRunOptions;
}

const rows: Row[] = [
  { label: "Pi alone (baseline)", options: { servers: 0, extension: false } },
  { label: "adapter, no server configured", options: { servers: 0, extension: true } },
  ...SERVER_COUNTS.map((servers) => ({
    label: `adapter, ${servers} server${servers === 1 ? "" : "s"} cached`,
    options: { servers, extension: true },
  })),
  { label: "adapter, 45 servers, `MCP_DIRECT_TOOLS=*`", options: { servers: corpusServers().length, extension: true, directTools: "*" } },
];
const toolsIn = (servers: number) => firstCorpusServers(servers).reduce((sum, server) => sum + server.tools.length, 0);

console.log("Tokens of the first model request (o200k; an approximation): tools array + system prompt.\n");
for (const host of benchHosts()) {
  const results: { row: Row; result: SessionRunResult }[] = [];
  for (const row of rows) results.push({ row, result: await spawnSessionRun(host, row.options) });
  const total = (r: SessionRunResult) => r.firstRequest.toolTokens + r.firstRequest.systemPromptTokens;
  const baseline = total(results[0].result);
  console.log(`Pi ${host.version}:\n`);
  console.log(
    table(
      ["configuration", "MCP tools known", "tools offered", "tools tokens", "system prompt tokens", "total", "over Pi alone"],
      results.map(({ row, result }) => [
        row.label,
        fixed(row.options.extension ? toolsIn(row.options.servers) : 0),
        result.firstRequest.toolCount,
        fixed(result.firstRequest.toolTokens),
        fixed(result.firstRequest.systemPromptTokens),
        fixed(total(result)),
        `${total(result) - baseline >= 0 ? "+" : ""}${fixed(total(result) - baseline)}`,
      ]),
    ),
  );
  console.log();
  const deferred = results.filter(({ row }) => row.options.extension && row.options.servers > 0 && !row.options.directTools);
  const overs = deferred.map(({ result }) => total(result) - baseline);
  const full = overs.at(-1)!;
  const direct = total(results.at(-1)!.result) - baseline;
  reportGoal({
    goal: `Pi ${host.version}: tokens over Pi alone at ${fixed(toolsIn(corpusServers().length))} tools`,
    target: `≤ ${fixed(MAX_OVER_BASELINE)}, Pi's built-in MCP in its deferred mode`,
    measured: `+${fixed(full)} (all direct: +${fixed(direct)}, ${fixed(direct / full, 0)}× as many)`,
    met: full <= MAX_OVER_BASELINE,
    margin: full <= MAX_OVER_BASELINE ? `${fixed(MAX_OVER_BASELINE - full)} to spare` : `over by ${fixed(full - MAX_OVER_BASELINE)}`,
  });
  const worst = Math.max(...overs);
  reportGoal({
    goal: `Pi ${host.version}: flat growth, tokens over Pi alone from 1 to 45 servers`,
    target: `≤ ${fixed(MAX_OVER_BASELINE)} at every size`,
    measured: overs.map((over, i) => `${SERVER_COUNTS[i]}: +${fixed(over)}`).join(", "),
    met: worst <= MAX_OVER_BASELINE,
    margin:
      worst <= MAX_OVER_BASELINE ? `45 servers cost ${fixed(full - overs[0])} more than 1` : `over by ${fixed(worst - MAX_OVER_BASELINE)}`,
  });
  console.log();
}

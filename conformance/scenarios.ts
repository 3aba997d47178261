/**
 * What the client does in each client scenario of the MCP conformance suite (0.2.0-alpha.12), through our
 * McpServerManager as a user of the adapter would: which tools it calls with what, which resources and prompts it
 * reads. The checks themselves are the suite's; /work/notes/conformance-scenarios.md describes them scenario by
 * scenario. A scenario missing here is refused, so a new suite version cannot pass by doing nothing.
 */
import type { ServerConnection } from "../connection/live-connection.ts";
import type { McpServerManager } from "../server-manager.ts";
import { join } from "node:path";
import { MANIFEST } from "../skills/files.ts";
import { skillFiles } from "../skills/offer.ts";
import { SkillSession } from "../skills/session.ts";
import { formatParameters, toProviderSafeSchema } from "../tools/json-schema.ts";
import { errorMessage } from "../util/guards.ts";

/** The scenario's MCP_CONFORMANCE_CONTEXT: what a user would have configured or been given for it. */
export interface ScenarioContext {
  client_id?: string;
  client_secret?: string;
  private_key_pem?: string;
  signing_algorithm?: string;
  /** auth/enterprise-managed-authorization: the company's identity provider, the adapter's client there, the user's ID token. */
  idp_issuer?: string;
  idp_token_endpoint?: string;
  idp_client_id?: string;
  idp_id_token?: string;
  /** auth/wif-jwt-bearer: the workload's JWT (the scenario also hands out a wrong-audience and an expired one). */
  valid_jwt?: string;
  /** http-custom-headers: the calls to make (the values test the headers' encoding). */
  toolCalls?: { name: string; arguments: Record<string, unknown> }[];
}

export interface ScenarioClient {
  manager: McpServerManager;
  /** The driver's agent dir (a fresh one per scenario). */
  agentDir: string;
  serverName: string;
  connection: ServerConnection;
  context: ScenarioContext;
}

/** The client's part of a scenario, after connecting (which lists the server's tools, resources and prompts). */
export type ScenarioPlan = (client: ScenarioClient) => Promise<void>;

const connectOnly: ScenarioPlan = async () => {};

/** Calls the tools one after another; a result with `isError` fails the plan. */
function call(...calls: [tool: string, args?: Record<string, unknown>][]): ScenarioPlan {
  return async ({ manager, serverName }) => {
    for (const [tool, args = {}] of calls) await callTool(manager, serverName, tool, args);
  };
}

async function callTool(manager: McpServerManager, serverName: string, tool: string, args: Record<string, unknown>): Promise<void> {
  const result = await manager.callTool(serverName, tool, args);
  console.log(`${tool}: ${JSON.stringify(result.content)}`);
  if (result.isError) throw new Error(`${tool} returned an error result`);
}

/**
 * A call whose outcome the scenario leaves open. sep-2322's `test_mrtr_no_result_type` answers a 2026-07-28 request
 * without `resultType`: the suite checks only that the client does not retry it as if input were required. The
 * released 2026-07-28 text requires the field of such a server and the SDK v2 refuses the result (conformance issue
 * #475), while the check's wording says to take it as complete: either answer passes here (a refusal that names the
 * missing field; any other error still fails).
 */
async function callEitherWay({ manager, serverName }: ScenarioClient, tool: string): Promise<void> {
  try {
    const result = await manager.callTool(serverName, tool, {});
    console.log(`${tool}: ${JSON.stringify(result.content)}`);
  } catch (error) {
    if (!/resultType/.test(errorMessage(error))) throw error;
    console.log(`${tool} refused: ${errorMessage(error)}`);
  }
}

/** Every tool the adapter offers, with arguments its schema asks for: a tool the adapter should have refused is called too. */
const callEveryTool: ScenarioPlan = async ({ manager, serverName, connection }) => {
  for (const tool of connection.tools) await callTool(manager, serverName, tool.name, argumentsFor(tool.inputSchema));
};

/** Values of the required properties' types: what a model would fill in. */
function argumentsFor(schema: unknown): Record<string, unknown> {
  const { properties = {}, required = [] } = (schema ?? {}) as { properties?: Record<string, { type?: string }>; required?: string[] };
  const sample: Record<string, unknown> = {
    string: "conformance",
    integer: 1,
    number: 1.5,
    boolean: true,
    object: {},
    array: [],
    null: null,
  };
  return Object.fromEntries(required.map((name) => [name, sample[properties[name]?.type ?? "string"]]));
}

/** Each tool, resource and prompt the server lists, used once (http-standard-headers checks the headers of each kind). */
const useEverything: ScenarioPlan = async (client) => {
  await callEveryTool(client);
  const { manager, serverName, connection } = client;
  for (const resource of connection.resources) await manager.readResource(serverName, resource.uri);
  for (const prompt of connection.prompts) await manager.getPrompt(serverName, prompt.name, {});
};

/** http-custom-headers: the calls the scenario's context names (its arguments exercise the header encodings). */
const callContextTools: ScenarioPlan = async ({ manager, serverName, context }) => {
  if (!context.toolCalls?.length) throw new Error("the scenario's context names no tool calls");
  for (const { name, arguments: args } of context.toolCalls) await callTool(manager, serverName, name, args);
};

/** Hands one tool's input schema, as the adapter keeps it, to a tool that echoes it to the suite. */
function echoSchema(of: string, via: string): ScenarioPlan {
  return async ({ manager, serverName, connection }) => {
    const tool = connection.tools.find((candidate) => candidate.name === of);
    if (!tool) throw new Error(`the server offers no tool ${of}`);
    await callTool(manager, serverName, via, { schema: tool.inputSchema });
  };
}

/** Prepares every tool's schema for the model as the adapter does when it registers them (a network $ref must stay unfetched). */
const prepareSchemas: ScenarioPlan = async ({ connection }) => {
  for (const tool of connection.tools) console.log(`${tool.name}(${formatParameters(toProviderSafeSchema(tool.inputSchema))})`);
};

/**
 * SKILLS (SEP-2640). Each `sep-2640-client-*` server declares the skills extension and lists one skill,
 * `skill://pdf-processing/SKILL.md`, with one more file, `references/FORMS.md`. The adapter's own skills session does
 * what it does in Pi: `no-prefetch` discovers the skills (as at Pi's startup, from the listing the connect made) and
 * reads no file; `verify` then reads each file as the model's `read` of it would, SKILL.md first. The server's
 * SKILL.md fails its digest, size or frontmatter check: the session refuses the skill, so FORMS.md is never asked for
 * (the plan fails, which the scenario allows).
 */
function useSkills(mode: "no-prefetch" | "verify"): ScenarioPlan {
  return async ({ manager, serverName, connection, agentDir }) => {
    const server = { name: serverName, source: { kind: "user" as const, path: "conformance/driver.ts" } };
    const skills = new SkillSession({
      agentDir,
      servers: {
        connect: async () => {},
        entries: () => manager.getConnection(serverName)?.skills,
        read: (name, entry, uri, signal) => manager.readSkillFile(name, entry, uri, { signal }),
      },
      listings: () => [{ server, entries: connection.skills }],
      notify: (message) => console.log(message),
    });
    const folders = await skills.discover();
    console.log(`skills offered: ${folders.length}`);
    if (mode === "no-prefetch") return;
    for (const [folder, entry] of folders.map((folder, index) => [folder, connection.skills[index]!] as const)) {
      const files = skillFiles(entry);
      if (typeof files === "string") throw new Error(files);
      for (const path of [MANIFEST, ...[...files.keys()].filter((file) => file !== MANIFEST)]) {
        const outcome = await skills.beforeToolCall("read", { path: join(folder, path) }, folder);
        if (!outcome.ok) throw new Error(outcome.reason);
        console.log(`${path}: verified`);
      }
    }
  };
}

const AUTH_TOOL = call(["test-tool"]);

const PLANS: Record<string, ScenarioPlan> = {
  initialize: connectOnly,
  tools_call: call(["add_numbers", { a: 5, b: 3 }]),
  "elicitation-sep1034-client-defaults": call(["test_client_elicitation_defaults"]),
  "sse-retry": call(["test_reconnection"]),
  "request-metadata": connectOnly,
  "sep-2322-client-request-state": async (client) => {
    await call(["test_mrtr_echo_state"], ["test_mrtr_no_state"], ["test_mrtr_unrelated"])(client);
    await callEitherWay(client, "test_mrtr_no_result_type");
  },
  "http-standard-headers": useEverything,
  "http-custom-headers": callContextTools,
  "http-invalid-tool-headers": callEveryTool,
  "json-schema-ref-no-deref": prepareSchemas,
  "json-schema-2020-12-preservation": echoSchema("json_schema_2020_12_tool", "json_schema_echo"),
  "sep-2640-client-no-prefetch": useSkills("no-prefetch"),
  "sep-2640-client-verify-digest": useSkills("verify"),
  "sep-2640-client-verify-size": useSkills("verify"),
  "sep-2640-client-verify-frontmatter": useSkills("verify"),
};

/** The plan of a scenario; every `auth/*` scenario calls the protected server's `test-tool` once signed in. */
export function scenarioPlan(scenario: string): ScenarioPlan | undefined {
  return scenario.startsWith("auth/") ? AUTH_TOOL : PLANS[scenario];
}

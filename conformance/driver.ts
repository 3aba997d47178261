/**
 * The client the MCP conformance suite tests: `conformance client --command "<node> conformance/driver.ts"` runs it
 * once per scenario, with the scenario's test server URL as the last argument and its name in
 * MCP_CONFORMANCE_SCENARIO. It goes through our own McpServerManager (Streamable HTTP with SSE fallback, OAuth,
 * elicitation), connects (which lists the server's tools, resources and prompts), then does the scenario's part as
 * conformance/scenarios.ts says. Nobody is there to answer an elicitation, so it accepts the form's defaults. Exit code
 * 0 only if every step worked.
 *
 * When the server wants a sign-in, the driver does what a user does with `/mcp-auth`: the manager's sign-in, with
 * conformance/headless-browser.mjs's `follow` as the browser (it follows the authorization server's redirect to the
 * adapter's own loopback callback), then the same steps again; at most MAX_SIGN_INS times (auth/scope-retry-limit checks the
 * bound). The scenario's MCP_CONFORMANCE_CONTEXT becomes the server's `oauth` config, as a user would write it: a
 * pre-registered client, client credentials, an identity provider with the user's ID token (SEP-990), a workload's
 * token file (SEP-1933), DPoP (SEP-1932).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { NeedsAuthError } from "../connection/session.ts";
import { acceptElicitationDefaults } from "../test/helpers/elicitation.ts";
import { errorMessage } from "../util/guards.ts";
import { McpServerManager } from "../server-manager.ts";
import type { OAuthSettings, ServerDefinition } from "../types.ts";
import { follow } from "./headless-browser.mjs";
import { type ScenarioContext, scenarioPlan } from "./scenarios.ts";

/** The client ID metadata document URL the auth/basic-cimd scenario expects a client to publish. */
const CIMD_URL = "https://conformance-test.local/client-metadata.json";
const MAX_SIGN_INS = 3;
const SIGN_IN_TIMEOUT_MS = 20_000;

async function main(): Promise<void> {
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";
  const url = process.argv.at(-1) ?? "";
  const plan = scenarioPlan(scenario);
  if (!plan) throw new Error(`unknown scenario "${scenario}" (MCP_CONFORMANCE_SCENARIO)`);
  if (!URL.canParse(url)) throw new Error(`the last argument must be the test server URL, got "${url}"`);

  // test/conformance.test.ts proves that a failing scenario outside the baseline fails the run.
  if (process.env.PI_MCP_CONFORMANCE_BREAK === scenario)
    throw new Error(`scenario "${scenario}" broken on purpose (PI_MCP_CONFORMANCE_BREAK)`);
  const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}") as ScenarioContext;
  // Tokens and registrations of one scenario must not reach the next.
  const agentDir = mkdtempSync(join(tmpdir(), "pi-mcp-conformance-driver-"));
  // Pi gives its servers its working directory as their one root.
  const manager = new McpServerManager({ agentDir, resolveNpx: false, elicitation: acceptElicitationDefaults, roots: [process.cwd()] });
  try {
    const oauth = await oauthConfig(scenario, url, context, agentDir);
    const server: ServerDefinition = { name: "conformance", url, oauth, source: { kind: "user", path: "conformance/driver.ts" } };
    await withSignIns(manager, server, async () => {
      const connection = await manager.connect(server);
      console.log(`connected over ${connection.transport}; tools: ${connection.tools.map((tool) => tool.name).join(", ") || "(none)"}`);
      await plan({ manager, agentDir, serverName: server.name, connection, context });
    });
  } finally {
    await manager.closeAll();
    rmSync(agentDir, { recursive: true, force: true });
  }
}

/** Runs `work`; when the server asks for a sign-in, signs in as `/mcp-auth` does and runs it again. */
async function withSignIns(manager: McpServerManager, server: ServerDefinition, work: () => Promise<void>): Promise<void> {
  for (let signIns = 0; ; signIns++) {
    try {
      return await work();
    } catch (error) {
      if (!(error instanceof NeedsAuthError) || signIns === MAX_SIGN_INS) throw error;
      console.log(`sign-in ${signIns + 1}: ${error.message}`);
      // As a browser: the sign-in does not wait for it (a page that fails to load leaves the sign-in to time out).
      const openAuthorizationUrl = (url: string) => void follow(url).catch((failed: unknown) => console.error(errorMessage(failed)));
      await manager.signIn(server, { openAuthorizationUrl, timeoutMs: SIGN_IN_TIMEOUT_MS });
    }
  }
}

/** What a user would put in the server's `oauth` object for this scenario. */
async function oauthConfig(scenario: string, url: string, context: ScenarioContext, agentDir: string): Promise<OAuthSettings | undefined> {
  if (scenario === "auth/basic-cimd") return { clientMetadataUrl: CIMD_URL };
  if (scenario === "auth/pre-registration") return { clientId: context.client_id, clientSecret: context.client_secret };
  if (scenario === "auth/client-credentials-basic" || scenario === "auth/client-credentials-jwt") {
    const proof = context.private_key_pem
      ? { privateKey: context.private_key_pem, signingAlgorithm: context.signing_algorithm }
      : { clientSecret: context.client_secret };
    return {
      grantType: "client_credentials",
      clientId: context.client_id,
      ...proof,
      authorizationServer: await authorizationServerOf(url),
    };
  }
  if (scenario === "auth/enterprise-managed-authorization") {
    return {
      clientId: context.client_id,
      clientSecret: context.client_secret,
      authorizationServer: await authorizationServerOf(url),
      identityProvider: {
        issuer: context.idp_issuer!,
        // The scenario's identity provider publishes OpenID metadata without fields OpenID requires, which the SDK refuses.
        tokenEndpoint: context.idp_token_endpoint,
        clientId: context.idp_client_id!,
        idToken: context.idp_id_token,
      },
    };
  }
  if (scenario === "auth/wif-jwt-bearer") {
    // Where a workload platform would mount its token.
    const workloadTokenFile = join(agentDir, "workload-token.jwt");
    writeFileSync(workloadTokenFile, `${context.valid_jwt}\n`, { mode: 0o600 });
    return { clientId: context.client_id, workloadTokenFile, authorizationServer: await authorizationServerOf(url) };
  }
  // A server known to want DPoP is configured so; without it, the server's DPoP challenge asks for it (auth/dpop-nonce).
  if (scenario === "auth/dpop") return { dpop: true };
  return undefined;
}

/**
 * A user knows which authorization server their machine client (or workload, or enterprise client) belongs to; the
 * driver reads it from the server's metadata.
 */
async function authorizationServerOf(url: string): Promise<string> {
  const server = new URL(url);
  const metadata = (await (await fetch(new URL(`/.well-known/oauth-protected-resource${server.pathname}`, server))).json()) as {
    authorization_servers: string[];
  };
  return metadata.authorization_servers[0]!;
}

main().catch((error: unknown) => {
  console.error(errorMessage(error));
  process.exitCode = 1;
});

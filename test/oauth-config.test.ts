/**
 * The `oauth` object of a server entry and how OAuth and configured tokens exclude each other: every problem names
 * the file, the server and the field; a secret never appears in a message.
 */
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createConfigSandbox, serversByName, type ConfigSandbox } from "./config-sandbox.ts";

let sandbox: ConfigSandbox;
beforeEach(() => {
  sandbox = createConfigSandbox();
});
afterEach(() => sandbox.remove());

const URL_ = "https://mcp.example.com/mcp";
const load = (servers: Record<string, unknown>, env: Record<string, string> = {}) => {
  sandbox.write("home/.pi/agent/mcp.json", { mcpServers: servers });
  return sandbox.load({ env });
};
const file = () => path.join(sandbox.agentDir, "mcp.json");

describe("server entries: oauth", () => {
  it("reads every oauth field, substituting variables in the client id and secret", () => {
    const config = load(
      {
        github: {
          url: URL_,
          auth: "oauth",
          oauth: {
            clientId: "${ID}",
            clientSecret: "${SECRET}",
            scope: "repo read:org",
            redirectPort: 8765,
            clientMetadataUrl: "https://pi.example/client.json",
          },
        },
        machine: {
          url: URL_,
          oauth: {
            grantType: "client_credentials",
            clientId: "m",
            clientSecret: "${SECRET}",
            authorizationServer: "https://auth.example.com",
          },
        },
        signed: {
          url: URL_,
          oauth: {
            grantType: "client_credentials",
            clientId: "m",
            privateKey: "${KEY}",
            signingAlgorithm: "ES256",
            authorizationServer: "https://auth.example.com",
          },
        },
      },
      { ID: "pi-client", SECRET: "s3cret", KEY: "-----BEGIN PRIVATE KEY-----" },
    );
    expect(config.problems).toEqual([]);
    expect(serversByName(config)).toEqual({
      github: {
        enabled: true,
        url: URL_,
        auth: "oauth",
        oauth: {
          clientId: "pi-client",
          clientSecret: "s3cret",
          scope: "repo read:org",
          redirectPort: 8765,
          clientMetadataUrl: "https://pi.example/client.json",
        },
      },
      machine: {
        enabled: true,
        url: URL_,
        oauth: { grantType: "client_credentials", clientId: "m", clientSecret: "s3cret", authorizationServer: "https://auth.example.com" },
      },
      signed: {
        enabled: true,
        url: URL_,
        oauth: {
          grantType: "client_credentials",
          clientId: "m",
          privateKey: "-----BEGIN PRIVATE KEY-----",
          signingAlgorithm: "ES256",
          authorizationServer: "https://auth.example.com",
        },
      },
    });
  });

  it("skips a server whose oauth object is wrong, saying which field and why", () => {
    const config = load({
      notObject: { url: URL_, oauth: "yes" },
      badPort: { url: URL_, oauth: { redirectPort: 70000 } },
      httpCimd: { url: URL_, oauth: { clientMetadataUrl: "http://pi.example/client.json" } },
      rootCimd: { url: URL_, oauth: { clientMetadataUrl: "https://pi.example/" } },
      badGrant: { url: URL_, oauth: { grantType: "password" } },
      secretAlone: { url: URL_, oauth: { clientSecret: "hidden-1" } },
      machineWithoutIssuer: { url: URL_, oauth: { grantType: "client_credentials", clientId: "m", clientSecret: "hidden-2" } },
      secretAndKey: {
        url: URL_,
        oauth: {
          grantType: "client_credentials",
          clientId: "m",
          clientSecret: "hidden-5",
          privateKey: "hidden-6",
          authorizationServer: "https://auth.example.com",
        },
      },
      badAlgorithm: { url: URL_, oauth: { signingAlgorithm: "none" } },
      ok: { url: URL_, oauth: {} },
    });
    expect(Object.keys(serversByName(config))).toEqual(["ok"]);
    const f = file();
    expect(config.problems.map((problem) => problem.message)).toEqual([
      `${f}: server "notObject": "oauth": must be an object (got a string)`,
      `${f}: server "badPort": "oauth.redirectPort": must be a port number from 1 to 65535 (got the number 70000)`,
      `${f}: server "httpCimd": "oauth.clientMetadataUrl": must be an https:// URL with a path (the address of the client's metadata document)`,
      `${f}: server "rootCimd": "oauth.clientMetadataUrl": must be an https:// URL with a path (the address of the client's metadata document)`,
      `${f}: server "badGrant": "oauth.grantType": must be one of "authorization_code", "client_credentials" (got "password")`,
      `${f}: server "secretAlone": "oauth.clientSecret": needs "oauth.clientId" (a secret belongs to a pre-registered client)`,
      `${f}: server "machineWithoutIssuer": "oauth.grantType": "client_credentials" needs "oauth.clientId", one of "oauth.clientSecret" and "oauth.privateKey", and "oauth.authorizationServer" (the issuer the client belongs to: its credentials are sent nowhere else)`,
      `${f}: server "secretAndKey": "oauth.grantType": "client_credentials" needs "oauth.clientId", one of "oauth.clientSecret" and "oauth.privateKey", and "oauth.authorizationServer" (the issuer the client belongs to: its credentials are sent nowhere else)`,
      `${f}: server "badAlgorithm": "oauth.signingAlgorithm": must be one of "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA" (got "none")`,
    ]);
    expect(JSON.stringify(config.problems)).not.toMatch(/hidden-/);
  });

  const MACHINE = { grantType: "client_credentials", clientId: "m", clientSecret: "s", authorizationServer: "https://auth.example.com" };

  it("OAuth makes configured tokens void, auth: bearer makes oauth void, and oauth on a process is ignored; each with a warning", () => {
    const config = load({
      both: { url: URL_, auth: "oauth", bearerToken: "hidden-3", headers: { authorization: "Bearer hidden-4", "X-Team": "a" } },
      bearer: { url: URL_, auth: "bearer", bearerTokenEnv: "TOKEN", oauth: { scope: "x" } },
      local: { command: "server", oauth: { scope: "x" } },
      stray: { url: URL_, oauth: { authorizationServer: "https://auth.example.com", privateKey: "hidden-7", colour: "blue" } },
      machine: { url: URL_, oauth: { ...MACHINE, authServerMetadataUrl: "https://auth.example.com/metadata" } },
    });
    expect(serversByName(config)).toEqual({
      both: { enabled: true, url: URL_, auth: "oauth", headers: { "X-Team": "a" } },
      bearer: { enabled: true, url: URL_, auth: "bearer", bearerTokenEnv: "TOKEN" },
      local: { enabled: true, command: "server" },
      stray: { enabled: true, url: URL_, oauth: {} },
      machine: { enabled: true, url: URL_, oauth: MACHINE },
    });
    const f = file();
    expect(config.problems.map((problem) => [problem.level, problem.message])).toEqual([
      ["warning", `${f}: server "both": "bearerToken": ignored: the server signs in with OAuth (/mcp-auth)`],
      ["warning", `${f}: server "both": "headers.authorization": ignored: the server signs in with OAuth (/mcp-auth)`],
      ["warning", `${f}: server "bearer": "oauth": ignored: "auth" is "bearer"`],
      ["warning", `${f}: server "local": "oauth": only applies to an HTTP server (url); ignored`],
      ["warning", `${f}: server "stray": "oauth.colour": unknown field, ignored`],
      [
        "warning",
        `${f}: server "stray": "oauth.authorizationServer": only applies to "grantType": "client_credentials", a workload token ("workloadToken", "workloadTokenFile"), or an identity provider ("identityProvider"); ignored`,
      ],
      ["warning", `${f}: server "stray": "oauth.privateKey": only applies to "grantType": "client_credentials"; ignored`],
      [
        "warning",
        `${f}: server "machine": "oauth.authServerMetadataUrl": only applies to a sign-in; with "grantType": "client_credentials" the authorization server is "oauth.authorizationServer"; ignored`,
      ],
    ]);
    expect(JSON.stringify(config.problems)).not.toMatch(/hidden-/);
  });

  it("reads the company sign-ins: a workload's token file (~ expanded) or value, an identity provider, DPoP; secrets substituted, commands marked", () => {
    const company = { clientId: "pi", clientSecret: "${SECRET}", authorizationServer: "https://auth.example.com" };
    const config = load(
      {
        ci: { url: URL_, oauth: { workloadTokenFile: "~/tokens/ci.jwt", authorizationServer: "https://auth.example.com", scope: "mcp" } },
        job: { url: URL_, oauth: { workloadToken: "${JOB_TOKEN}", authorizationServer: "https://auth.example.com", clientId: "job" } },
        cloud: { url: URL_, oauth: { workloadToken: "!cloud print-identity-token", authorizationServer: "https://auth.example.com" } },
        docs: {
          url: URL_,
          oauth: {
            ...company,
            identityProvider: {
              issuer: "https://acme.okta.com",
              tokenEndpoint: "https://acme.okta.com/oauth2/v1/token",
              clientId: "pi-cli",
              clientSecret: "${IDP_SECRET}",
              idToken: "!acme-sso id-token",
            },
          },
        },
        wiki: { url: URL_, oauth: { ...company, identityProvider: { issuer: "https://acme.okta.com", clientId: "pi-cli" } } },
        bound: { url: URL_, oauth: { dpop: true } },
      },
      { SECRET: "s3cret", JOB_TOKEN: "eyJ.job.jwt", IDP_SECRET: "idp-s3cret" },
    );
    expect(config.problems).toEqual([]);
    const withSecret = { ...company, clientSecret: "s3cret" };
    expect(serversByName(config)).toEqual({
      ci: {
        enabled: true,
        url: URL_,
        oauth: {
          workloadTokenFile: path.join(sandbox.home, "tokens/ci.jwt"),
          authorizationServer: "https://auth.example.com",
          scope: "mcp",
        },
      },
      job: {
        enabled: true,
        url: URL_,
        oauth: { workloadToken: "eyJ.job.jwt", authorizationServer: "https://auth.example.com", clientId: "job" },
      },
      cloud: {
        enabled: true,
        url: URL_,
        oauth: { workloadToken: "!cloud print-identity-token", authorizationServer: "https://auth.example.com" },
        commandValues: ["oauth.workloadToken"],
      },
      docs: {
        enabled: true,
        url: URL_,
        oauth: {
          ...withSecret,
          identityProvider: {
            issuer: "https://acme.okta.com",
            tokenEndpoint: "https://acme.okta.com/oauth2/v1/token",
            clientId: "pi-cli",
            clientSecret: "idp-s3cret",
            idToken: "!acme-sso id-token",
          },
        },
        commandValues: ["oauth.identityProvider.idToken"],
      },
      wiki: {
        enabled: true,
        url: URL_,
        oauth: { ...withSecret, identityProvider: { issuer: "https://acme.okta.com", clientId: "pi-cli" } },
      },
      bound: { enabled: true, url: URL_, oauth: { dpop: true } },
    });
  });

  it("a company sign-in that lacks a field, or names two ways to a token, skips its server; fields it does not use are ignored with a warning", () => {
    const issuer = { authorizationServer: "https://auth.example.com" };
    const idp = { issuer: "https://acme.okta.com", clientId: "pi-cli" };
    const config = load({
      twoWays: { url: URL_, oauth: { ...issuer, workloadTokenFile: "/t", identityProvider: idp } },
      noIssuer: { url: URL_, oauth: { workloadTokenFile: "/t" } },
      bothTokens: { url: URL_, oauth: { ...issuer, workloadTokenFile: "/t", workloadToken: "hidden-1" } },
      noClientSecret: { url: URL_, oauth: { ...issuer, clientId: "pi", identityProvider: idp } },
      noIdpClient: { url: URL_, oauth: { ...issuer, clientId: "pi", clientSecret: "hidden-2", identityProvider: { issuer: idp.issuer } } },
      plainIdp: {
        url: URL_,
        oauth: { ...issuer, clientId: "pi", clientSecret: "hidden-3", identityProvider: { ...idp, issuer: "http://acme.example" } },
      },
      extra: {
        url: URL_,
        oauth: { ...issuer, workloadTokenFile: "/t", clientId: "ci", clientSecret: "hidden-4", dpop: true, privateKey: "hidden-5" },
      },
      scoped: {
        url: URL_,
        oauth: { ...issuer, clientId: "pi", clientSecret: "s", scope: "mcp", identityProvider: { ...idp, colour: "blue" } },
      },
    });
    expect(Object.keys(serversByName(config))).toEqual(["extra", "scoped"]);
    const f = file();
    expect(config.problems.map((problem) => [problem.level, problem.message])).toEqual([
      [
        "error",
        `${f}: server "twoWays": "oauth": a workload token ("workloadToken", "workloadTokenFile") and an identity provider ("identityProvider") are different ways to get a token: keep one`,
      ],
      [
        "error",
        `${f}: server "noIssuer": "oauth.workloadTokenFile": needs "oauth.authorizationServer" (the issuer the credentials are for: they are sent nowhere else)`,
      ],
      [
        "error",
        `${f}: server "bothTokens": "oauth.workloadToken": needs one of "oauth.workloadToken" and "oauth.workloadTokenFile", not both`,
      ],
      [
        "error",
        `${f}: server "noClientSecret": "oauth.identityProvider": needs "oauth.clientId" and "oauth.clientSecret" (the client at the MCP server's authorization server), and "oauth.authorizationServer" (the issuer the credentials are for: they are sent nowhere else)`,
      ],
      [
        "error",
        `${f}: server "noIdpClient": "oauth.identityProvider": needs "issuer" (the identity provider's issuer URL) and "clientId" (the adapter's client there)`,
      ],
      [
        "error",
        `${f}: server "plainIdp": "oauth.identityProvider.issuer": must be an https:// URL (http:// only on localhost, 127.0.0.1 or [::1])`,
      ],
      ["warning", `${f}: server "extra": "oauth.privateKey": only applies to "grantType": "client_credentials"; ignored`],
      [
        "warning",
        `${f}: server "extra": "oauth.clientSecret": only applies to a sign-in, "grantType": "client_credentials", or an identity provider ("identityProvider"); ignored`,
      ],
      ["warning", `${f}: server "extra": "oauth.dpop": only applies to a sign-in; ignored`],
      ["warning", `${f}: server "scoped": "oauth.identityProvider.colour": unknown field, ignored`],
      [
        "warning",
        `${f}: server "scoped": "oauth.scope": only applies to a sign-in, "grantType": "client_credentials", or a workload token ("workloadToken", "workloadTokenFile"); ignored`,
      ],
    ]);
    expect(JSON.stringify(config.problems)).not.toMatch(/hidden-/);
  });

  it("an unset variable in the client secret skips only that server", () => {
    const config = load({ remote: { url: URL_, oauth: { clientId: "c", clientSecret: "${NOT_SET}" } }, other: { url: URL_ } });
    expect(Object.keys(serversByName(config))).toEqual(["other"]);
    expect(config.problems.map((problem) => problem.message)).toEqual([
      `${file()}: server "remote": "oauth.clientSecret": environment variable NOT_SET is not set (it holds a secret: set it in Pi's environment, not in a config file, and start Pi again)`,
    ]);
  });
});

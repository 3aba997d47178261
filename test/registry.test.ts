/**
 * The MCP Registry client and entries made config entries, against a local registry serving real `server.json`
 * documents (test/fixtures/registry/SOURCES.md): search and paging, only active servers, the latest version by name,
 * one clear line for a registry that is down or answers wrong; npm through npx, pypi through uvx, oci through
 * `docker run -i --rm`, a remote with its headers; secrets as `${VAR}` and never asked; required inputs asked, or
 * referenced when nobody answers; optional ones left out; the registry's text never substituted or run.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseServerEntry } from "../config.ts";
import {
  configNameFor,
  DEFAULT_REGISTRY_URL,
  defaultOption,
  describeListing,
  describeMissingRuntime,
  fetchLatestServer,
  type InstallOption,
  installOptions,
  missingRuntime,
  planInstall,
  type RegistryServer,
  registryUrl,
  searchRegistry,
} from "../registry.ts";
import { readServerJson } from "../registry/server-json.ts";
import type { ConfigProblem } from "../types.ts";
import { type RegistryFixture, startRegistry } from "./helpers/registry-fixture.ts";

let registry: RegistryFixture;

beforeAll(async () => {
  registry = await startRegistry({ status: { "io.github.upstash/context7": "deprecated", "com.example/acme-analytics": "deleted" } });
});

afterAll(async () => {
  await registry.close();
});

async function latest(name: string): Promise<RegistryServer> {
  const server = await fetchLatestServer(registry.url, name);
  if (!server) throw new Error(`${name} is not in the fixture registry`);
  return server;
}

function option(server: RegistryServer, kind: InstallOption["kind"]): InstallOption {
  const found = installOptions(server).options.find((candidate) => candidate.kind === kind);
  if (!found) throw new Error(`${server.name} has no ${kind} option`);
  return found;
}

describe("searching the registry", () => {
  it("finds the latest version of servers whose names match, one line each, with how they run", async () => {
    const page = await searchRegistry(registry.url, { search: "AIRTABLE" });
    expect(page.servers.map((server) => `${server.name} ${server.version}`)).toEqual(["io.github.domdomegg/airtable-mcp-server 1.7.3"]);
    expect(describeListing(page.servers[0]!)).toBe(
      "io.github.domdomegg/airtable-mcp-server 1.7.3 — Read and write access to Airtable database schemas, tables, and records. · npm, oci, mcpb",
    );
    expect(registry.requests.at(-1)).toBe("/v0.1/servers?search=AIRTABLE&limit=10&version=latest");
  });

  it("pages with the registry's cursor; only active servers, and entries that cannot be used, are left out", async () => {
    const names: string[] = [];
    let cursor: string | undefined;
    let leftOut = 0;
    do {
      const page = await searchRegistry(registry.url, { search: "", cursor, limit: 2 });
      names.push(...page.servers.map((server) => server.name));
      leftOut += page.leftOut;
      cursor = page.nextCursor;
    } while (cursor);
    expect(names).toEqual([
      "com.apify/apify-mcp-server",
      "io.github.domdomegg/airtable-mcp-server",
      "io.github.domdomegg/time-mcp-nuget",
      "io.github.domdomegg/time-mcp-pypi",
      "io.github.modelcontextprotocol/server-everything",
    ]);
    // acme-analytics (deleted), context7 (deprecated), and "kbag" (a name without its namespace).
    expect(leftOut).toBe(3);
  });

  it("gets one server's latest version by name; a name it does not have is no server, not a failure", async () => {
    expect((await latest("io.github.domdomegg/airtable-mcp-server")).version).toBe("1.7.3");
    expect(await fetchLatestServer(registry.url, "io.github.nobody/nothing")).toBeUndefined();
    expect(registry.requests.at(-1)).toBe("/v0.1/servers/io.github.nobody%2Fnothing/versions/latest");
  });

  it("says in one line that a registry is down, answers an error page, or answers something that is not JSON", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await expect(searchRegistry(`http://127.0.0.1:${port}`, { search: "x" })).rejects.toThrow(
      new RegExp(`^the MCP registry at http://127\\.0\\.0\\.1:${port} cannot be reached \\(connection refused\\)$`),
    );

    const broken = createServer((request, response) => {
      if (request.url?.includes("html")) {
        response.writeHead(502, { "content-type": "text/html" });
        response.end("<html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1>\n<p>nginx</p></body></html>");
      } else response.end("not json");
    });
    await new Promise<void>((resolve) => broken.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(broken.address() as AddressInfo).port}`;
    try {
      await expect(searchRegistry(`${url}/html`, { search: "x" })).rejects.toThrow(
        /^the MCP registry at http:\/\/127\.0\.0\.1:\d+\/html answered HTTP 502 Bad Gateway: 502 Bad Gateway \(an HTML page\)$/,
      );
      await expect(searchRegistry(url, { search: "x" })).rejects.toThrow(/ did not answer with JSON \(not json\)$/);
    } finally {
      broken.closeAllConnections();
      await new Promise<void>((resolve) => broken.close(() => resolve()));
    }
  });

  it("uses the official registry unless the settings name another, and none when they turn it off", () => {
    expect(DEFAULT_REGISTRY_URL).toBe("https://registry.modelcontextprotocol.io");
    expect(registryUrl({})).toBe(DEFAULT_REGISTRY_URL);
    expect(registryUrl({ registry: true })).toBe(DEFAULT_REGISTRY_URL);
    expect(registryUrl({ registry: { url: "https://mcp.example.com/registry" } })).toBe("https://mcp.example.com/registry");
    expect(registryUrl({ registry: false })).toBeUndefined();
  });

  it("shows nothing of a registry's text that could drive the terminal", () => {
    const server = readServerJson({ name: "io.github.x/y", version: "1", description: "Web \u001b[2Jonly\u009b31m" });
    expect(typeof server === "object" && server.description).toBe("Web [2Jonly 31m");
  });
});

describe("an entry as a server of the config", () => {
  it("npm: through npx (our npx path), the package pinned, its fixed arguments; a package serving HTTP is not offered", async () => {
    const server = await latest("io.github.modelcontextprotocol/server-everything");
    const { options, unsupported } = installOptions(server);
    expect(options.map((choice) => choice.label)).toEqual(["npm @modelcontextprotocol/server-everything 2.0.0"]);
    expect(unsupported).toEqual([
      {
        label: "npm @modelcontextprotocol/server-everything 2.0.0",
        reason: "it serves streamable-http on this machine; only stdio packages are supported",
      },
    ]);
    const plan = planInstall(server, options[0]!, "server-everything");
    expect(plan.questions).toEqual([]);
    expect(plan.build(new Map())).toEqual({
      entry: {
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-everything@2.0.0", "stdio"],
        description: "MCP server that exercises all the features of the MCP protocol",
      },
      toSet: [],
      leftOut: [],
    });
  });

  it("a secret environment variable: referenced by its own name, never asked; docker passes it into the container", async () => {
    const server = await latest("io.github.domdomegg/airtable-mcp-server");
    expect(installOptions(server).unsupported.map((choice) => choice.reason)).toEqual(["MCP bundles (.mcpb) are not supported here"]);
    const npm = planInstall(server, option(server, "npm"), "airtable-mcp-server");
    expect(npm.questions).toEqual([]);
    const built = npm.build(new Map());
    expect(built.entry).toMatchObject({
      command: "npx",
      args: ["-y", "airtable-mcp-server@1.7.3"],
      env: { AIRTABLE_API_KEY: "${AIRTABLE_API_KEY}" },
    });
    expect(built.toSet).toEqual([expect.objectContaining({ variable: "AIRTABLE_API_KEY", secret: true, required: true })]);
    expect(built.toSet[0]!.description).toMatch(/^Airtable personal access token/);

    const oci = planInstall(server, option(server, "oci"), "airtable-mcp-server").build(new Map()).entry;
    expect(oci).toMatchObject({
      command: "docker",
      args: ["run", "-i", "--rm", "-e", "AIRTABLE_API_KEY", "docker.io/domdomegg/airtable-mcp-server:1.7.3"],
      env: { AIRTABLE_API_KEY: "${AIRTABLE_API_KEY}" },
    });
  });

  it("oci: runtime arguments that repeat `run -i --rm` are written once; the others are kept in their place", () => {
    const server = doc({
      packages: [
        {
          registryType: "oci",
          identifier: "ghcr.io/example/test:1.0.0",
          transport: { type: "stdio" },
          runtimeArguments: [
            { type: "positional", value: "run" },
            { type: "positional", value: "-i" },
            { type: "named", name: "--rm" },
            { type: "named", name: "--network", value: "host" },
            { type: "named", name: "--interactive", format: "boolean", value: "true" },
          ],
        },
      ],
    });
    expect(planInstall(server, option(server, "oci"), "test").build(new Map()).entry).toMatchObject({
      command: "docker",
      args: ["run", "-i", "--rm", "--network", "host", "ghcr.io/example/test:1.0.0"],
    });
  });

  it("pypi: through uvx with the version pinned; nuget is named as not supported", async () => {
    const pypi = await latest("io.github.domdomegg/time-mcp-pypi");
    expect(planInstall(pypi, option(pypi, "pypi"), "time-mcp-pypi").build(new Map()).entry).toEqual({
      command: "uvx",
      args: ["time-mcp-pypi==1.0.6"],
      description: "Get the current UTC time in RFC 3339 format.",
    });
    expect(installOptions(await latest("io.github.domdomegg/time-mcp-nuget"))).toEqual({
      options: [],
      unsupported: [{ label: "nuget TimeMcpServer 1.0.8", reason: "nuget packages are not supported here (npm, pypi and oci are)" }],
    });
  });

  it("a remote with a secret header: the URL, and the header read from a variable named after the server", async () => {
    const server = await latest("com.apify/apify-mcp-server");
    const plan = planInstall(server, option(server, "remote"), "apify-mcp-server");
    const built = plan.build(new Map());
    expect(built.entry).toEqual({
      type: "http",
      url: "https://mcp.apify.com/",
      headers: { Authorization: "${APIFY_MCP_SERVER_AUTHORIZATION}" },
      description: "Extract data from any website with thousands of scrapers, crawlers, and automations on Apify Store ⚡",
    });
    expect(built.toSet.map((slot) => [slot.variable, slot.label, slot.secret])).toEqual([
      ["APIFY_MCP_SERVER_AUTHORIZATION", "header Authorization", true],
    ]);
    expect(plan.questions).toEqual([]); // a secret is never asked, even with a UI
  });

  it("an optional input is left out, secret or not, and named", () => {
    const server = doc({
      packages: [
        {
          registryType: "npm",
          identifier: "@upstash/context7-mcp",
          version: "1.0.26",
          transport: { type: "stdio" },
          environmentVariables: [
            { name: "CONTEXT7_API_KEY", isSecret: true, isRequired: false, description: "API key for authentication" },
          ],
          packageArguments: [{ type: "named", name: "--port", description: "Port" }],
        },
      ],
    });
    const built = planInstall(server, option(server, "npm"), "context7").build(new Map());
    expect(built.entry).toEqual({ command: "npx", args: ["-y", "@upstash/context7-mcp@1.0.26"] });
    expect(built.toSet).toEqual([]);
    expect(built.leftOut.map((slot) => slot.label)).toEqual(["environment variable CONTEXT7_API_KEY", "option --port"]);
  });

  it("required inputs are asked (a default when left empty), or referenced when nobody answers; placeholders are filled", () => {
    // The 2025-12-11 URL template example of the registry's CHANGELOG, and a named argument and header with placeholders.
    const server = doc({
      remotes: [
        {
          type: "streamable-http",
          url: "https://{tenant_id}.api.example.com/mcp",
          variables: { tenant_id: { description: "Your tenant identifier", isRequired: true } },
          headers: [
            { name: "X-Region", isRequired: true, default: "eu" },
            { name: "Authorization", value: "Bearer {token}", variables: { token: { isRequired: true, isSecret: true } } },
          ],
        },
      ],
    });
    const plan = planInstall(server, option(server, "remote"), "analytics");
    expect(plan.questions.map((slot) => [slot.key, slot.label, slot.default])).toEqual([
      ["url:tenant_id", "{tenant_id} in the URL", undefined],
      ["header:X-Region", "header X-Region", "eu"],
    ]);
    const answered = plan.build(new Map([["url:tenant_id", "us-cell1"]]));
    expect(answered.entry).toMatchObject({
      url: "https://us-cell1.api.example.com/mcp",
      headers: { "X-Region": "eu", Authorization: "Bearer ${ANALYTICS_TOKEN}" },
    });
    expect(answered.toSet.map((slot) => slot.variable)).toEqual(["ANALYTICS_TOKEN"]);
    const unanswered = plan.build(new Map());
    expect(unanswered.entry).toMatchObject({ url: "https://${ANALYTICS_TENANT_ID}.api.example.com/mcp" });
    expect(unanswered.toSet.map((slot) => slot.variable)).toEqual(["ANALYTICS_TENANT_ID", "ANALYTICS_TOKEN"]);
  });

  it("the registry's values are data: nothing in them is substituted or run, and the entry loads back as written", () => {
    const server = doc({
      packages: [
        {
          registryType: "npm",
          identifier: "tricky",
          version: "1.0.0",
          transport: { type: "stdio" },
          packageArguments: [{ type: "positional", value: "${HOME}/x" }],
          environmentVariables: [
            { name: "RUN", value: "!rm -rf ~" },
            { name: "ASKED", isRequired: true },
          ],
        },
      ],
    });
    const plan = planInstall(server, option(server, "npm"), "tricky");
    const { entry } = plan.build(new Map([["env:ASKED", "!echo ${USER}"]]));
    expect(entry).toMatchObject({ args: ["-y", "tricky@1.0.0", "$${HOME}/x"], env: { RUN: "!!rm -rf ~", ASKED: "!!echo $${USER}" } });
    const problems: ConfigProblem[] = [];
    const context = { env: {}, homeDir: "/home/u", cwd: "/p", platform: "linux" as const };
    const options = { file: "f", context, interpolate: true, allowOverride: false, reportUnknownFields: true, commands: "run" as const };
    const parsed = parseServerEntry("tricky", entry, options, problems);
    expect(problems).toEqual([]);
    expect(parsed).toMatchObject({
      kind: "server",
      entry: { args: ["-y", "tricky@1.0.0", "${HOME}/x"], env: { RUN: "!rm -rf ~", ASKED: "!echo ${USER}" } },
    });
    expect(parsed.kind === "server" && parsed.entry.commandValues).toBeUndefined();
  });

  it("names what to install when the runtime is missing, and by default picks the way this machine can run", async () => {
    const server = await latest("io.github.domdomegg/airtable-mcp-server");
    const bin = mkdtempSync(join(tmpdir(), "registry-bin-"));
    try {
      writeFileSync(join(bin, "docker"), "#!/bin/sh\n");
      chmodSync(join(bin, "docker"), 0o755);
      const env = { PATH: bin };
      const { options } = installOptions(server);
      expect(describeMissingRuntime(options[0]!, missingRuntime(options[0]!, env)!)).toBe(
        "npm airtable-mcp-server 1.7.3 runs with npx (npm packages), which is not installed here: install Node.js with npm (https://nodejs.org/en/download)",
      );
      expect(missingRuntime(options[1]!, env)).toBeUndefined();
      expect(defaultOption(options, undefined, env)?.kind).toBe("oci");
      expect(defaultOption(options, "npm", env)?.kind).toBe("npm");
      expect(defaultOption(options, undefined, { PATH: "" })?.kind).toBe("npm"); // none runs: the first, which says what to install
      const pypi = await latest("io.github.domdomegg/time-mcp-pypi");
      const uvx = option(pypi, "pypi");
      expect(describeMissingRuntime(uvx, missingRuntime(uvx, env)!)).toBe(
        "pypi time-mcp-pypi 1.0.6 runs with uvx (PyPI packages), which is not installed here: install uv (https://docs.astral.sh/uv/getting-started/installation/)",
      );
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  });

  it("names the server after the registry name's last part", () => {
    expect(configNameFor("io.github.modelcontextprotocol/server-everything")).toBe("server-everything");
    expect(configNameFor("com.example/My Server.v2")).toBe("My-Server-v2");
  });
});

function doc(fields: Record<string, unknown>): RegistryServer {
  const server = readServerJson({ name: "io.github.example/test", version: "1.0.0", ...fields });
  if (typeof server === "string") throw new Error(server);
  return server;
}

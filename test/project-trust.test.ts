/**
 * Project trust: what an untrusted project's files may do (config.ts), and the decision itself (host/project-trust.ts,
 * config/session-config.ts) with its remembered answers in the agent dir.
 */
import { readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ProjectTrust, type TrustQuestion } from "../host.ts";
import { createConfigSandbox, type ConfigSandbox } from "./config-sandbox.ts";

let sandbox: ConfigSandbox;
beforeEach(() => (sandbox = createConfigSandbox()));
afterEach(() => sandbox.remove());

const server = (name: string) => ({ command: "node", args: [`${name}.js`] });
const names = (config: { servers: Array<{ name: string; enabled?: boolean }> }) =>
  config.servers.map((entry) => `${entry.name}${entry.enabled === false ? " (off)" : ""}`);

function writeProject(): void {
  sandbox.write("home/.pi/agent/mcp.json", { mcpServers: { mine: server("mine"), shared: server("shared") } });
  sandbox.write("project/.pi/mcp.json", { mcpServers: { repo: server("repo"), shared: { enabled: false } }, settings: { idleTimeout: 1 } });
  sandbox.write("project/.mcp.json", { mcpServers: { other: server("other"), mine: { lifecycle: "eager" } } });
}

describe("loading an untrusted project's config", () => {
  it("leaves out its servers, overrides (except switching a server off), settings and problems, and notes what it holds", () => {
    writeProject();
    sandbox.write("project/.cursor/mcp.json", "{ broken");
    const untrusted = sandbox.load({ projectTrusted: false });
    expect(names(untrusted)).toEqual(["mine", "shared (off)"]);
    expect(untrusted.servers.find((entry) => entry.name === "mine")!.lifecycle).toBeUndefined();
    expect(untrusted.settings).toEqual({});
    expect(untrusted.problems).toEqual([]);
    expect(untrusted.project).toEqual({
      trusted: false,
      files: [path.join(sandbox.project, ".pi/mcp.json"), path.join(sandbox.project, ".mcp.json")],
      servers: ["repo", "other", "mine"],
    });

    const trusted = sandbox.load({ projectTrusted: true });
    expect(names(trusted)).toEqual(["repo", "other", "mine", "shared (off)"]);
    expect(trusted.settings).toEqual({ idleTimeout: 1 });
    expect(trusted.project?.trusted).toBe(true);
  });

  it("a project file that only switches servers off needs no trust", () => {
    sandbox.write("home/.pi/agent/mcp.json", { mcpServers: { mine: server("mine") } });
    sandbox.write("project/.pi/mcp.json", { mcpServers: { mine: { enabled: false } } });
    const config = sandbox.load({ projectTrusted: false });
    expect(names(config)).toEqual(["mine (off)"]);
    expect(config.project).toBeUndefined();
  });

  it("an imported host's project file (.cursor/mcp.json) waits for trust; its user file does not", () => {
    sandbox.write("home/.pi/agent/mcp.json", { imports: ["cursor"] });
    sandbox.write("home/.cursor/mcp.json", { mcpServers: { cursorUser: server("u") } });
    const projectFile = sandbox.write("project/.cursor/mcp.json", { mcpServers: { cursorRepo: server("r") } });
    const untrusted = sandbox.load({ projectTrusted: false });
    expect(names(untrusted)).toEqual(["cursorUser"]);
    expect(untrusted.project).toEqual({ trusted: false, files: [projectFile], servers: ["cursorRepo"] });
    expect(names(sandbox.load({ projectTrusted: true }))).toEqual(["cursorRepo", "cursorUser"]);
  });

  it("a project cannot trust itself: settings.trustProjectServers is read from user files only", () => {
    const projectFile = sandbox.write("project/.mcp.json", {
      mcpServers: { repo: server("repo") },
      settings: { trustProjectServers: true },
    });
    const config = sandbox.load({ projectTrusted: true });
    expect(config.settings.trustProjectServers).toBeUndefined();
    expect(config.problems.map((problem) => problem.message)).toEqual([
      `${projectFile}: "settings.trustProjectServers": is read only from your user files (a project cannot trust itself); ignored`,
    ]);
    sandbox.write("home/.pi/agent/mcp.json", { settings: { trustProjectServers: true } });
    expect(sandbox.load({ projectTrusted: false }).settings.trustProjectServers).toBe(true);
  });
});

describe("the trust decision", () => {
  const question = (answer: string | undefined) => {
    const asked: string[] = [];
    const ui: TrustQuestion = {
      select: async (title) => {
        asked.push(title);
        return answer;
      },
    };
    return { ui, asked };
  };

  it("follows Pi where Pi decides (1.x), then the flag, then the user's setting; otherwise only a remembered answer", () => {
    writeProject();
    const trust = new ProjectTrust(sandbox.agentDir);
    const config = sandbox.load({ projectTrusted: false });
    expect(trust.decide(sandbox.project, config, false, true)).toEqual({ trusted: false, by: "host" });
    expect(trust.decide(sandbox.project, config, true, false)).toEqual({ trusted: true, by: "host" });
    expect(trust.decide(sandbox.project, config, undefined, true)).toEqual({ trusted: true, by: "flag" });
    expect(trust.decide(sandbox.project, { ...config, settings: { trustProjectServers: true } }, undefined, false)).toEqual({
      trusted: true,
      by: "setting",
    });
    expect(trust.decide(sandbox.project, config, undefined, false)).toBeUndefined();
  });

  it("remembers Yes and No for the files as they are (0600 store); a changed file or a new one is asked about again", async () => {
    writeProject();
    const trust = new ProjectTrust(sandbox.agentDir);
    const config = sandbox.load({ projectTrusted: false });
    const yes = question("Yes, use them");
    expect(await trust.ask(yes.ui, sandbox.project, config.project!, 1000)).toEqual({ trusted: true, by: "answered" });
    expect(yes.asked[0]).toContain("defines servers: repo, other, mine");
    expect(yes.asked[0]).toContain("(.pi/mcp.json, .mcp.json)");
    const store = path.join(sandbox.agentDir, "mcp-trust.json");
    expect(statSync(store).mode & 0o777).toBe(0o600);
    expect(Object.keys(JSON.parse(readFileSync(store, "utf8")).projects)).toEqual([sandbox.project]);
    expect(new ProjectTrust(sandbox.agentDir).decide(sandbox.project, config, undefined, false)).toEqual({
      trusted: true,
      by: "remembered",
    });

    writeFileSync(path.join(sandbox.project, ".mcp.json"), JSON.stringify({ mcpServers: { other: server("changed") } }));
    const changed = sandbox.load({ projectTrusted: false });
    expect(trust.decide(sandbox.project, changed, undefined, false)).toBeUndefined();
    expect(await trust.ask(question("No").ui, sandbox.project, changed.project!, 1000)).toEqual({ trusted: false, by: "answered" });
    expect(trust.decide(sandbox.project, changed, undefined, false)).toEqual({ trusted: false, by: "remembered" });

    sandbox.write("project/.cursor/mcp.json", { mcpServers: { x: server("x") } });
    sandbox.write("home/.pi/agent/mcp.json", { mcpServers: { mine: server("mine") }, imports: ["cursor"] });
    expect(trust.decide(sandbox.project, sandbox.load({ projectTrusted: false }), undefined, false)).toBeUndefined();
  });

  it("a dismissed question is not remembered; a damaged store trusts nothing", async () => {
    writeProject();
    const trust = new ProjectTrust(sandbox.agentDir);
    const config = sandbox.load({ projectTrusted: false });
    expect(await trust.ask(question(undefined).ui, sandbox.project, config.project!, 1000)).toEqual({ trusted: false, by: "unanswered" });
    expect(trust.decide(sandbox.project, config, undefined, false)).toBeUndefined();
    sandbox.write("home/.pi/agent/mcp-trust.json", { version: 1, projects: { [sandbox.project]: { trusted: "yes", files: {} } } });
    expect(trust.decide(sandbox.project, config, undefined, false)).toBeUndefined();
    sandbox.write("home/.pi/agent/mcp-trust.json", "{ not json");
    expect(trust.decide(sandbox.project, config, undefined, false)).toBeUndefined();
  });

  it("says why the project's servers are off and how to allow them", () => {
    writeProject();
    const trust = new ProjectTrust(sandbox.agentDir);
    const config = sandbox.load({ projectTrusted: false });
    const explain = (by: Parameters<ProjectTrust["explain"]>[0]["by"]) => trust.explain({ trusted: false, by }, config)?.message;
    const head = `Project MCP config not used (${path.join(sandbox.project, ".pi/mcp.json")}, ${path.join(sandbox.project, ".mcp.json")}; servers: repo, other, mine)`;
    expect(explain("no-ui")).toBe(
      `${head}: the project is not trusted and there is no UI to ask. To use them: start Pi with --mcp-trust-project, or set "settings": { "trustProjectServers": true } in ${config.userFile} (every project).`,
    );
    expect(explain("host")).toContain(
      "Pi does not trust this project. To use it: trust the project (/trust, then restart Pi), or start Pi with --approve",
    );
    expect(explain("remembered")).toContain(
      `you answered No for these files as they are now. To use them: start Pi with --mcp-trust-project, or remove the project from ${path.join(sandbox.agentDir, "mcp-trust.json")}`,
    );
    expect(explain("asking")).toBeUndefined();
    expect(trust.explain({ trusted: true, by: "flag" }, config)).toBeUndefined();
  });
});

/**
 * Security end to end in the real Pi: secrets from the config never reach what the adapter shows, says, logs or
 * stores; substitution never runs a command; names from the config or from a server never become paths.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test, vi } from "vitest";
import { currentHost } from "./helpers/hosts.ts";
import { FAULTY_SERVER, callLoaded, faultHarness, faulty, search } from "./helpers/fault-setup.ts";
import type { PiSession } from "./helpers/pi-session.ts";
import { searchablePath } from "./helpers/searchable-path.ts";
import { startHttpFixture } from "./server-manager-helpers.ts";

const host = currentHost();
const harness = faultHarness();

const SECRETS = {
  token: "SECRET-bearer-from-env-71",
  wrongToken: "SECRET-wrong-bearer-72",
  header: "SECRET-header-73",
  query: "SECRET-query-74",
  password: "SECRET-password-75",
  interpolated: "SECRET-interpolated-76",
  env: "SECRET-env-77",
  arg: "SECRET-arg-78",
};

/** Everything Pi's user and model saw from the session: notifications, status, command output, tool results. */
function sessionText(pi: PiSession): string {
  const ui = pi.ui.map((entry) => (entry.kind === "notify" ? entry.message : entry.kind === "status" ? (entry.text ?? "") : ""));
  return [...ui, ...pi.toolResults.map((result) => `${result.text}\n${JSON.stringify(result.details)}`)].join("\n");
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
}

describe(`security on Pi ${host.version}`, () => {
  test("bearer tokens, headers, URL credentials, env values and arguments appear in no notification, status, result, log or file", async () => {
    const http = await startHttpFixture({ FIXTURE_TOKEN: SECRETS.token });
    harness.onCleanup(() => http.stop());
    harness.env("PI_MCP_FAULTS_TOKEN", SECRETS.token);
    harness.env("PI_MCP_FAULTS_WRONG_TOKEN", SECRETS.interpolated);
    const withPassword = http.url("/status/500").replace("http://", `http://someone:${SECRETS.password}@`);
    const dirs = await harness.dirs(
      {
        authed: {
          url: `${http.url("/auth/mcp")}?apikey=${SECRETS.query}`,
          bearerTokenEnv: "PI_MCP_FAULTS_TOKEN",
          headers: { "X-Trace": SECRETS.header },
        },
        rejected: { url: http.url("/auth/mcp"), bearerToken: SECRETS.wrongToken, lifecycle: "eager" },
        interpolated: { url: http.url("/auth/mcp"), headers: { Authorization: "Bearer ${PI_MCP_FAULTS_WRONG_TOKEN}" }, lifecycle: "eager" },
        userinfo: { url: withPassword, lifecycle: "eager" },
        local: faulty({ API_TOKEN: SECRETS.env }, { args: [FAULTY_SERVER, "--token", SECRETS.arg] }),
        missing: {
          command: "pi-mcp-faults-no-such-command",
          args: ["--password", SECRETS.arg],
          env: { API_TOKEN: SECRETS.env, PATH: searchablePath() },
          lifecycle: "eager",
        },
      },
      { captureStats: true },
    );
    const written: string[] = [];
    for (const stream of [process.stdout, process.stderr]) {
      const original = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
      const spy = vi.spyOn(stream, "write").mockImplementation((chunk: unknown, ...rest: unknown[]) => {
        written.push(String(chunk));
        return original(chunk, ...rest);
      });
      harness.onCleanup(() => spy.mockRestore());
    }
    const pi = await harness.session(dirs, [
      search("select:authed__echo,local__crash"),
      callLoaded("authed__echo", { message: "over http" }),
      callLoaded("local__crash"),
      "done",
    ]);
    await pi.prompt("use both");
    expect(pi.toolResults.map((result) => result.isError)).toEqual([false, false, true]);
    for (const line of [
      "/mcp status",
      "/mcp tools",
      ...["authed", "rejected", "interpolated", "userinfo", "local", "missing"].map((name) => `/mcp-auth ${name}`),
    ]) {
      await pi.command(line);
    }
    await pi.dispose();

    const shown = sessionText(pi);
    expect(shown).toContain('MCP server "rejected" needs authentication');
    expect(shown).toContain('MCP server "interpolated" needs authentication');
    expect(shown).toContain('MCP server "userinfo" failed to connect: "url" contains a user name or password (user:password@host)');
    expect(shown).toContain("command not found: pi-mcp-faults-no-such-command");
    const files = await filesUnder(dirs.agentDir);
    // The adapter's files (Pi 0.87 adds its auth.json; it is searched for secrets too).
    const names = files.map((file) => file.slice(dirs.agentDir.length + 1));
    expect(names.filter((name) => name.startsWith("mcp")).sort()).toEqual(["mcp-cache.json", "mcp-stats.json", "mcp.json"]);
    const stored = await Promise.all(files.filter((file) => !file.endsWith("mcp.json")).map((file) => readFile(file, "utf8")));
    for (const [name, secret] of Object.entries(SECRETS)) {
      expect.soft(shown, `${name} shown`).not.toContain(secret);
      expect.soft(written.join(""), `${name} written to stdout/stderr`).not.toContain(secret);
      for (const text of stored) expect.soft(text, `${name} stored`).not.toContain(secret);
    }
    for (const file of ["mcp-cache.json", "mcp-stats.json"]) expect((await stat(join(dirs.agentDir, file))).mode & 0o777).toBe(0o600);
  });

  test("substitution never runs a command; server and tool names never become paths", async () => {
    const base = await mkdtemp(join(tmpdir(), "mcp-faults-paths-"));
    harness.onCleanup(() => rm(base, { recursive: true, force: true }));
    const agentDir = join(base, "agent");
    const cwd = join(base, "project");
    await Promise.all([mkdir(agentDir), mkdir(cwd)]);
    const commands = ["$(touch pwned-1)", "`touch pwned-2`", "!touch pwned-3", "; touch pwned-4", "$$(touch pwned-5)"];
    const servers = {
      "../../escape": faulty({ FAULT_ODD_TOOLS: "1" }, { cwd: "." }),
      // "!!" is a literal "!" (a single "!" in env or headers of the user's own file is a command: builtin-config tests).
      literal: faulty({ SUBSHELL: "$(touch pwned-6)", BANG: "!!touch pwned-7" }, { args: [FAULTY_SERVER, ...commands], cwd: "." }),
      unresolved: { command: "sh", args: ["-c", "${$(touch pwned-8)}"], cwd: "." },
    };
    await writeFile(join(agentDir, "mcp.json"), JSON.stringify({ mcpServers: servers }));
    const escapeTool = "_escape__dots_and_slashes_here";
    const pi = await harness.session({ agentDir, cwd, cleanup: async () => {} }, [
      search(`select:literal__report,${escapeTool}`),
      callLoaded("literal__report", { names: ["SUBSHELL", "BANG"] }),
      callLoaded(escapeTool),
      "done",
    ]);
    await pi.prompt("report");
    await pi.dispose();

    const report = JSON.parse(pi.toolResults[1]!.text) as { argv: string[]; env: Record<string, string> };
    expect(report.argv).toEqual(commands);
    expect(report.env).toEqual({ SUBSHELL: "$(touch pwned-6)", BANG: "!touch pwned-7" });
    expect(pi.toolResults[2]).toMatchObject({ isError: false, text: "dots.and/slashes here called" });
    expect(pi.ui).toContainEqual({ kind: "notify", level: "error", message: expect.stringMatching(/server "unresolved": "args\[1\]": /) });
    // Nothing ran, and nothing was written anywhere but the agent dir's own files.
    expect(await readdir(cwd)).toEqual([]);
    expect((await readdir(base)).sort()).toEqual(["agent", "project"]);
    expect((await readdir(agentDir)).filter((name) => name !== "auth.json").sort()).toEqual(["mcp-cache.json", "mcp.json"]);
    const cache = JSON.parse(await readFile(join(agentDir, "mcp-cache.json"), "utf8")) as { servers: Record<string, unknown> };
    expect(Object.keys(cache.servers).sort()).toEqual(["../../escape", "literal"]);
  });
});

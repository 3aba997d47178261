/**
 * Skills a server publishes (MCP Skills extension) offered to Pi through the adapter, on every test host, with a
 * server on the official SDK v2 (test/fixtures/servers/skills-server.mjs: two skills, one with references/FORMS.md): the skills in the system prompt with no server started; the model reads SKILL.md and the
 * extra file through Pi's read, which starts the server lazily; a SKILL.md whose digest does not match never reaches
 * the model and the user is told; an untrusted project's server offers no skill (even with its skills in the cache).
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { ENTRY, faultHarness, notifications, waitForStatus } from "./helpers/fault-setup.ts";
import type { ModelRequest } from "./helpers/faux-script.ts";
import { currentHost } from "./helpers/hosts.ts";
import { mcpDirs, trustProject } from "./helpers/mcp-setup.ts";
import { startSession } from "./helpers/pi-session.ts";
import { SKILLS_SERVER, skillReads, skillsServerEnv, skillsServerStarts } from "./helpers/skills-fixture.ts";

const host = currentHost();
const harness = faultHarness();

/** The fixture as a config entry, logging its reads and starts in the project folder. */
const docsServer = (switches: { tamper?: string } = {}) => ({
  command: process.execPath,
  args: [SKILLS_SERVER],
  env: skillsServerEnv("${workspaceFolder}", switches),
});

function location(request: ModelRequest, name: string): string {
  const match = new RegExp(`<name>${name}</name>\\s*<description>[^<]*</description>\\s*<location>([^<]+)</location>`).exec(
    request.systemPrompt,
  );
  if (!match) throw new Error(`no skill ${name} in the system prompt`);
  return match[1]!;
}
const readCall = (path: string) => ({ toolCalls: [{ name: "read", arguments: { path } }] });

/** One session lists the server (it is lazy: started, listed, ended) and writes the cache; then it quits. */
async function warmCache(dirs: { agentDir: string; cwd: string }) {
  const warm = await harness.session(dirs as never);
  await waitForStatus(warm, /docs: [^\n]*\d+ tools? \(listed/);
  await warm.dispose();
}

describe(`MCP skills through the adapter on Pi ${host.version}`, () => {
  test("listed from the cache with no server started; the model's reads of SKILL.md and FORMS.md start it and get the verified text", async () => {
    const dirs = await harness.dirs({ docs: docsServer() });
    await warmCache(dirs);
    const startsBefore = skillsServerStarts(dirs.cwd);
    let manifest = "";
    const pi = await harness.session(dirs, [
      (request) => {
        manifest = location(request, "pdf-tools");
        return readCall(manifest);
      },
      () => readCall(manifest.replace(/SKILL\.md$/, "references/FORMS.md")),
      "Done.",
    ]);
    expect(skillsServerStarts(dirs.cwd)).toBe(startsBefore); // discovery started nothing
    expect(skillReads(dirs.cwd)).toEqual([]); // and read no file (the warm-up's listing neither)
    await pi.prompt("Fill in the PDF form.");
    expect(pi.requests[0]!.systemPrompt).toContain("<name>release-notes</name>");
    expect(pi.toolResults[0]!.text).toContain("PDF-TOOLS-BODY");
    expect(pi.toolResults[0]!.text).toMatch(/^\[Skill "pdf-tools" from the MCP server "docs"/);
    expect(pi.toolResults[1]!.text).toContain("FORMS-BODY");
    expect(skillReads(dirs.cwd)).toEqual(["skill://pdf-tools/SKILL.md", "skill://pdf-tools/references/FORMS.md"]);
    expect(skillsServerStarts(dirs.cwd)).toBeGreaterThan(startsBefore);
    expect((await pi.command("/mcp status")).text).toContain("skills: pdf-tools, release-notes");
  });

  test("a SKILL.md whose digest does not match never reaches the model; the user is told in one line", async () => {
    const dirs = await harness.dirs({ docs: docsServer({ tamper: "pdf-tools/SKILL.md" }) });
    await warmCache(dirs);
    const pi = await harness.session(dirs, [(request) => readCall(location(request, "pdf-tools")), "I cannot use it."]);
    await pi.prompt("Fill in the PDF form.");
    expect(pi.toolResults[0]!.isError).toBe(true);
    expect(JSON.stringify(pi.requests.map((request) => request.messages))).not.toContain("PDF-TOOLS-BODY");
    expect(notifications(pi)).toContainEqual({
      level: "warning",
      message:
        'MCP: skill "pdf-tools" of server "docs" refused: SKILL.md failed verification: its content does not match the digest the server listed.',
    });
  });

  test("an untrusted project's server offers no skill, even with its skills in the cache", async () => {
    const dirs = await mcpDirs({ mcpServers: {} });
    harness.onCleanup(dirs.cleanup);
    await mkdir(join(dirs.cwd, ".pi"), { recursive: true });
    await writeFile(join(dirs.cwd, ".mcp.json"), JSON.stringify({ mcpServers: { docs: docsServer() } }));
    await trustProject(dirs);
    await warmCache(dirs); // trusted: listed and cached, skills included
    await writeFile(join(dirs.agentDir, "mcp-trust.json"), "{}"); // the answer forgotten: nobody to ask in this session
    const untrusted = await startSession({ extensions: [ENTRY], agentDir: dirs.agentDir, cwd: dirs.cwd, script: ["ok"] });
    harness.onCleanup(() => untrusted.dispose());
    await untrusted.prompt("hi");
    expect(untrusted.requests[0]!.systemPrompt).not.toContain("pdf-tools");
  });
});

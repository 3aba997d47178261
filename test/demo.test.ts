/** `npm run demo` keeps working: the scripted session finds and calls tools of the example servers. */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { expect, test } from "vitest";
import { REPO_ROOT } from "./helpers/hosts.ts";

test("the demo plays discovery → call with the example servers and ends cleanly", async () => {
  const { stdout } = await promisify(execFile)(process.execPath, ["node_modules/jiti/lib/jiti-cli.mjs", "demo/demo.ts"], {
    cwd: REPO_ROOT,
    timeout: 60_000,
  });
  expect(stdout).toContain("model calls ToolSearch");
  expect(stdout).toContain('"entityType":"person"');
  expect(stdout).toContain("answered: Echo: hello from the demo");
  expect(stdout).toMatch(/✓ everything: connected/);
});

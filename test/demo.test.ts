/** `npm run demo` keeps working, run after run: the scripted session finds and calls tools of the example servers. */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { expect, test } from "vitest";
import { REPO_ROOT } from "./helpers/hosts.ts";

const runDemo = () =>
  promisify(execFile)(process.execPath, ["node_modules/jiti/lib/jiti-cli.mjs", "demo/demo.ts"], { cwd: REPO_ROOT, timeout: 60_000 });

test("the demo plays discovery → call with the example servers and ends cleanly, the same on a second run", async () => {
  for (const run of [1, 2]) {
    const { stdout } = await runDemo();
    expect(stdout, `run ${run}`).toContain("model calls ToolSearch");
    // The memory server created the entity (an earlier run's graph would make it answer `[]`).
    expect(stdout, `run ${run}`).toMatch(/answered: \[ \{ "name": "Ada Lovelace", "entityType": "person"/);
    expect(stdout, `run ${run}`).toContain("answered: Echo: hello from the demo");
    expect(stdout, `run ${run}`).toMatch(/✓ everything: connected/);
  }
});

import { defineConfig } from "vitest/config";

/**
 * `npm test` runs vitest three times, once per Pi host, because each host runs in-process on its own Node:
 * Node 20 runs every test with Pi 0.73.1; Node 22 (`PI_TEST_HOST=0.87.1`, then `=1.5.2`) runs the end-to-end tests
 * (`*.e2e.test.ts`, which use test/helpers/pi-session.ts and pi-print.ts) again with Pi 0.87.1 and with Pi 1.5.2.
 */
const host = process.env.PI_TEST_HOST ?? "0.73.1";

/** End-to-end files that watch what Node loads in their own process: each needs a process of its own. */
const NEEDS_OWN_PROCESS = ["test/connection-preload.e2e.test.ts"];
const include = host === "0.73.1" ? ["test/**/*.test.ts"] : ["test/**/*.e2e.test.ts"];

export default defineConfig({
  test: {
    // Tests start real server processes and real Pi sessions: give them room on a 2-core machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    maxWorkers: 2,
    projects: [
      // One worker process runs many files: each file no longer pays for loading Pi's SDK and the MCP SDK again
      // (with isolation that was most of a short e2e file's time). Files clean up what they change (env, timers,
      // mocks, processes); a server or timer a file leaves behind is a leak the hygiene tests are there to catch.
      { extends: true, test: { name: "shared", include, exclude: NEEDS_OWN_PROCESS, isolate: false } },
      { extends: true, test: { name: "own-process", include: NEEDS_OWN_PROCESS, isolate: true } },
    ],
  },
});

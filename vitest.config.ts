import { defineConfig } from "vitest/config";

/**
 * `npm test` runs vitest three times, once per Pi host, because each host runs in-process on its own Node:
 * Node 20 runs every test with Pi 0.73.1; Node 22 (`PI_TEST_HOST=0.87.1`, then `=1.5.2`) runs the end-to-end tests
 * (`*.e2e.test.ts`, which use test/helpers/pi-session.ts and pi-print.ts) again with Pi 0.87.1 and with Pi 1.5.2.
 */
const host = process.env.PI_TEST_HOST ?? "0.73.1";

export default defineConfig({
  test: {
    include: host === "0.73.1" ? ["test/**/*.test.ts"] : ["test/**/*.e2e.test.ts"],
    // Tests start real server processes and real Pi sessions: give them room on a 2-core machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    maxWorkers: 2,
  },
});

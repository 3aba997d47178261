import { defineConfig } from "vitest/config";

/**
 * `npm test` runs vitest once per Pi host, because each host runs in-process on its own Node: Node 20 runs every
 * test with Pi 0.73.1; Node 22 runs the end-to-end tests (`*.e2e.test.ts`, which use test/helpers/pi-session.ts and
 * pi-print.ts) again with Pi 0.87.1 and with Pi 1.6.0 (`PI_TEST_HOST`), and a few of them with Pi 1.5.2.
 */
const host = process.env.PI_TEST_HOST ?? "0.73.1";

/**
 * Pi 1.5.2, the 1.x release before the one tested in full: the files most tied to what 1.x does differently (its SDK
 * and CLI, its codemode, the built-in MCP's fields, its project trust in print mode and in the TUI, resume, fork and
 * /reload), so users who have not updated yet stay covered. All of them on 1.5.2 cost about a minute; every e2e file
 * would cost about five (as long as 1.6.0's run), past the ~20 minutes `npm test` may take on a 2-core machine.
 */
const PREVIOUS_1X_FILES = [
  "test/hosts.e2e.test.ts",
  "test/hosts-print.e2e.test.ts",
  "test/codemode.e2e.test.ts",
  "test/script-tool.e2e.test.ts",
  "test/builtin-config.e2e.test.ts",
  "test/project-trust.e2e.test.ts",
  "test/project-trust-tui.e2e.test.ts",
  "test/session-branches.e2e.test.ts",
];

/** End-to-end files that watch what Node loads in their own process: each needs a process of its own. */
const NEEDS_OWN_PROCESS = ["test/connection-preload.e2e.test.ts"];
const include = host === "0.73.1" ? ["test/**/*.test.ts"] : host === "1.5.2" ? PREVIOUS_1X_FILES : ["test/**/*.e2e.test.ts"];
const ownProcess = host === "1.5.2" ? [] : NEEDS_OWN_PROCESS; // none of them is in 1.5.2's few

export default defineConfig({
  test: {
    // Tests start real server processes and real Pi sessions: give them room on a 2-core machine. A bound on a hang,
    // not a timed assertion: a test of three Pi sessions takes 25 s here alone and over 60 s with two busy loops.
    testTimeout: 120_000,
    hookTimeout: 60_000,
    pool: "forks",
    setupFiles: ["test/helpers/leftover-processes.ts"],
    maxWorkers: 2,
    projects: [
      // One worker process runs many files: each file no longer pays for loading Pi's SDK and the MCP SDK again
      // (with isolation that was most of a short e2e file's time). Files clean up what they change (env, timers,
      // mocks, processes); a server or timer a file leaves behind is a leak the hygiene tests are there to catch.
      { extends: true, test: { name: "shared", include, exclude: NEEDS_OWN_PROCESS, isolate: false } },
      { extends: true, test: { name: "own-process", include: ownProcess, isolate: true } },
    ],
  },
});

/**
 * The adapter as it was before the connection layer moved to the official SDK v2: the last commit entirely on
 * `@modelcontextprotocol/sdk` v1, extracted from this clone's history into a temporary directory for the length of
 * a bench, so that "before" and "after" are measured in the same run, on the same machine load.
 *
 * `git archive` rather than `git worktree add`: nothing is registered in the clone's git metadata, so a bench that is
 * killed leaves only a directory in the temp dir. The checkout gets this clone's node_modules (a symlink): v1 is
 * still installed (`@modelcontextprotocol/sdk` 1.32.2, a dev dependency for the 2025-era test servers), and the Pi
 * hosts are the same packages the old commit was tested on. A clone without that commit (shallow) cannot measure
 * "before": the bench says so and measures the rest.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT } from "../test/helpers/hosts.ts";

/** `0a811fc`: the last commit on SDK v1 (the move's code is 9421e8e; da8a322 added the v2 dependencies). */
export const BEFORE_MOVE_COMMIT = "0a811fc98909b006dc3ca557aae7cfe1364e665f";
export const BEFORE_MOVE_LABEL = `before the move (${BEFORE_MOVE_COMMIT.slice(0, 7)}, SDK v1)`;

export interface BeforeMoveCheckout {
  root: string;
  cleanup(): void;
}

/**
 * Extracts the commit into a fresh temp directory. When this clone cannot, says why in the section's output (the
 * bench then measures only "after") and returns undefined.
 */
export function checkoutBeforeMove(): BeforeMoveCheckout | undefined {
  const root = mkdtempSync(join(tmpdir(), "bench-before-move-"));
  const cleanup = () => rmSync(root, { recursive: true, force: true });
  try {
    const archive = execFileSync("git", ["archive", "--format=tar", BEFORE_MOVE_COMMIT], {
      cwd: REPO_ROOT,
      maxBuffer: 512 * 2 ** 20,
      stdio: ["ignore", "pipe", "pipe"],
    });
    execFileSync("tar", ["-x", "-C", root], { input: archive });
    symlinkSync(join(REPO_ROOT, "node_modules"), join(root, "node_modules"), "dir");
    return { root, cleanup };
  } catch (error) {
    cleanup();
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
    console.log(
      `**Before the move: not measured**: cannot check out ${BEFORE_MOVE_COMMIT.slice(0, 7)} (a shallow clone?): ` +
        `${stderr || (error as Error).message}\n`,
    );
    return undefined;
  }
}

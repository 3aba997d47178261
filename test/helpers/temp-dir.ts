import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";

/** A new empty directory for each test of the enclosing `describe` (handed to `use`), removed after the test. */
export function withTempDir(prefix: string, use: (dir: string) => void): void {
  let dir = "";
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), prefix));
    use(dir);
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));
}

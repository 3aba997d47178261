// The lease on work one process of several does (util/lease-file.ts): taken once, stale when its holder died or its
// time ran out, released only by its holder.
import { spawnSync } from "node:child_process";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { isLeaseHeld, tryLease } from "../util/lease-file.ts";
import { tempDir } from "./server-manager-helpers.ts";

let dir: ReturnType<typeof tempDir>;
let lease: string;
beforeEach(() => {
  dir = tempDir();
  lease = join(dir.path, "leases", "work.json");
});
afterEach(() => dir.remove());

/** The pid of a process that has ended. */
function deadPid(): number {
  return Number(spawnSync(process.execPath, ["-e", "console.log(process.pid)"], { encoding: "utf8" }).stdout.trim());
}

it("is taken by the first asker; the next is told who holds it; once released it is free again", async () => {
  const first = await tryLease(lease, 10_000);
  expect(first.held).toBe(true);
  const second = await tryLease(lease, 10_000);
  expect(second).toEqual({ held: false, holder: { pid: process.pid, until: expect.any(Number) } });
  expect(await isLeaseHeld(lease)).toBe(true);
  if (first.held) await first.release();
  expect(await isLeaseHeld(lease)).toBe(false);
  const again = await tryLease(lease, 10_000);
  expect(again.held).toBe(true);
  expect(readdirSync(join(dir.path, "leases"))).toEqual(["work.json"]); // no temp file left
  if (again.held) await again.release();
  expect(readdirSync(dir.path)).toEqual([]); // the empty directory goes too
});

it.each([
  ["its holder died", () => ({ pid: deadPid(), until: Date.now() + 60_000 })],
  ["its time ran out", () => ({ pid: process.pid, until: Date.now() - 1 })],
  ["it is not a lease", () => "{ half"],
])("is taken over when %s", async (_label, content) => {
  await tryLease(lease, 10_000); // creates the directory
  const value = content();
  writeFileSync(lease, typeof value === "string" ? value : JSON.stringify(value));
  expect(await isLeaseHeld(lease)).toBe(false);
  expect((await tryLease(lease, 10_000)).held).toBe(true);
});

it("a holder whose lease ran out and was taken over does not release the new holder's", async () => {
  const stale = await tryLease(lease, 1);
  await new Promise((resolve) => setTimeout(resolve, 5));
  const taken = await tryLease(lease, 10_000);
  expect(taken.held).toBe(true);
  if (stale.held) await stale.release();
  expect(await isLeaseHeld(lease)).toBe(true);
});

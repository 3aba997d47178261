/**
 * Ending a server together with every process it started.
 *
 * A server launched through `npx`, `sh -c` or `uvx` is a small tree (npm → sh → node); killing only the direct
 * child leaves the real server running. On POSIX each stdio server is started in a process group of its own
 * (connection/stdio-transport.ts): its children stay in the group after the server exits or crashes, and what it starts while
 * it is being stopped joins it, so the group is signalled too. The descendants are also read from the OS process
 * table while the root is still alive, for a child that left the group (a daemon, a browser with a session of its
 * own): once the root exits they are re-parented and can no longer be told apart from anyone else's processes.
 */
import { execFile } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { closeSync, openSync, readFileSync, readSync } from "node:fs";

const IS_WINDOWS = process.platform === "win32";
const POLL_INTERVAL_MS = 50;

export interface StopProcessTreeOptions {
  /** Asks the root to exit on its own (e.g. closes its stdin); called once the tree is recorded. */
  requestExit?: () => void;
  /** How long the tree may take to exit after `requestExit` before SIGTERM. */
  voluntaryExitMs?: number;
  /** How long SIGTERM gets before SIGKILL. */
  terminateGraceMs?: number;
  /** POSIX: `rootPid` leads a process group of its own; its members are ended too, even after the root exited. */
  processGroup?: boolean;
}

/**
 * Ends `rootPid` and all its descendants and resolves once they are gone (or SIGKILL has been sent).
 * POSIX: record the tree, `requestExit`, wait, SIGTERM, wait, SIGKILL the rest (including anything the survivors
 * started meanwhile). Windows has no SIGTERM: `taskkill /T /F` walks the tree itself, so it must run while the
 * root is alive, before `requestExit`.
 */
export async function stopProcessTree(rootPid: number, options: StopProcessTreeOptions = {}): Promise<void> {
  const { requestExit, voluntaryExitMs = 500, terminateGraceMs = 2_000 } = options;
  if (IS_WINDOWS) {
    await taskkillTree(rootPid);
    requestExit?.();
    return;
  }
  const group = options.processGroup ? rootPid : undefined;
  const tree = await listProcessTree(rootPid);
  requestExit?.();
  let survivors = await waitForExit(tree, voluntaryExitMs, group);
  if (allGone(survivors, group)) return;
  signalAll(survivors, "SIGTERM", group);
  survivors = await waitForExit(survivors, terminateGraceMs, group);
  if (allGone(survivors, group)) return;
  const lateChildren = await Promise.all(survivors.map((pid) => listProcessTree(pid)));
  const remaining = [...new Set(lateChildren.flat())];
  signalAll(remaining, "SIGKILL", group);
  await waitForExit(remaining, terminateGraceMs, group);
}

/** SIGKILL to a whole process group, at once (an exit hook, where nothing asynchronous runs any more). */
export function killProcessGroupNow(groupId: number): void {
  signalGroup(groupId, "SIGKILL");
}

/** `rootPid` followed by all its descendants (breadth first); just `[rootPid]` when the table cannot be read. */
export async function listProcessTree(rootPid: number): Promise<number[]> {
  const parents = await readParentTable().catch(() => new Map<number, number>());
  const children = new Map<number, number[]>();
  for (const [pid, ppid] of parents) {
    const list = children.get(ppid);
    if (list) list.push(pid);
    else children.set(ppid, [pid]);
  }
  const tree = new Set([rootPid]);
  for (const pid of tree) for (const child of children.get(pid) ?? []) tree.add(child);
  return [...tree];
}

/** Alive and not a zombie: a zombie has exited and only waits for its parent to reap it. */
export function isProcessAlive(pid: number): boolean {
  if (process.platform !== "linux") return processExists(pid);
  try {
    return !/^[ZX]$/.test(procStatFields(readFileSync(`/proc/${pid}/stat`, "utf8")).state);
  } catch {
    return false;
  }
}

/**
 * Whether one process is alive, asked often (before every call to a server), so at the cost of a syscall or two.
 * On Linux its `/proc/<pid>/statm` is opened once and re-read in place: a process that has exited has no memory, so
 * it reads all zeros while it is a zombie (dead, but not reaped until Node next polls its events) and fails once it
 * is reaped. Unlike a pid, the open file cannot come to mean another process when the pid is reused. Elsewhere the
 * pid is asked, which does not see zombies. `close()` when done with it.
 */
export class ProcessProbe {
  readonly pid: number;
  private fd: number | undefined;

  constructor(pid: number) {
    this.pid = pid;
    if (process.platform !== "linux") return;
    try {
      this.fd = openSync(`/proc/${pid}/statm`, "r");
    } catch {
      // Already gone, or no /proc to read: the pid is asked instead.
      this.fd = undefined;
    }
  }

  isAlive(): boolean {
    if (this.fd === undefined) return processExists(this.pid);
    try {
      // The first field is the size in pages: "0 " only for a process without memory.
      const length = readSync(this.fd, statmStart, 0, statmStart.length, 0);
      return !(length === 2 && statmStart[0] === ZERO && statmStart[1] === SPACE);
    } catch {
      return false; // ESRCH: reaped.
    }
  }

  close(): void {
    if (this.fd === undefined) return;
    closeSync(this.fd);
    this.fd = undefined;
  }
}

const statmStart = Buffer.alloc(2);
const ZERO = 0x30;
const SPACE = 0x20;

/** The pid is in the process table, perhaps as a zombie. */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Resolves with the pids still alive after `timeoutMs`, or sooner once they and the `group` are all gone. */
async function waitForExit(pids: readonly number[], timeoutMs: number, group?: number): Promise<number[]> {
  // A monotonic clock: wall-clock jumps (or a test's fake Date) must not stretch or cut the wait.
  const deadline = performance.now() + timeoutMs;
  let alive = pids.filter(isProcessAlive);
  while (!allGone(alive, group) && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS));
    alive = alive.filter(isProcessAlive);
  }
  return alive;
}

function allGone(alive: readonly number[], group: number | undefined): boolean {
  return alive.length === 0 && (group === undefined || !groupExists(group));
}

function signalAll(pids: readonly number[], signal: NodeJS.Signals, group?: number): void {
  if (group !== undefined) signalGroup(group, signal);
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // Already gone.
    }
  }
}

function signalGroup(groupId: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-groupId, signal);
  } catch {
    // No member left.
  }
}

/** Some member of the group is in the process table (init reaps the group's orphans once they exit). */
export function groupExists(groupId: number): boolean {
  try {
    process.kill(-groupId, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** pid → parent pid for every process: `/proc` on Linux, `ps` elsewhere (macOS, BSD). */
async function readParentTable(): Promise<Map<number, number>> {
  return process.platform === "linux" ? readProcParents() : readPsParents();
}

async function readProcParents(): Promise<Map<number, number>> {
  const table = new Map<number, number>();
  const entries = (await readdir("/proc")).filter((entry) => /^\d+$/.test(entry));
  await Promise.all(
    entries.map(async (entry) => {
      try {
        table.set(Number(entry), procStatFields(await readFile(`/proc/${entry}/stat`, "utf8")).ppid);
      } catch {
        // Exited while we were reading.
      }
    }),
  );
  return table;
}

/** `/proc/<pid>/stat` is `pid (comm) state ppid …`; comm may itself contain spaces and parentheses. */
function procStatFields(stat: string): { state: string; ppid: number } {
  const [state = "", ppid = ""] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { state, ppid: Number(ppid) };
}

function readPsParents(): Promise<Map<number, number>> {
  return new Promise((resolve, reject) => {
    execFile("ps", ["-A", "-o", "pid=,ppid="], (error, stdout) => {
      if (error) return reject(error);
      const table = new Map<number, number>();
      for (const line of stdout.split("\n")) {
        const [pid, ppid] = line.trim().split(/\s+/).map(Number);
        if (pid && ppid !== undefined && !Number.isNaN(ppid)) table.set(pid, ppid);
      }
      resolve(table);
    });
  });
}

function taskkillTree(pid: number): Promise<void> {
  return new Promise((resolve) => {
    execFile("taskkill", ["/pid", String(pid), "/T", "/F"], { windowsHide: true }, () => resolve());
  });
}

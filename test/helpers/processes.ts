/**
 * Server processes this test process started (its descendants), read from the OS process table: the truth about
 * what is left running, independent of the adapter's own bookkeeping.
 */
import { readdir, readFile } from "node:fs/promises";
import { isProcessAlive, listProcessTree } from "../../util/process-tree.ts";

export interface ProcessInfo {
  pid: number;
  cmdline: string;
}

/** Descendants of this process whose command line contains `marker`. */
export async function descendantProcesses(marker: string): Promise<ProcessInfo[]> {
  const pids = (await listProcessTree(process.pid)).filter((pid) => pid !== process.pid);
  const infos = await Promise.all(
    pids.map(async (pid) => ({ pid, cmdline: (await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "")).replaceAll("\0", " ") })),
  );
  return infos.filter((info) => info.cmdline.includes(marker));
}

/**
 * Every live process on the machine whose command line or environment contains `marker`, wherever it was
 * re-parented: a server or a helper left running after its parent exited is no longer our descendant, and a helper a
 * server started inherits its environment.
 */
export async function processesWithMarker(marker: string): Promise<ProcessInfo[]> {
  const pids = (await readdir("/proc")).filter((entry) => /^\d+$/.test(entry)).map(Number);
  const read = (pid: number, file: string) =>
    readFile(`/proc/${pid}/${file}`, "utf8").then(
      (text) => text.replaceAll("\0", " "),
      () => "",
    );
  const infos = await Promise.all(
    pids.map(async (pid) => ({ pid, cmdline: await read(pid, "cmdline"), environ: await read(pid, "environ") })),
  );
  return infos
    .filter(
      (info) => info.pid !== process.pid && (info.cmdline.includes(marker) || info.environ.includes(marker)) && isProcessAlive(info.pid),
    )
    .map(({ pid, cmdline }) => ({ pid, cmdline }));
}

/**
 * Server processes this test process started (its descendants), read from the OS process table: the truth about
 * what is left running, independent of the adapter's own bookkeeping.
 */
import { readFile } from "node:fs/promises";
import { listProcessTree } from "../../process-tree.ts";

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

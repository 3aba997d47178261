/**
 * Linux process-tree readings from /proc, for measurements and for checking which program a launcher started.
 */
import { readdirSync, readFileSync } from "node:fs";

/** Every live descendant of `rootPid` (children, grandchildren, …). */
export function descendantPids(rootPid: number): number[] {
  const childrenOf = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const parent = parentPid(Number(entry));
    if (parent === undefined) continue;
    childrenOf.set(parent, [...(childrenOf.get(parent) ?? []), Number(entry)]);
  }
  const found: number[] = [];
  const queue = [rootPid];
  while (queue.length > 0) {
    for (const child of childrenOf.get(queue.shift()!) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/** The command line of a process, or undefined once it is gone. */
export function commandLine(pid: number): string[] | undefined {
  const raw = readProc(pid, "cmdline");
  return raw === undefined ? undefined : raw.split("\0").filter((part) => part !== "");
}

/** Resident set size now (`VmRSS`) or at its peak (`VmHWM`), in KiB; undefined once the process is gone. */
export function statusKiB(field: "VmRSS" | "VmHWM", pid: number | "self" = "self"): number | undefined {
  const match = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, "m").exec(readProc(pid, "status") ?? "");
  return match ? Number(match[1]) : undefined;
}

function parentPid(pid: number): number | undefined {
  const stat = readProc(pid, "stat");
  // The command name (field 2) is in parentheses and may itself contain spaces or parentheses.
  const fields = stat?.slice(stat.lastIndexOf(")") + 2).split(" ");
  return fields ? Number(fields[1]) : undefined;
}

function readProc(pid: number | "self", file: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/${file}`, "utf8");
  } catch {
    return undefined;
  }
}

/**
 * What npx resolution answers, and the one way each of its steps says "this cannot be resolved, and why": a
 * `fallback` with a reason. The reason travels unchanged from the step that found it to `/mcp status`, so a server
 * that still runs through npm says why. No imports: the status line reads this module at startup, while the resolver
 * itself is loaded only on a stdio server's first connect.
 */

/** npx is left to run the original command, for this reason. */
export interface NpxFallback {
  kind: "fallback";
  reason: string;
}

/** The command that runs the program npx would run, without npm. */
export interface NpxResolved {
  kind: "resolved";
  command: string;
  /** The program's own arguments (shebang flags, the bin path) followed by the configured ones. */
  args: string[];
  /** The file started: the package's bin, inside npm's `_npx` install. */
  binPath: string;
}

export type NpxResolution = NpxResolved | NpxFallback;

export function npxFallback(reason: string): NpxFallback {
  return { kind: "fallback", reason };
}

export function isNpxFallback(value: unknown): value is NpxFallback {
  return typeof value === "object" && value !== null && (value as { kind?: unknown }).kind === "fallback";
}

/** The line `/mcp status` shows under an npx server: what it runs, or why npm still runs it. */
export function describeNpxResolution(resolution: NpxResolution): string {
  if (resolution.kind === "fallback") return `npx: runs through npm (${resolution.reason})`;
  const program = resolution.command === resolution.binPath ? resolution.binPath : `${resolution.command} ${resolution.binPath}`;
  return `npx: resolved to ${program}`;
}

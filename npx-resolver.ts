/** Resolves `npx pkg …` to `node <bin> …` from npm's own `_npx` cache (stub: implemented by the npx work). */
export interface ResolvedCommand {
  command: string;
  args: string[];
}

export interface NpxResolveOptions {
  agentDir: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

export async function resolveNpxCommand(
  _command: string,
  _args: readonly string[],
  _options: NpxResolveOptions,
): Promise<ResolvedCommand | undefined> {
  return undefined;
}

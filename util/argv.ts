/**
 * Pi's command line as read before Pi parses it: extensions load (and register their tools) before Pi hands them
 * their flags, and a flag Pi keeps for itself (`--no-mcp` on Pi 1.x) never reaches `pi.getFlag`.
 */

/** `--name value` / `--name=value` → the value; a bare `--name` → `true`; absent → `undefined`. Stops at `--`. */
export function flagFromArgv(argv: readonly string[], name: string): string | true | undefined {
  const flag = `--${name}`;
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!;
    if (arg === "--") return undefined;
    if (arg === flag) {
      const next = argv[index + 1];
      return next === undefined || next.startsWith("-") ? true : next;
    }
    if (arg.startsWith(`${flag}=`)) return arg.slice(flag.length + 1);
  }
  return undefined;
}

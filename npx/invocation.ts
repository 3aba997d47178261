/**
 * Reading an `npx …` or `npm exec …` command line the way npm 11 does (its `bin/npx-cli.js` rewrite plus npm's own
 * option parser), so the resolver knows which packages npx would install and which program it would run.
 *
 * Only options whose effect we model are accepted. Anything else is reported as unsupported, because npm might read
 * the rest of the line differently from us: the caller then runs the original command.
 */
import { win32 } from "node:path";
import { type NpxFallback, isNpxFallback, npxFallback } from "./resolution.ts";

export interface NpxInvocation {
  /** The npm to ask for its config and to install with: the one beside an npx given by path, else `npm` on PATH. */
  npmCommand: string;
  /** Package specs exactly as typed: npm hashes these very strings into the `_npx/<hash>` directory name. */
  packages: string[];
  /**
   * `-p`/`--package` form: the command to run, looked up among the install's bins (or a system command such as
   * `node`). Undefined: run the bin npm picks from the first package's manifest.
   */
  command?: string;
  /** Arguments for the program. */
  args: string[];
  /** `--yes` → true, `--no-install` / `--yes=false` → false, absent → npm's config decides. */
  yes?: boolean;
  /** `--prefer-offline` / `--offline`: npm takes cached metadata as is, without asking the registry. */
  preferOffline: boolean;
  /** `--cache`: replaces npm's configured cache directory. */
  cache?: string;
  /** Options to repeat when npm installs the packages for us (registry and offline modes), as `--key=value`. */
  npmOptions: string[];
}

/** `undefined`: not an npx command at all. A fallback: npx, but not in a form we can resolve faithfully. */
export type NpxParseResult = NpxInvocation | NpxFallback | undefined;

type Launcher = "npx" | "npm exec";

interface OptionState {
  packages: string[];
  yes?: boolean;
  preferOffline: boolean;
  cache?: string;
  npmOptions: string[];
}

/** Options that only change how chatty npm is. */
const LOG_LEVEL_SWITCHES = new Set(["q", "quiet", "s", "silent", "d", "dd", "ddd", "verbose"]);

/** Reads `npx …`, `npx.cmd …`, a path to npx, `npm exec …`/`npm x …`, each optionally wrapped in `cmd /c`. */
export function parseNpxInvocation(command: string, args: readonly string[]): NpxParseResult {
  const unwrapped = unwrapCmdShell(command, args);
  if (!unwrapped) return undefined;
  const [program, programArgs] = unwrapped;
  const base = win32.basename(program).toLowerCase(); // win32 splits on both separators
  if (base === "npx" || base === "npx.cmd") {
    return parseOptions("npx", siblingNpm(program), programArgs);
  }
  if ((base === "npm" || base === "npm.cmd") && (programArgs[0] === "exec" || programArgs[0] === "x")) {
    return parseOptions("npm exec", program, programArgs.slice(1));
  }
  return undefined;
}

/** Claude-style Windows configs wrap npx in `cmd /c npx …`; the real command line is what follows `/c`. */
function unwrapCmdShell(command: string, args: readonly string[]): [string, readonly string[]] | undefined {
  const base = win32.basename(command).toLowerCase();
  if (base !== "cmd" && base !== "cmd.exe") return [command, args];
  let i = 0;
  while (i < args.length && /^\/[dsq]$/i.test(args[i])) i++;
  if (i >= args.length || !/^\/c$/i.test(args[i]) || i + 1 >= args.length) return undefined;
  return [args[i + 1], args.slice(i + 2)];
}

/** `C:\nodejs\npx.cmd` → `C:\nodejs\npm.cmd`: an explicitly chosen npx must be paired with its own npm. */
function siblingNpm(npx: string): string {
  const base = win32.basename(npx);
  if (base.length === npx.length) return "npm";
  const npmBase = base.slice(0, 2) + (base[2] === "X" ? "M" : "m") + base.slice(3);
  return npx.slice(0, npx.length - base.length) + npmBase;
}

function parseOptions(launcher: Launcher, npmCommand: string, args: readonly string[]): NpxParseResult {
  const state: OptionState = { packages: [], preferOffline: false, npmOptions: [] };
  const words: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--") {
      words.push(...args.slice(i + 1));
      break;
    }
    if (!arg.startsWith("-") || arg === "-") {
      words.push(arg);
      // npx stops reading options at the first word; npm exec reads options anywhere before `--`.
      if (launcher === "npx") {
        words.push(...args.slice(i + 1));
        break;
      }
      continue;
    }
    if (launcher === "npm exec" && words.length > 0) {
      return npxFallback(`npm exec would read ${arg} as its own option; put the command after --`);
    }
    const consumed = applyOption(launcher, arg, args[i + 1], state);
    if (isNpxFallback(consumed)) return consumed;
    i += consumed;
  }
  return buildInvocation(npmCommand, state, words);
}

/** Applies one option to `state`; returns how many following arguments it used as its value, or why it is unsupported. */
function applyOption(launcher: Launcher, arg: string, next: string | undefined, state: OptionState): number | NpxFallback {
  const [key, ...valueParts] = arg.replace(/^-+/, "").split("=");
  const inline = valueParts.length > 0 ? valueParts.join("=") : undefined;
  const takeValue = (): [string | undefined, number] =>
    inline !== undefined ? [inline, 0] : next !== undefined && !next.startsWith("-") ? [next, 1] : [undefined, 0];

  switch (key) {
    case "y":
      // npx expands `-y=false` to `--yes false`, which makes "false" the package: not worth modelling.
      if (inline !== undefined) return npxFallback(`unsupported option ${arg}`);
      state.yes = true;
      return 0;
    case "yes":
    case "prefer-offline":
    case "offline": {
      const value = parseBoolean(inline);
      if (value === undefined) return npxFallback(`unsupported value in ${arg}`);
      if (key === "yes") {
        state.yes = value;
      } else {
        state.preferOffline ||= value;
        state.npmOptions.push(`--${key}=${value}`);
      }
      return 0;
    }
    case "no-yes":
    case "no":
      state.yes = false;
      return 0;
    case "no-install":
      // npx rewrites it to --yes=false; plain npm exec does not know it.
      if (launcher !== "npx") return npxFallback(`unsupported option ${arg}`);
      state.yes = false;
      return 0;
    case "p":
    case "package": {
      // npx rewrites -p to --package; for npm exec -p means --parseable.
      if (key === "p" && launcher !== "npx") return npxFallback(`unsupported option ${arg}`);
      // npx always takes the next word as the package, even if it starts with "-".
      const value = inline ?? next;
      if (!value) return npxFallback(`${arg} needs a package`);
      state.packages.push(value);
      return inline === undefined ? 1 : 0;
    }
    case "registry":
    case "cache": {
      const [value, used] = key === "cache" && inline === undefined ? [next, 1] : takeValue();
      if (!value) return npxFallback(`${arg} needs a value`);
      if (key === "cache") state.cache = value;
      else state.npmOptions.push(`--registry=${value}`);
      return used;
    }
    case "loglevel": {
      const [value, used] = takeValue();
      return value ? used : npxFallback(`${arg} needs a value`);
    }
    default:
      if (LOG_LEVEL_SWITCHES.has(key) && inline === undefined) return 0;
      return npxFallback(`unsupported option ${arg}`);
  }
}

function parseBoolean(value: string | undefined): boolean | undefined {
  if (value === undefined || value === "true") return true;
  if (value === "false") return false;
  return undefined;
}

function buildInvocation(npmCommand: string, state: OptionState, words: string[]): NpxParseResult {
  const { packages, yes, preferOffline, cache, npmOptions } = state;
  if (packages.length === 0) {
    if (words.length === 0) return npxFallback("no package to run");
    return { npmCommand, packages: [words[0]], args: words.slice(1), yes, preferOffline, cache, npmOptions };
  }
  // With --package and no command npm opens an interactive shell: nothing a server could be.
  if (words.length === 0) return npxFallback("--package without a command to run");
  return { npmCommand, packages, command: words[0], args: words.slice(1), yes, preferOffline, cache, npmOptions };
}

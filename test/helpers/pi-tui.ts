/**
 * The real `pi` TUI in a terminal (tmux) with the adapter and a faux model, for the tests of interactive mode.
 *
 * Keys typed before the TUI accepts input are lost, and its first screens are no sign that it does: every Pi draws
 * its footer (the model's name) at once, and until `session_start` has run, Enter only says "Startup is still in
 * progress" and keeps the text (0.87, 1.x), the completion list knows no extension's command, and on 0.73 keys may
 * arrive before the terminal is in raw mode. What every Pi shows once all of that is done is its list of loaded
 * resources ("[Extensions]" naming the adapter): binding the extensions awaits every `session_start` handler, then
 * gives the completion list the extensions' commands, then prints that list (0.73.1 to 1.6.0). `ready()` waits for
 * it, so nothing is typed before the adapter's `session_start` has run, even where the adapter draws nothing then (no
 * server: no footer status); the panel test checks it with a slow `session_start` loaded after the adapter
 * (test/fixtures/extensions/slow-session-start.ts). A dialog of `session_start` (the adapter's trust question) comes
 * before it; Pi 1.x's own "Trust project folder?" comes before the session.
 *
 * Pi runs under a tmux server, not under the test process: what it and its MCP servers leave running is found by the
 * agent dir in their environment (`processesWithMarker(agentDir)`), not among the test's descendants.
 */
import { execFileSync } from "node:child_process";
import { rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { expect } from "vitest";
import { FAUX_MODEL } from "./faux-provider-extension.ts";
import { currentHost } from "./hosts.ts";

/** Long enough for a step of Pi's on a loaded machine (a start, a server listed, a dialog drawn). */
export const TUI_STEP_TIMEOUT_MS = 30_000;
/** How much of the scrollback `history()` reads: startup notices can push the resource list off the screen. */
const HISTORY_LINES = 200;

export interface PiTuiOptions {
  agentDir: string;
  cwd: string;
  /** Extensions after the adapter: the faux model's script first. */
  extensions: string[];
  env?: Record<string, string>;
  columns?: number;
  rows?: number;
}

export interface PiTui {
  /** What the terminal shows now. */
  screen(): string;
  /** The screen with the scrollback above it. */
  history(): string;
  /** tmux key names ("Enter", "Down") or text. */
  keys(...names: string[]): void;
  /** Waits until the TUI accepts input (see the module comment). */
  ready(): Promise<void>;
  /**
   * Types `/<name>` and submits it: waits for the completion list to offer the command (so the Escape that closes the
   * list is not taken for an interrupt) and for the list to close (so Enter submits the text, not a completion).
   */
  command(name: string): Promise<void>;
  /** Ends the tmux session (and Pi with it) if it is still there. */
  close(): Promise<void>;
}

let started = 0;

/** Starts `pi` in a new tmux session in `options.cwd`, with `options.agentDir` as its agent dir. */
export async function startPiTui(options: PiTuiOptions): Promise<PiTui> {
  const host = currentHost();
  const session = `pi-mcp-tui-${process.pid}-${++started}`;
  await writeFile(join(options.agentDir, "settings.json"), JSON.stringify({ retry: { enabled: false }, cacheWarming: "off" }));
  const command = [
    `PI_CODING_AGENT_DIR=${options.agentDir}`,
    ...Object.entries(options.env ?? {}).map(([name, value]) => `${name}=${value}`),
    host.nodeBinary,
    host.cliPath,
    "--offline --no-session",
    ...[resolve("pi-mcp-adapter.ts"), ...options.extensions].map((path) => `-e ${resolve(path)}`),
    `--model ${FAUX_MODEL}`,
  ].join(" ");
  // A tmux server of its own: it ends with Pi (no server started by another test or user holds this session's command
  // line, which names the agent dir that marks the processes of this Pi), and nobody else's sessions are in reach.
  const socket = join(tmpdir(), `${session}.tmux`);
  const tmux = (...args: string[]) => execFileSync("tmux", ["-S", socket, ...args], { encoding: "utf8" });
  tmux(
    "new-session",
    "-d",
    "-s",
    session,
    "-x",
    String(options.columns ?? 160),
    "-y",
    String(options.rows ?? 40),
    "-c",
    options.cwd,
    command,
  );

  const screen = () => tmux("capture-pane", "-p", "-t", session);
  const history = () => tmux("capture-pane", "-p", "-t", session, "-S", `-${HISTORY_LINES}`);
  const keys = (...names: string[]) => void tmux("send-keys", "-t", session, ...names);
  const offered = (name: string) => new RegExp(`^ *→ ${name} `, "m");
  return {
    screen,
    history,
    keys,
    async ready() {
      await expect.poll(history, { timeout: TUI_STEP_TIMEOUT_MS }).toMatch(/\[Extensions\]\n[^\n]*pi-mcp-adapter\.ts/);
    },
    async command(name: string) {
      keys(`/${name}`);
      await expect.poll(screen, { timeout: TUI_STEP_TIMEOUT_MS }).toMatch(offered(name));
      keys("Escape");
      await expect.poll(screen, { timeout: TUI_STEP_TIMEOUT_MS }).not.toMatch(offered(name));
      keys("Enter");
    },
    async close() {
      try {
        execFileSync("tmux", ["-S", socket, "kill-session", "-t", session], { stdio: "ignore" });
      } catch {
        // Gone already: Pi quit, and its session with it.
      }
      await rm(socket, { force: true }); // tmux leaves it behind when its server ends
    },
  };
}

/**
 * The MCP stdio transport with the server in a process group of its own (POSIX), instead of the SDK's
 * StdioClientTransport, which cannot start one and forgets the process once it is closed.
 *
 * - Every end of the server ends its whole group: a stop (ours, or the SDK's own close after a message over the size
 *   limit), a crash, the exit of a wrapper (`sh -c`, npm) whose server lives on. What the server started (a browser,
 *   a language server) would otherwise outlive it.
 * - The server's exit ends the session at once, with its exit code or signal: a child that shares its stdout keeps the
 *   pipe open, and the SDK fails pending requests only when the transport closes.
 * - Groups still alive when Pi's process exits are killed from its exit hook (a detached group is not ended with
 *   Pi's own). Windows keeps the plain child (no groups there): its tree is ended with `taskkill /T`.
 */
import type { ChildProcess } from "node:child_process";
import { PassThrough } from "node:stream";
import spawn from "cross-spawn";
import { onExit } from "signal-exit";
import { type JSONRPCMessage, serializeMessage, type Transport } from "@modelcontextprotocol/client";
import { killProcessGroupNow, stopProcessTree } from "../util/process-tree.ts";
import { type MessageTooLargeError, StdioReadBuffer } from "./stdio-read-buffer.ts";

const IS_WINDOWS = process.platform === "win32";
/** After the server exits, how long its stdout may still deliver what it wrote last before the session ends. */
const EXIT_DRAIN_MS = 100;

export interface StdioServerParameters {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  /** The largest message read; a bigger one ends the session (see connection/sdk-session.ts). */
  maxBufferSize: number;
}

/**
 * Process groups started and not yet ended: killed if Pi's process ends first. Not only on `exit`: Pi 0.73's TUI has
 * no handler for SIGTERM, SIGHUP or SIGINT, so such a signal ended Pi without an `exit` event and left what a server
 * had started running in its group. signal-exit calls back on the exit and on those signals (and lets the signal end
 * the process as it would have, unless the host handles it). Pi loads a fresh copy of the extension at every /reload
 * (and the tests load one per session), so the set and its one hook belong to the process, not to this copy of the
 * module: a hook per copy would pile up, one more at each reload.
 */
const LIVE_GROUPS = Symbol.for("pi-mcp-adapter.live-process-groups");
const liveGroups: Set<number> = ((globalThis as { [LIVE_GROUPS]?: Set<number> })[LIVE_GROUPS] ??= createLiveGroups());

function createLiveGroups(): Set<number> {
  const groups = new Set<number>();
  onExit(() => groups.forEach(killProcessGroupNow));
  return groups;
}

export class GroupedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** The server's stderr, readable before `start()` so nothing it writes early is lost. */
  readonly stderr = new PassThrough();
  private readonly params: StdioServerParameters;
  private readonly readBuffer: StdioReadBuffer;
  private child?: ChildProcess;
  private stopping?: Promise<void>;
  private closed = false;
  /** How the server process ended ("exit code 1", "signal SIGKILL"), once it has. */
  private exitReason?: string;
  private drainTimer?: ReturnType<typeof setTimeout>;

  constructor(params: StdioServerParameters) {
    this.params = params;
    this.readBuffer = new StdioReadBuffer(params.maxBufferSize);
  }

  /** The server's process id, kept after it exited (it names its process group). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Set once the server sent a message over the size limit (the session was closed for it). */
  get overflow(): MessageTooLargeError | undefined {
    return this.readBuffer.overflow;
  }

  /** How the server process ended, or undefined while it runs. */
  get exited(): string | undefined {
    return this.exitReason;
  }

  start(): Promise<void> {
    if (this.child) throw new Error("the stdio transport is already started");
    const { command, args, env, cwd } = this.params;
    const child = spawn(command, args, {
      env,
      cwd,
      stdio: ["pipe", "pipe", "pipe"],
      shell: false,
      windowsHide: IS_WINDOWS,
      detached: !IS_WINDOWS,
    });
    this.child = child;
    return new Promise((resolve, reject) => {
      child.on("error", (error) => {
        reject(error);
        this.onerror?.(error);
      });
      child.on("spawn", () => {
        if (!IS_WINDOWS && child.pid !== undefined) liveGroups.add(child.pid);
        resolve();
      });
      child.on("exit", (code, signal) => this.serverExited(code, signal));
      child.on("close", () => this.finish());
      child.stdin?.on("error", (error) => this.onerror?.(error));
      child.stdout?.on("data", (chunk: Buffer) => this.read(chunk));
      child.stdout?.on("error", (error) => this.onerror?.(error));
      child.stderr?.pipe(this.stderr);
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.child?.stdin;
      if (!stdin || this.closed) return reject(new Error("Not connected"));
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once("drain", resolve);
    });
  }

  /** Ends the server and every process of its group (stdin closed first, then SIGTERM, then SIGKILL). */
  async close(): Promise<void> {
    await this.stop();
    this.finish();
  }

  private read(chunk: Buffer): void {
    if (this.closed) return;
    try {
      this.readBuffer.append(chunk);
    } catch (error) {
      // Over the size limit: the stream cannot be read on from here.
      this.onerror?.(error as Error);
      void this.close();
      return;
    }
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.readBuffer.readMessage();
      } catch (error) {
        this.onerror?.(error as Error); // a line that is not JSON-RPC: skipped
        continue;
      }
      if (message === null) return;
      this.onmessage?.(message);
    }
  }

  /** The rest of the group is ended, and the session too, shortly (output written just before the exit comes first). */
  private serverExited(code: number | null, signal: NodeJS.Signals | null): void {
    this.exitReason = signal ? `signal ${signal}` : `exit code ${code}`;
    void this.stop();
    this.drainTimer = setTimeout(() => this.finish(), EXIT_DRAIN_MS);
    this.drainTimer.unref();
  }

  private stop(): Promise<void> {
    const child = this.child;
    if (!child || child.pid === undefined) return Promise.resolve();
    const groupId = child.pid;
    this.stopping ??= stopProcessTree(groupId, {
      processGroup: !IS_WINDOWS,
      requestExit: () => {
        try {
          child.stdin?.end();
        } catch {
          // Already closed.
        }
      },
    }).finally(() => liveGroups.delete(groupId));
    return this.stopping;
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.drainTimer);
    this.readBuffer.clear();
    this.onclose?.();
  }
}

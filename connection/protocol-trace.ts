/**
 * The protocol trace (`/mcp trace on|off [server]`): one JSONL file per Pi session in `<agent dir>/mcp-traces/`,
 * a line per message between the adapter and a traced server, holding only what a message is, never what it says:
 * its direction, kind, method, id, size in bytes, the time it took to answer, and an error's code. Arguments,
 * results, log messages, tokens, headers and URLs are never read into it (the transport hook below sees parsed
 * JSON-RPC messages only, below every header and URL), and an id a server chose as a string is written as a hash.
 * The file stops growing at MAX_TRACE_BYTES, saying so on its last line.
 *
 * Every session's transport is hooked when it is made (stdio, Streamable HTTP and SSE, both protocol eras), so a
 * trace turned on later covers connections already up. While nothing is traced a message costs one property read.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { join } from "node:path";
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/client";
import { debugLog } from "../util/debug-log.ts";

/** Enough for tens of thousands of messages (a line is ~150 bytes); a trace left on must not fill the disk. */
const MAX_TRACE_BYTES = 5 * 1024 * 1024;
const TRACE_DIR = "mcp-traces";
/** Requests waiting for their answer, per trace: a server that never answers must not grow it without end. */
const MAX_OPEN_REQUESTS = 10_000;
/**
 * Lines are written in batches at most this often: a write per message cost a call through the adapter about a third
 * more (bench/call-overhead.ts). What a crash of Pi loses is this much of the trace.
 */
const WRITE_EVERY_MS = 100;
/** A batch this large is written at once. */
const WRITE_AT_BYTES = 64 * 1024;
/** Method names come from servers too: a name longer than this is cut. */
const MAX_METHOD_CHARS = 80;

type Direction = "out" | "in";

/** One line of the trace. */
export interface TraceEvent {
  t: string;
  server: string;
  dir: Direction;
  type: "request" | "notification" | "result" | "error" | "send-failed";
  method?: string;
  id?: number | string;
  bytes?: number;
  /** A result or error: milliseconds since its request went the other way. */
  ms?: number;
  /** A 2026 result that is not the final one (`input_required`). */
  resultType?: string;
  /** A JSON-RPC error's code. */
  code?: number;
  /** A message that could not be sent: the HTTP status, or the kind of failure (never its message, which may hold a URL). */
  failure?: string;
}

/** What a transport hook needs of the trace (connection/sdk-session.ts hooks every transport it makes). */
export interface MessageTrace {
  /** False while no server is traced: the hook then does nothing else. */
  readonly active: boolean;
  traces(server: string): boolean;
  record(server: string, dir: Direction, message: JSONRPCMessage): void;
  sendFailed(server: string, message: JSONRPCMessage, error: unknown): void;
}

/**
 * Hooks the trace into a transport before it is used: what it sends, what it receives (whatever handler the SDK
 * gives it, now or later), and what it fails to send. Without a trace, nothing is changed.
 */
export function traceTransport(transport: Transport, server: string, trace: MessageTrace | undefined): void {
  if (!trace) return;
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    if (!trace.active || !trace.traces(server)) return send(message, options);
    trace.record(server, "out", message);
    return send(message, options).catch((error: unknown) => {
      trace.sendFailed(server, message, error);
      throw error;
    });
  };
  // The SDK sets (and chains, and restores) the handler itself: each one it sets is wrapped as it is set. A handler
  // that calls the one before it would see a message twice, so each message is recorded once.
  const seen = new WeakSet<object>();
  let wrapped: Transport["onmessage"];
  Object.defineProperty(transport, "onmessage", {
    configurable: true,
    enumerable: true,
    get: () => wrapped,
    set: (handler: Transport["onmessage"]) => {
      wrapped =
        handler &&
        ((message, extra) => {
          if (trace.active && !seen.has(message) && trace.traces(server)) {
            seen.add(message);
            trace.record(server, "in", message);
          }
          handler(message, extra);
        });
    },
  });
}

/** The session's trace: which servers are traced, and the file. */
export class ProtocolTrace implements MessageTrace {
  active = false;
  private everyServer = false;
  /** With `everyServer`: those left out; without: the only ones traced. */
  private readonly named = new Set<string>();
  private file?: string;
  private bytes = 0;
  private full = false;
  private queue: string[] = [];
  private queuedBytes = 0;
  /** The next batch's write, waiting for more lines. */
  private batch?: NodeJS.Timeout;
  private writing?: Promise<void>;
  /** Open while tracing is on: one descriptor for every write, closed when tracing stops or the file is full. */
  private handle?: Promise<FileHandle>;
  /** Requests not answered yet: who asked, its method, and when. */
  private readonly open = new Map<string, { method: string; at: number }>();

  /** Where the file is made when tracing is first turned on (`<agent dir>/mcp-traces`), and its name: the session's start. */
  private readonly dir: string;
  private readonly name: string;
  private readonly maxBytes: number;

  constructor(agentDir: string, maxBytes = MAX_TRACE_BYTES) {
    this.dir = join(agentDir, TRACE_DIR);
    this.name = `${new Date().toISOString().replace(/[:.]/g, "-")}-${process.pid}-${randomBytes(3).toString("hex")}.jsonl`;
    this.maxBytes = maxBytes;
  }

  /** The file, once tracing was turned on in this session. */
  get path(): string | undefined {
    return this.file;
  }

  get size(): number {
    return this.bytes;
  }

  get limit(): number {
    return this.maxBytes;
  }

  /** Nothing more is written: the file reached its limit, or could not be written. */
  get stopped(): boolean {
    return this.full;
  }

  /** The servers traced: `every` (but `except`), or `only` these. */
  get targets(): { every: true; except: string[] } | { every: false; only: string[] } {
    return this.everyServer ? { every: true, except: [...this.named] } : { every: false, only: [...this.named] };
  }

  traces(server: string): boolean {
    return this.everyServer !== this.named.has(server);
  }

  /** Traces every server (none named) or one more. */
  on(server?: string): void {
    if (server === undefined) {
      this.everyServer = true;
      this.named.clear();
    } else if (this.everyServer) this.named.delete(server);
    else this.named.add(server);
    this.active = true;
    this.openFile();
  }

  /** Stops tracing every server (none named) or one; resolves once what was traced is in the file. */
  off(server?: string): Promise<void> {
    if (server === undefined) {
      this.everyServer = false;
      this.named.clear();
    } else if (this.everyServer) this.named.add(server);
    else this.named.delete(server);
    this.active = this.everyServer || this.named.size > 0;
    if (this.active) return this.flush();
    this.open.clear();
    return this.closeFile();
  }

  /** Resolves once every line recorded so far is written (or failed to be). */
  async flush(): Promise<void> {
    this.writeNow();
    while (this.writing) await this.writing;
  }

  record(server: string, dir: Direction, message: JSONRPCMessage): void {
    const event: TraceEvent = { t: new Date().toISOString(), server, dir, type: "notification", bytes: byteSize(message) };
    const id = "id" in message ? traceId(message.id) : undefined;
    if ("method" in message) {
      event.method = message.method.slice(0, MAX_METHOD_CHARS);
      if (id !== undefined) {
        event.type = "request";
        event.id = id;
        this.started(`${server}\0${dir}\0${id}`, event.method);
      }
    } else {
      // An answer goes the other way from its request.
      const request = id === undefined ? undefined : this.answered(`${server}\0${dir === "in" ? "out" : "in"}\0${id}`);
      event.type = "error" in message ? "error" : "result";
      if (id !== undefined) event.id = id;
      if (request) [event.method, event.ms] = [request.method, Math.round((performance.now() - request.at) * 10) / 10];
      if ("error" in message && typeof message.error?.code === "number") event.code = message.error.code;
      const resultType = "result" in message ? message.result?.resultType : undefined;
      if (typeof resultType === "string" && resultType !== "complete") event.resultType = resultType.slice(0, MAX_METHOD_CHARS);
    }
    this.writeLine(event);
  }

  sendFailed(server: string, message: JSONRPCMessage, error: unknown): void {
    // A send that fails after its server's trace was turned off is not written: nothing reopens a file closed by off().
    if (!this.active || !this.traces(server)) return;
    const event: TraceEvent = { t: new Date().toISOString(), server, dir: "out", type: "send-failed", failure: failureKind(error) };
    if ("method" in message) event.method = message.method.slice(0, MAX_METHOD_CHARS);
    if ("id" in message) {
      const id = traceId(message.id);
      if (id !== undefined) {
        event.id = id;
        this.answered(`${server}\0out\0${id}`);
      }
    }
    this.writeLine(event);
  }

  private started(key: string, method: string): void {
    if (this.open.size >= MAX_OPEN_REQUESTS) this.open.delete(this.open.keys().next().value!);
    this.open.set(key, { method, at: performance.now() });
  }

  private answered(key: string): { method: string; at: number } | undefined {
    const request = this.open.get(key);
    this.open.delete(key);
    return request;
  }

  private openFile(): void {
    if (this.file) return;
    this.file = join(this.dir, this.name);
    try {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    } catch (error) {
      debugLog(`protocol trace: creating ${this.dir}`, error);
    }
    this.writeLine({
      trace: "pi-mcp-adapter MCP protocol trace",
      version: 1,
      started: new Date().toISOString(),
      holds: "what each message is (direction, type, method, id, bytes, ms, error code), never what it says",
    });
  }

  /** Appends a line, or the note that the limit is reached (room for it is kept), then nothing more. */
  private writeLine(value: object): void {
    if (this.full || !this.file) return;
    let line = `${JSON.stringify(value)}\n`;
    let size = Buffer.byteLength(line);
    if (this.bytes + size + LIMIT_NOTE_ROOM > this.maxBytes) {
      this.full = true;
      line = `${JSON.stringify({ t: new Date().toISOString(), stopped: `the trace reached its limit of ${this.maxBytes} bytes` })}\n`;
      size = Buffer.byteLength(line);
    }
    this.bytes += size;
    this.queuedBytes += size;
    this.queue.push(line);
    if (this.queuedBytes >= WRITE_AT_BYTES || this.full) this.writeNow();
    else if (!this.batch && !this.writing) {
      this.batch = setTimeout(() => this.writeNow(), WRITE_EVERY_MS);
      // Tracing never keeps Pi running: off() (the session's end) writes what is left.
      this.batch.unref();
    }
  }

  private writeNow(): void {
    clearTimeout(this.batch);
    this.batch = undefined;
    if (this.file && this.queue.length > 0) this.writing ??= this.drain(this.file);
  }

  /**
   * Writes what is left, then closes the file: once tracing is off, or once the file is full (nothing more is written
   * to it). Tracing turned on again meanwhile keeps it open.
   */
  private async closeFile(): Promise<void> {
    await this.flush();
    if (this.active && !this.full) return;
    const handle = this.handle;
    this.handle = undefined;
    await (await handle?.catch(() => undefined))?.close().catch((error: unknown) => debugLog("protocol trace: closing its file", error));
  }

  /** Writes what is queued, a batch at a time, until the queue is empty. */
  private async drain(file: string): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.join("");
        this.queue = [];
        this.queuedBytes = 0;
        this.handle ??= open(file, "a", 0o600);
        await (await this.handle).write(batch);
      }
    } catch (error) {
      // A trace that cannot be written must not become the calls' problem: it stops.
      debugLog(`protocol trace: writing ${file}`, error);
      this.full = true;
      this.queue = [];
      this.queuedBytes = 0;
    } finally {
      this.writing = undefined;
      if (this.full) void this.closeFile();
    }
  }
}

/** Room kept at the end of the file for the line that says the limit was reached. */
const LIMIT_NOTE_ROOM = 200;

function byteSize(message: JSONRPCMessage): number {
  return Buffer.byteLength(JSON.stringify(message));
}

/** Our ids are numbers; a server's string id could say anything, so it is written as a short hash (still matching its answer). */
function traceId(id: unknown): number | string | undefined {
  if (typeof id === "number") return id;
  if (typeof id === "string") return `#${createHash("sha256").update(id).digest("hex").slice(0, 12)}`;
  return undefined;
}

function failureKind(error: unknown): string {
  const status = typeof error === "object" && error !== null ? (error as { status?: unknown }).status : undefined;
  if (typeof status === "number") return `HTTP ${status}`;
  return error instanceof Error ? error.name : typeof error;
}

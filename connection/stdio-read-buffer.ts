/**
 * How a stdio server's output is cut into JSON-RPC messages (by our stdio transport, connection/stdio-transport.ts), in place of
 * the MCP SDK's own reader.
 *
 * Why not the SDK's: it copies everything buffered on every chunk, so a long line costs CPU with the square of its
 * size (40 MB on stdout without a newline burned 28 s before the connection gave up, as "did not finish starting");
 * and an answer that fails its schema (a `result` that is a string or `null`) was dropped as a parse error, leaving
 * its request pending for the full request timeout (10 minutes) with nothing said. Here chunks are kept as they come
 * and joined once per line, a line may not grow past the message limit (the connection ends, and says why), and an
 * answer that is not valid JSON-RPC becomes an error answer to its request, so the call fails at once.
 */
import { type JSONRPCMessage, parseJSONRPCMessage, ProtocolErrorCode } from "@modelcontextprotocol/client";
import { describeValue, isJsonObject } from "../util/guards.ts";

const NEWLINE = 0x0a;

/** A line longer than the message limit: the connection is closed, and this says why. */
export class MessageTooLargeError extends Error {
  readonly limitBytes: number;
  constructor(limitBytes: number) {
    super(`the server sent a message larger than ${formatMegabytes(limitBytes)}, the most one message may be; the connection was closed`);
    this.name = "MessageTooLargeError";
    this.limitBytes = limitBytes;
  }
}

/** The reader contract of the SDK's `ReadBuffer`, which this replaces. */
interface MessageReader {
  append(chunk: Buffer): void;
  readMessage(): JSONRPCMessage | null;
  clear(): void;
}

export class StdioReadBuffer implements MessageReader {
  private readonly maxMessageBytes: number;
  /** Whole lines not read yet, and the start of the next one. */
  private lines?: Buffer;
  private readAt = 0;
  /** Chunks with no newline since the last one: joined only when the line ends. */
  private partial: Buffer[] = [];
  /** Bytes of the line still open (its part in `lines`, and `partial`). */
  private openLineBytes = 0;
  /** Set once a line went over the limit: the connection is being closed for it. */
  overflow?: MessageTooLargeError;

  constructor(maxMessageBytes: number) {
    this.maxMessageBytes = maxMessageBytes;
  }

  append(chunk: Buffer): void {
    const lastNewline = chunk.lastIndexOf(NEWLINE);
    if (lastNewline === -1) {
      this.openLineBytes += chunk.length;
      this.assertWithinLimit();
      this.partial.push(chunk);
      return;
    }
    const unread = this.lines ? [this.lines.subarray(this.readAt)] : [];
    this.lines = Buffer.concat([...unread, ...this.partial, chunk]);
    this.readAt = 0;
    this.partial = [];
    this.openLineBytes = chunk.length - lastNewline - 1;
    this.assertWithinLimit();
  }

  readMessage(): JSONRPCMessage | null {
    if (!this.lines) return null;
    const end = this.lines.indexOf(NEWLINE, this.readAt);
    if (end === -1) return null;
    const line = this.lines.toString("utf8", this.readAt, end).replace(/\r$/, "");
    this.readAt = end + 1;
    if (this.readAt === this.lines.length) this.lines = undefined;
    return readJsonRpc(line);
  }

  clear(): void {
    this.lines = undefined;
    this.readAt = 0;
    this.partial = [];
    this.openLineBytes = 0;
  }

  private assertWithinLimit(): void {
    if (this.openLineBytes <= this.maxMessageBytes) return;
    this.clear();
    this.overflow = new MessageTooLargeError(this.maxMessageBytes);
    // The transport reports it and closes the connection.
    throw this.overflow;
  }
}

/**
 * One line as a JSON-RPC message. A line that is not JSON, or JSON that is no message, is thrown (the transport
 * reports and skips it: servers print banners). An answer to one of our requests that is not valid becomes an
 * error answer to that request.
 */
function readJsonRpc(line: string): JSONRPCMessage {
  const json: unknown = JSON.parse(line);
  try {
    return parseJSONRPCMessage(json);
  } catch (error) {
    if (!isAnswer(json)) throw error;
    return { jsonrpc: "2.0", id: json.id, error: { code: ProtocolErrorCode.InternalError, message: invalidAnswer(json) } };
  }
}

function isAnswer(json: unknown): json is Record<string, unknown> & { id: string | number } {
  return isJsonObject(json) && (typeof json.id === "string" || typeof json.id === "number") && json.method === undefined;
}

function invalidAnswer(json: Record<string, unknown>): string {
  if ("result" in json && !isJsonObject(json.result))
    return `its answer was not a valid MCP result ("result" is ${describeValue(json.result)}, not an object)`;
  if ("error" in json && !isJsonObject(json.error))
    return `its error answer was not valid JSON-RPC ("error" is ${describeValue(json.error)}, not an object)`;
  return "its answer was not a valid JSON-RPC response";
}

function formatMegabytes(bytes: number): string {
  return `${Math.round(bytes / (1024 * 1024))} MB`;
}

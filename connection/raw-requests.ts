/**
 * JSON-RPC requests sent on a session's transport past the SDK's request layer, for the 2026-07-28 Tasks wire:
 * the SDK's 2026 codec refuses a `tools/call` answered with `resultType: "task"` (it knows `complete` and
 * `input_required` only), so ext-tasks asks its host for a raw request path (`rawDispatch`, see
 * connection/task-calls.ts) that "owns request IDs and response matching". This is it: requests get ids of their
 * own (strings, so they never meet the SDK's numeric ones), their answers are taken off the transport before the
 * SDK sees them, everything else goes on to the SDK as before.
 *
 * Each request has its time limit (`requestTimeoutMs`) and its signal; over Streamable HTTP an abort also ends the
 * request's own stream. The transport's close fails every request still waiting, as the SDK's own requests fail.
 */
import { type JSONRPCMessage, SdkError, SdkErrorCode, type Transport } from "@modelcontextprotocol/client";
import type { DispatchOptions, JsonRpcResponse } from "@modelcontextprotocol/ext-tasks/client";
import type { JsonValue } from "@modelcontextprotocol/ext-tasks/core";
import { isJsonObject } from "../util/guards.ts";

const ID_PREFIX = "pi-task-";

interface Waiting {
  settle(response: JsonRpcResponse | Error): void;
}

export class RawRequests {
  private readonly transport: Transport;
  private readonly waiting = new Map<string, Waiting>();
  private nextId = 1;
  private closedWith?: Error;

  /** After the SDK's `connect` (it sets the transport's handlers, which are chained here). */
  constructor(transport: Transport) {
    this.transport = transport;
    const sdkOnMessage = transport.onmessage;
    transport.onmessage = (message, extra) => {
      if (!this.takeAnswer(message)) sdkOnMessage?.(message, extra);
    };
    const sdkOnClose = transport.onclose;
    transport.onclose = () => {
      try {
        sdkOnClose?.();
      } finally {
        this.closeAll(new SdkError(SdkErrorCode.ConnectionClosed, "Connection closed"));
      }
    };
  }

  /** ext-tasks' `RawClientDispatch`. Rejects as the SDK's requests do: a time limit, a closed connection, an abort. */
  dispatch(request: JsonValue, options: DispatchOptions = {}): Promise<JsonRpcResponse> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    const { signal, context } = options;
    if (signal?.aborted) return Promise.reject(signal.reason);
    const id = `${ID_PREFIX}${this.nextId++}`;
    const stream = new AbortController();
    return new Promise<JsonRpcResponse>((resolve, reject) => {
      const timeoutMs = context?.requestTimeoutMs;
      const timer =
        timeoutMs === undefined
          ? undefined
          : setTimeout(() => finish(new SdkError(SdkErrorCode.RequestTimeout, "Request timed out", { timeout: timeoutMs })), timeoutMs);
      const onAbort = () => finish(signal?.reason instanceof Error ? signal.reason : new Error("the request was cancelled"));
      const finish = (response: JsonRpcResponse | Error) => {
        if (!this.waiting.delete(id)) return;
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        if (response instanceof Error) {
          stream.abort(response);
          reject(response);
        } else resolve(response);
      };
      this.waiting.set(id, { settle: finish });
      signal?.addEventListener("abort", onAbort, { once: true });
      const message = { ...(request as Record<string, JsonValue>), jsonrpc: "2.0", id } as unknown as JSONRPCMessage;
      this.transport
        .send(message, { requestSignal: stream.signal, ...(context?.headers ? { headers: context.headers } : {}) })
        .catch((error: unknown) => finish(error instanceof Error ? error : new Error(String(error))));
    });
  }

  /** Fails every request still waiting, and those made later. */
  closeAll(error: Error): void {
    this.closedWith ??= error;
    for (const waiting of [...this.waiting.values()]) waiting.settle(error);
  }

  /** An answer to one of ours: handed to its request (and kept from the SDK, which would call it unknown). */
  private takeAnswer(message: JSONRPCMessage): boolean {
    const { id } = message as { id?: unknown };
    if (typeof id !== "string" || !id.startsWith(ID_PREFIX) || "method" in message) return false;
    const waiting = this.waiting.get(id);
    // An answer that came after its request gave up is ours all the same: the SDK would only report it as unknown.
    if (!waiting) return true;
    const answer = message as { result?: unknown; error?: unknown };
    if (isJsonObject(answer.error)) {
      const { code, message: text, data } = answer.error;
      waiting.settle({
        kind: "error",
        error: {
          code: typeof code === "number" ? code : -32603,
          message: typeof text === "string" ? text : "error",
          ...(data === undefined ? {} : { data: data as JsonValue }),
        },
      });
    } else waiting.settle({ kind: "result", result: (answer.result ?? null) as JsonValue });
    return true;
  }
}

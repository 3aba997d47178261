/**
 * Runs one script in its own engine thread (script/engine-worker.mjs) and answers what it asks of the host.
 *
 * The limits are kept here, on the host thread: the wall-clock limit ends the thread whatever the script does (a
 * loop that never awaits included), the memory limit is the VM's own (an allocation past it fails inside the
 * script), and the thread's V8 heap is capped as well so the relay itself cannot grow without bound. Cancelling the
 * tool call (the user pressing Esc) ends the thread and every host call it started.
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import { errorMessage, isJsonObject } from "../util/guards.ts";
import { PRELUDE_SOURCE, SCRIPT_FILE_NAME, wrapScript } from "./prelude.ts";

/**
 * A compiled WebAssembly module. The type libraries here (ES2023, Node 20's types) declare neither Node's global
 * `WebAssembly` nor its types, so the module is opaque to this code, which only hands it to the engine's thread.
 */
type WasmModule = object;
/** Node's global `WebAssembly`. */
const wasmCompiler = (globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<WasmModule> } }).WebAssembly;

const WORKER_URL = new URL("./engine-worker.mjs", import.meta.url);
/** The engine thread must be running by then (compiling and starting take ~0.1 s; much longer on a loaded machine). */
const START_LIMIT_MS = 30_000;
/** The thread's own JavaScript heap: the relay's messages, not the script's values (those live in the VM). */
const WORKER_HEAP_MB = 64;

export interface SandboxLimits {
  timeoutMs: number;
  memoryBytes: number;
}

/** A tool or helper the script may call: `kind` is "tool", "searchTools", "describeTool" or "describeNamespace". */
export type HostCall = (kind: string, payload: unknown, signal: AbortSignal) => Promise<unknown>;

export interface ScriptOutput {
  /** `text()` and `console.*` lines, in order. */
  printed: string[];
  /** The return value as text, when the script returned one. */
  value?: string;
}

export type ScriptRun =
  | ({ ok: true } & ScriptOutput)
  | ({ ok: false; reason: "error"; error: ScriptError } & ScriptOutput)
  | ({ ok: false; reason: "timeout" | "memory" | "aborted" | "crashed"; detail?: string } & ScriptOutput);

export interface ScriptError {
  name: string;
  message: string;
  stack: string;
  tool?: string;
}

/** A tool call's failure, as the script sees it: its message, and the tool it names. */
export class HostCallError extends Error {
  readonly tool?: string;
  constructor(message: string, tool?: string) {
    super(message);
    this.tool = tool;
  }
}

interface CatalogEntry {
  name: string;
  description: string;
}

let engine: Promise<WasmModule> | undefined;

/** Reads and compiles QuickJS's wasm (~0.6 MB). */
export async function compileEngine(): Promise<WasmModule> {
  return wasmCompiler.compile(await readFile(createRequire(import.meta.url).resolve("quickjs-wasi/quickjs.wasm")));
}

/** QuickJS compiled once per process; every script's thread instantiates its own VM from it. */
function compiledEngine(): Promise<WasmModule> {
  engine ??= compileEngine();
  // A failed compile is not kept: the next script tries again.
  engine.catch(() => (engine = undefined));
  return engine;
}

export async function runInSandbox(
  code: string,
  catalog: readonly CatalogEntry[],
  hostCall: HostCall,
  limits: SandboxLimits,
  signal: AbortSignal | undefined,
): Promise<ScriptRun> {
  const printed: string[] = [];
  let wasm: WasmModule;
  try {
    wasm = await compiledEngine();
  } catch (error) {
    return { ok: false, reason: "crashed", detail: `QuickJS could not be loaded: ${errorMessage(error)}`, printed };
  }
  const calls = new AbortController();
  const worker = new Worker(WORKER_URL, {
    workerData: {
      wasm,
      prelude: PRELUDE_SOURCE,
      script: wrapScript(code),
      fileName: SCRIPT_FILE_NAME,
      catalogJson: JSON.stringify(catalog),
      memoryLimitBytes: limits.memoryBytes,
    },
    resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
    stdout: true,
    stderr: true,
  });
  return new Promise<ScriptRun>((resolve) => {
    let settled = false;
    const end = (run: ScriptRun) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      calls.abort();
      void worker.terminate();
      resolve(run);
    };
    const onAbort = () => end({ ok: false, reason: "aborted", printed });
    // The script's clock starts once its VM is up: a slow start on a busy machine is not the script's time.
    let timer = setTimeout(
      () => end({ ok: false, reason: "crashed", detail: `the engine did not start within ${START_LIMIT_MS / 1000} s`, printed }),
      START_LIMIT_MS,
    );
    if (signal?.aborted) return onAbort();
    signal?.addEventListener("abort", onAbort, { once: true });

    worker.on("message", (message: unknown) => {
      if (!isJsonObject(message) || settled) return;
      if (message.type === "print") printed.push(String(message.text));
      else if (message.type === "ready") {
        clearTimeout(timer);
        timer = setTimeout(() => end({ ok: false, reason: "timeout", printed }), limits.timeoutMs);
      } else if (message.type === "call") answer(worker, message, hostCall, calls.signal);
      else if (message.type === "done") end(finished(message, printed));
    });
    worker.on("error", (error) =>
      end({ ok: false, reason: isOutOfMemory(error) ? "memory" : "crashed", detail: errorMessage(error), printed }),
    );
    worker.on("exit", (code) => end({ ok: false, reason: "crashed", detail: `the engine thread exited (code ${code})`, printed }));
  });
}

function finished(message: Record<string, unknown>, printed: string[]): ScriptRun {
  const text = String(message.text);
  if (message.ok === true) return message.hasValue === true ? { ok: true, printed, value: text } : { ok: true, printed };
  const error = parseError(text);
  if (/out of memory/i.test(error.message)) return { ok: false, reason: "memory", printed };
  return { ok: false, reason: "error", error, printed };
}

function parseError(text: string): ScriptError {
  try {
    const parsed: unknown = JSON.parse(text);
    if (isJsonObject(parsed)) {
      return {
        name: String(parsed.name ?? "Error"),
        message: String(parsed.message ?? ""),
        stack: String(parsed.stack ?? ""),
        tool: typeof parsed.tool === "string" ? parsed.tool : undefined,
      };
    }
  } catch {
    // Not JSON: the text is the message.
  }
  return { name: "Error", message: text, stack: "" };
}

/** Answers one host call; its failure reaches the script as a rejected promise, never as a crash here. */
function answer(worker: Worker, message: Record<string, unknown>, hostCall: HostCall, signal: AbortSignal): void {
  const id = message.id;
  let payload: unknown;
  try {
    payload = JSON.parse(String(message.payload));
  } catch {
    payload = null;
  }
  hostCall(String(message.kind), payload, signal).then(
    (value) => reply(worker, id, { ok: true, value }),
    (error: unknown) =>
      reply(worker, id, { ok: false, error: errorMessage(error), tool: error instanceof HostCallError ? error.tool : undefined }),
  );
}

function reply(worker: Worker, id: unknown, reply: Record<string, unknown>): void {
  let text: string;
  try {
    text = JSON.stringify(reply);
  } catch (error) {
    text = JSON.stringify({ ok: false, error: `the result could not be passed to the script: ${errorMessage(error)}` });
  }
  try {
    worker.postMessage({ type: "reply", id, reply: text });
  } catch {
    // The thread is gone (the script ended meanwhile): nobody is waiting for this answer.
  }
}

function isOutOfMemory(error: unknown): boolean {
  return (error as { code?: unknown }).code === "ERR_WORKER_OUT_OF_MEMORY" || /out of memory/i.test(errorMessage(error));
}

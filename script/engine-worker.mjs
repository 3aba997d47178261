/**
 * The engine thread of one script (started by script/sandbox.ts): a fresh QuickJS VM (quickjs-wasi, a WebAssembly
 * instance with its own linear memory and a memory limit) that runs the prelude and the script, and relays what the
 * script asks of the host as messages. Plain JavaScript because Node starts a worker from a file it can run as it is,
 * and the extension is loaded as TypeScript source.
 *
 * Why a worker: QuickJS runs synchronously, so a script computing in a loop would hold the thread it runs on. Here it
 * holds only this thread; the host thread ends it with `worker.terminate()` at its time limit.
 *
 * Messages to the host: `{ type: "ready" }` (the VM is up: the script's clock starts), `{ type: "call", id, kind, payload }` (payload is JSON text), `{ type: "print", channel,
 * text }`, `{ type: "done", ok, text, hasValue }` (`text`: the value shown as text, or the error as JSON text). From the
 * host: `{ type: "reply", id, reply }` (JSON text `{ ok, value }` or `{ ok: false, error }`).
 */
import { parentPort, workerData } from "node:worker_threads";
import { QuickJS } from "quickjs-wasi";

// `wasm`: the compiled module (compiled once by the host thread); this VM is a new instance of it.
const { wasm, prelude, script, fileName, catalogJson, memoryLimitBytes } = workerData;

const vm = await QuickJS.create({ wasm, memoryLimit: memoryLimitBytes, timezoneOffset: 0 });
post({ type: "ready" });
const pending = new Map();
let nextId = 1;
let finished = false;

function post(message) {
  parentPort.postMessage(message);
}

/** Runs the VM's queued jobs; a script that is neither done nor waiting on the host can never go on. */
function drain() {
  vm.executePendingJobs();
  if (!finished && pending.size === 0) {
    finished = true;
    const error = {
      name: "Error",
      message: "the script waits on a promise that can never settle (there are no timers; await tool calls)",
      stack: "",
    };
    post({ type: "done", ok: false, text: JSON.stringify(error), hasValue: false });
  }
}

const hostCall = vm.newFunction("hostCall", (kind, payload) => {
  const id = nextId++;
  const deferred = vm.newPromise();
  pending.set(id, deferred);
  post({ type: "call", id, kind: kind.toString(), payload: payload.toString() });
  return deferred.handle;
});
const print = vm.newFunction("print", (channel, text) => {
  post({ type: "print", channel: channel.toString(), text: text.toString() });
  return vm.undefined;
});
const finish = vm.newFunction("finish", (ok, text, hasValue) => {
  finished = true;
  post({ type: "done", ok: ok.toBoolean(), text: text.toString(), hasValue: hasValue.toBoolean() });
  return vm.undefined;
});

parentPort.on("message", (message) => {
  if (message.type !== "reply") return;
  const deferred = pending.get(message.id);
  if (!deferred) return;
  pending.delete(message.id);
  const reply = vm.newString(message.reply);
  deferred.resolve(reply);
  reply.dispose();
  drain();
});

try {
  const setUp = vm.evalCode(prelude, "prelude.js");
  const catalog = vm.newString(catalogJson);
  const run = vm.callFunction(setUp, vm.undefined, hostCall, print, finish, catalog);
  catalog.dispose();
  setUp.dispose();
  // Compiled after the prelude: a syntax error is reported like any other error, with its line.
  const body = vm.evalCode(script, fileName);
  vm.callFunction(run, vm.undefined, body).dispose();
  body.dispose();
  run.dispose();
  drain();
} catch (error) {
  finished = true;
  const described = { name: error?.name ?? "Error", message: String(error?.message ?? error), stack: String(error?.stack ?? "") };
  post({ type: "done", ok: false, text: JSON.stringify(described), hasValue: false });
}

/**
 * 7a. The two WebAssembly JavaScript engines from npm the script tool could use (issue 22), side by side in one
 * process: `quickjs-wasi` (QuickJS-NG; what Pi 1.x codemode uses; chosen) and `quickjs-emscripten` (QuickJS, its
 * release-sync build). For each: loading the engine (read + compile the wasm once), starting one VM (median of
 * VM_STARTS; for quickjs-emscripten a new module instance per VM, the same isolation as a new quickjs-wasi VM: its
 * runtimes in one module share one wasm memory), the resident memory each live VM adds, and the cost of one async
 * host call from a script (a host function answering with a promise resolved from the host, as a tool call is).
 * In this thread, no worker: the engines alone.
 *
 *   node node_modules/jiti/lib/jiti-cli.mjs bench/script-engines.ts
 */
import { compileEngine } from "../script/sandbox.ts";
import { fixed, median, table } from "./measure.ts";

const VM_STARTS = 20;
const LIVE_VMS = 20;
const CALLS = 2_000;
const CALL_LOOP = `(async () => { let n = 0; for (let i = 0; i < ${CALLS}; i++) n += (await host(String(i))).length; return n; })()`;

interface EngineFigures {
  loadMs: number;
  startMs: number;
  perVmMiB: number;
  perCallUs: number;
}

const rssMiB = () => process.memoryUsage().rss / 2 ** 20;

async function timed<T>(work: () => Promise<T>): Promise<[T, number]> {
  const start = performance.now();
  const value = await work();
  return [value, performance.now() - start];
}

async function quickjsWasi(): Promise<EngineFigures> {
  const { QuickJS } = await import("quickjs-wasi");
  const [wasm, loadMs] = await timed(compileEngine);
  const starts: number[] = [];
  for (let i = 0; i < VM_STARTS; i++) {
    const [vm, ms] = await timed(() => QuickJS.create({ wasm, memoryLimit: 64 * 2 ** 20 }));
    starts.push(ms);
    vm.dispose();
  }
  const before = rssMiB();
  const live = await Promise.all(Array.from({ length: LIVE_VMS }, () => QuickJS.create({ wasm, memoryLimit: 64 * 2 ** 20 })));
  const perVmMiB = (rssMiB() - before) / LIVE_VMS;
  for (const vm of live) vm.dispose();

  const vm = await QuickJS.create({ wasm, memoryLimit: 64 * 2 ** 20 });
  const host = vm.newFunction("host", (arg) => {
    const text = arg.toString();
    const deferred = vm.newPromise();
    queueMicrotask(() => {
      deferred.resolve(vm.newString(`${text}!`));
      vm.executePendingJobs();
    });
    return deferred.handle;
  });
  vm.setProp(vm.global, "host", host);
  host.dispose();
  const [, loopMs] = await timed(async () => {
    const promise = vm.evalCode(CALL_LOOP);
    vm.executePendingJobs();
    const settled = await vm.resolvePromise(promise);
    if (!("value" in settled)) throw new Error("quickjs-wasi: the call loop failed");
  });
  vm.dispose();
  return { loadMs, startMs: median(starts), perVmMiB, perCallUs: (loopMs / CALLS) * 1000 };
}

async function quickjsEmscripten(): Promise<EngineFigures> {
  const { newQuickJSWASMModule, RELEASE_SYNC } = await import("quickjs-emscripten");
  const [module, loadMs] = await timed(() => newQuickJSWASMModule(RELEASE_SYNC));
  const starts: number[] = [];
  for (let i = 0; i < VM_STARTS; i++) {
    const [context, ms] = await timed(async () => {
      const runtime = (await newQuickJSWASMModule(RELEASE_SYNC)).newRuntime();
      runtime.setMemoryLimit(64 * 2 ** 20);
      return runtime.newContext();
    });
    starts.push(ms);
    const { runtime } = context;
    context.dispose();
    runtime.dispose();
  }
  const before = rssMiB();
  const live = await Promise.all(
    Array.from({ length: LIVE_VMS }, async () => (await newQuickJSWASMModule(RELEASE_SYNC)).newRuntime().newContext()),
  );
  const perVmMiB = (rssMiB() - before) / LIVE_VMS;
  for (const context of live) {
    const { runtime } = context;
    context.dispose();
    runtime.dispose();
  }

  const runtime = module.newRuntime();
  runtime.setMemoryLimit(64 * 2 ** 20);
  const vm = runtime.newContext();
  const host = vm.newFunction("host", (arg) => {
    const text = vm.getString(arg);
    const deferred = vm.newPromise();
    queueMicrotask(() => {
      const answer = vm.newString(`${text}!`);
      deferred.resolve(answer);
      answer.dispose();
      deferred.dispose();
      runtime.executePendingJobs();
    });
    return deferred.handle;
  });
  vm.setProp(vm.global, "host", host);
  host.dispose();
  const [, loopMs] = await timed(async () => {
    const promise = vm.unwrapResult(vm.evalCode(CALL_LOOP));
    runtime.executePendingJobs();
    const settled = await vm.resolvePromise(promise);
    promise.dispose();
    if (settled.error) throw new Error("quickjs-emscripten: the call loop failed");
    settled.value.dispose();
  });
  vm.dispose();
  runtime.dispose();
  return { loadMs, startMs: median(starts), perVmMiB, perCallUs: (loopMs / CALLS) * 1000 };
}

const rows: [string, EngineFigures][] = [
  ["quickjs-wasi 3.6.2 (QuickJS-NG)", await quickjsWasi()],
  ["quickjs-emscripten 0.32.0 (QuickJS, release-sync)", await quickjsEmscripten()],
];
console.log(`Engines in one process (Node ${process.version}); ${VM_STARTS} VM starts, ${LIVE_VMS} live VMs, ${CALLS} host calls:\n`);
console.log(
  table(
    ["engine", "load + compile, ms", "VM start, ms (median)", "resident memory per live VM, MiB", "async host call, µs"],
    rows.map(([name, figures]) => [
      name,
      fixed(figures.loadMs),
      fixed(figures.startMs, 1),
      fixed(figures.perVmMiB, 2),
      fixed(figures.perCallUs),
    ]),
  ),
);

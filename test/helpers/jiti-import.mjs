/**
 * Imports one module of ours the way Pi loads an extension (jiti, `moduleCache: false`, Pi's aliases), after Pi's own
 * index so that Pi's modules are not counted, in the fresh process this script runs in (see module-load.ts). Plain
 * JavaScript, run by Node itself: loading it through jiti would warm what is measured.
 *
 *   node test/helpers/jiti-import.mjs <pi package dir> <pi-ai entry> <module file> [--trace]
 *
 * Prints one JSON line: `{"ms": <time of jiti.import>, "loaded": [<ES module URLs Node loaded meanwhile>]}`, `loaded`
 * only with --trace (the loader hook that records them slows every load, so traced runs are not timed ones).
 */
import { createRequire, register } from "node:module";
import { dirname, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { MessageChannel } from "node:worker_threads";

const [piDir, piAiEntry, target] = process.argv.slice(2);
const trace = process.argv.includes("--trace");

const loaded = [];
if (trace) {
  const { port1, port2 } = new MessageChannel();
  port1.on("message", (url) => loaded.push(url));
  port1.unref();
  const hook = `export async function initialize({ port }) { globalThis.port = port; }
export async function load(url, context, next) { globalThis.port.postMessage(url); return next(url, context); }`;
  register(`data:text/javascript,${encodeURIComponent(hook)}`, { data: { port: port2 }, transferList: [port2] });
}
// The hook thread posts asynchronously: let its messages arrive.
const settle = () => new Promise((done) => setTimeout(done, 100));

const piIndex = resolve(piDir, "dist/index.js");
await import(pathToFileURL(piIndex).href);
const piRequire = createRequire(piIndex);
// Pi's extension loader creates its jiti from its own dependency, with these options (dist/core/extensions/loader.js).
const jitiDir = dirname(piRequire.resolve("jiti/package.json"));
const { createJiti } = await import(pathToFileURL(resolve(jitiDir, "lib/jiti-static.mjs")).href);
const jiti = createJiti(piIndex, {
  moduleCache: false,
  alias: { "@mariozechner/pi-coding-agent": piIndex, "@mariozechner/pi-ai": piAiEntry, typebox: piRequire.resolve("typebox") },
});

if (trace) {
  await settle();
  loaded.length = 0; // Pi's own modules
}
const start = performance.now();
await jiti.import(target, { default: true });
const ms = performance.now() - start;
if (trace) await settle();
console.log(JSON.stringify(trace ? { ms, loaded } : { ms }));

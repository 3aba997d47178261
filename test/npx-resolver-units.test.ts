/**
 * The pure parts of npx resolution: reading npx / npm exec command lines (including the Windows forms), npm's
 * install-directory hash, bin normalisation and choice, shebangs, env config lookup and the resolver's cache file.
 * The end-to-end behaviour against a real npm cache is in npx-resolver.test.ts.
 */
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { npmEnvConfig, npxInstallDir } from "../npm-locations.ts";
import { normalizeBins, parseShebang, selectBinName, spawnFormFor } from "../npx-bins.ts";
import { type NpxInvocation, parseNpxInvocation } from "../npx-invocation.ts";
import { npxCacheFile, readCachedResolution, storeResolution } from "../npx-resolver-cache.ts";

function invocation(command: string, ...args: string[]): NpxInvocation {
  const parsed = parseNpxInvocation(command, args);
  if (!parsed || !("invocation" in parsed)) throw new Error(`not resolvable: ${JSON.stringify(parsed)}`);
  return parsed.invocation;
}

function unsupported(command: string, ...args: string[]): string {
  const parsed = parseNpxInvocation(command, args);
  if (!parsed || !("unsupported" in parsed)) throw new Error(`expected unsupported: ${JSON.stringify(parsed)}`);
  return parsed.unsupported;
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
  // Directory names npm 11 created for these npx command lines (see docs/mcp-hosts.md 2.1).
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
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "npx-bins-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

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
  beforeEach(async () => {
    agentDir = await mkdtemp(join(tmpdir(), "npx-cache-file-"));
  });
  afterEach(async () => {
    await rm(agentDir, { recursive: true, force: true });
  });
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

/**
 * npx resolution against a real `_npx` cache that npm itself populates in a temp npm cache: the resolved command
 * must run the very program npx runs (same install directory, version, bin), never a look-alike, and fall back to
 * npx whenever that is not certain.
 */
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { execFile, spawn } from "node:child_process";
import { chmod, mkdir, mkdtemp, readFile, realpath, rm, stat, utimes, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join, sep } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commandLine, descendantPids } from "../bench/proc-tree.ts";
import { npxInstallDir } from "../npx/npm-locations.ts";
import type { NpxResolved } from "../npx/resolution.ts";
import type { NpxResolution } from "../npx/resolution.ts";
import { resolveNpxCommand } from "../npx-resolver.ts";
import { npxCacheFile } from "../npx/resolution-cache.ts";
import { McpServerManager } from "../server-manager.ts";
import { STDIO_FIXTURE, serverDef } from "./server-manager-helpers.ts";

const SETUP_TIMEOUT_MS = 240_000;
const NPM_TIMEOUT_MS = 180_000;
const DAY_MS = 24 * 60 * 60 * 1000;

interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

let root: string;
let cache: string;
let project: string;
let baseEnv: NodeJS.ProcessEnv;
let agentCount = 0;
const npxOutput = new Map<string, RunResult>();

/** The commands npx ran during setup, keyed by a name; their output is what the resolved commands must reproduce. */
const NPX_RUNS: Record<string, string[]> = {
  pinned: ["-y", "semver@7.6.3", "--help"],
  range: ["-y", "semver@^6", "--help"],
  bare: ["-y", "semver", "--help"],
  tag: ["-y", "semver@latest", "--help"],
  twoPackages: ["-y", "-p", "semver@7.6.3", "-p", "which@4.0.0", "node-which", "node"],
};

function run(command: string, args: readonly string[], env = baseEnv, cwd = project): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd, env, timeout: NPM_TIMEOUT_MS, maxBuffer: 8 << 20 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** A fresh agent directory, so each test starts without remembered resolutions. */
async function freshAgentDir(): Promise<string> {
  const dir = join(root, `agent-${++agentCount}`);
  await mkdir(dir);
  return dir;
}

interface ResolveOptions {
  agentDir?: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

async function resolveWith(command: string, args: string[], options: ResolveOptions = {}): Promise<NpxResolution | undefined> {
  return resolveNpxCommand(command, args, {
    agentDir: options.agentDir ?? (await freshAgentDir()),
    env: options.env ?? baseEnv,
    cwd: options.cwd ?? project,
  });
}

async function resolveOrFail(command: string, args: string[], options: ResolveOptions = {}): Promise<NpxResolved> {
  const resolution = await resolveWith(command, args, options);
  if (resolution?.kind !== "resolved") throw new Error(`not resolved: ${resolution?.reason ?? "not an npx command"}`);
  return resolution;
}

/** Why the resolver leaves the command to npx (it must leave it). */
async function fallbackReason(command: string, args: string[], options: ResolveOptions = {}): Promise<string> {
  const resolution = await resolveWith(command, args, options);
  if (resolution?.kind !== "fallback") throw new Error(`expected a fallback: ${JSON.stringify(resolution)}`);
  return resolution.reason;
}

function installDirOf(...specs: string[]): string {
  return npxInstallDir(cache, specs, project);
}

/** An `npm` first on PATH that logs each call (its arguments) before handing over to the real npm. */
async function countingNpm(name: string): Promise<{ env: NodeJS.ProcessEnv; calls: () => Promise<string[]> }> {
  const realNpm = (process.env.PATH ?? "")
    .split(delimiter)
    .map((dir) => join(dir, "npm"))
    .find((path) => existsSync(path));
  if (!realNpm) throw new Error("npm not found on PATH");
  const binDir = join(root, `counting-npm-${name}`);
  const log = join(binDir, "calls.log");
  await mkdir(binDir);
  await writeFile(join(binDir, "npm"), `#!/bin/sh\necho "$*" >> '${log}'\nexec '${realNpm}' "$@"\n`);
  await chmod(join(binDir, "npm"), 0o755);
  const env = { ...baseEnv, PATH: `${binDir}${delimiter}${baseEnv.PATH}` };
  const calls = async () => (await readFile(log, "utf8").catch(() => "")).split("\n").filter(Boolean);
  return { env, calls };
}

async function ageInstall(installDir: string): Promise<void> {
  const old = new Date(Date.now() - DAY_MS - 60 * 60 * 1000);
  await utimes(join(installDir, "package-lock.json"), old, old);
}

beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), "npx-resolver-")));
  cache = join(root, "npm-cache");
  project = join(root, "project");
  await mkdir(project);
  await mkdir(join(root, "global"));
  await writeFile(join(root, "npmrc"), "");
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_config_/i.test(name)));
  // An isolated npm: own cache, empty global prefix, no user config (so the machine's .npmrc cannot change answers).
  baseEnv = {
    ...inherited,
    npm_config_cache: cache,
    npm_config_prefix: join(root, "global"),
    npm_config_userconfig: join(root, "npmrc"),
    npm_config_update_notifier: "false",
    npm_config_fund: "false",
    npm_config_audit: "false",
    MEMORY_FILE_PATH: join(root, "memory.jsonl"),
  };
  const npxRuns = Object.entries(NPX_RUNS).map(async ([name, args]) => npxOutput.set(name, await run("npx", args)));
  // Installs no npx run can make (no bin to run): a package hoisting semver 6, and the realistic MCP server.
  const installs = ["make-dir@3.1.0", "@modelcontextprotocol/server-memory"].map(async (spec) => {
    const result = await run("npm", ["exec", "--yes", `--package=${spec}`, "--", "node", "--version"]);
    if (result.code !== 0) throw new Error(`npm exec ${spec} failed: ${result.stderr}`);
  });
  await Promise.all([...npxRuns, ...installs]);
  for (const [name, result] of npxOutput) if (result.code !== 0) throw new Error(`npx ${name} failed: ${result.stderr}`);
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

describe("resolving from npm's own _npx install", () => {
  it("runs what npx ran for an exact version, a range, a bare name and a tag, each from its own install", async () => {
    const cases = [
      ["pinned", "semver@7.6.3"],
      ["range", "semver@^6"],
      ["bare", "semver"],
      ["tag", "semver@latest"],
    ] as const;
    for (const [name, spec] of cases) {
      const resolved = await resolveOrFail("npx", NPX_RUNS[name]);
      expect(resolved.command).toBe("node");
      expect(resolved.args[0].startsWith(installDirOf(spec) + sep)).toBe(true);
      expect(resolved.args.slice(1)).toEqual(["--help"]);
      expect((await run(resolved.command, resolved.args)).stdout).toBe(npxOutput.get(name)!.stdout);
    }
    expect(npxOutput.get("pinned")!.stdout).toMatch(/^SemVer 7\.6\.3\n/);
    expect(npxOutput.get("range")!.stdout).toMatch(/^SemVer 6\./);
  });

  it("runs a scoped MCP server's single bin, the same file npx starts", async () => {
    const resolved = await resolveOrFail("npx", ["-y", "@modelcontextprotocol/server-memory"]);
    const expectedBin = join(
      installDirOf("@modelcontextprotocol/server-memory"),
      "node_modules",
      "@modelcontextprotocol",
      "server-memory",
      "dist",
      "index.js",
    );
    expect(resolved).toEqual({ kind: "resolved", command: "node", args: [expectedBin], binPath: expectedBin });

    const client = new Client({ name: "npx-resolver-test", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({
        command: resolved.command,
        args: resolved.args,
        env: baseEnv as Record<string, string>,
        cwd: project,
        stderr: "ignore",
      }),
    );
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain("create_entities");
    } finally {
      await client.close();
    }

    if (process.platform === "linux") expect(await programStartedByNpx(["-y", "@modelcontextprotocol/server-memory"])).toBe(expectedBin);
  });

  it("-p: the word after the packages is a command, from any of them, in one shared install", async () => {
    const which = await resolveOrFail("npx", NPX_RUNS.twoPackages);
    const sharedDir = installDirOf("semver@7.6.3", "which@4.0.0");
    expect(which.args[0]).toBe(join(sharedDir, "node_modules", "which", "bin", "which.js"));
    expect((await run(which.command, which.args)).stdout).toBe(npxOutput.get("twoPackages")!.stdout);

    const semver = await resolveOrFail("npx", ["-y", "-p", "which@4.0.0", "-p", "semver@7.6.3", "semver", "--help"]);
    expect(semver.args[0]).toBe(join(sharedDir, "node_modules", "semver", "bin", "semver.js"));
    expect((await run(semver.command, semver.args)).stdout).toMatch(/^SemVer 7\.6\.3\n/);

    // A system command: npx would run it with the install's bins on PATH, which a plain command cannot carry.
    const system = await fallbackReason("npx", ["-y", "-p", "semver@7.6.3", "-p", "which@4.0.0", "node", "-e", "1"]);
    expect(system).toMatch(/node is not a bin/);
  });

  it("never takes a same-named package hoisted into another install; installs its own, once for concurrent starts", async () => {
    const hoisted = JSON.parse(await readFile(join(installDirOf("make-dir@3.1.0"), "node_modules", "semver", "package.json"), "utf8"));
    expect(hoisted.version).toMatch(/^6\./);
    const spec = `semver@${hoisted.version}`;

    expect(await fallbackReason("npx", ["--no-install", spec, "--help"])).toMatch(/npm exec failed/);
    expect((await run("npx", ["--no-install", spec, "--help"])).code).not.toBe(0);

    const npm = await countingNpm("hoisting");
    const [direct, viaPackage] = await Promise.all([
      resolveOrFail("npx", ["-y", spec, "--help"], { env: npm.env }),
      resolveOrFail("npx", ["-y", "-p", spec, "semver", "--help"], { env: npm.env }),
    ]);
    const ownBin = join(installDirOf(spec), "node_modules", "semver", "bin", "semver.js");
    expect(direct.args[0]).toBe(ownBin);
    expect(viaPackage.args[0]).toBe(ownBin);
    expect((await npm.calls()).filter((call) => call.startsWith("exec "))).toHaveLength(1);
    expect((await run(direct.command, direct.args)).stdout).toMatch(new RegExp(`^SemVer ${hoisted.version}\n`));
  });

  it("runs a directory package as npx links it", async () => {
    const pkgDir = join(root, "dir-package");
    await mkdir(pkgDir);
    await writeFile(join(pkgDir, "package.json"), JSON.stringify({ name: "npx-dir-fixture", version: "1.0.0", bin: "cli.js" }));
    await writeFile(join(pkgDir, "cli.js"), "#!/usr/bin/env node\nconsole.log('fixture', process.argv.slice(2).join(' '));\n");
    await chmod(join(pkgDir, "cli.js"), 0o755);

    const resolved = await resolveOrFail("npx", ["-y", "../dir-package", "hello"]);
    expect(resolved).toEqual({
      kind: "resolved",
      command: "node",
      args: [join(pkgDir, "cli.js"), "hello"],
      binPath: join(pkgDir, "cli.js"),
    });
    expect(existsSync(join(installDirOf(pkgDir), "node_modules", "npx-dir-fixture"))).toBe(true);
    const viaNpx = await run("npx", ["-y", "../dir-package", "hello"]);
    expect((await run(resolved.command, resolved.args)).stdout).toBe(viaNpx.stdout);
    expect(viaNpx.stdout).toBe("fixture hello\n");
  });

  it("reads the Windows forms and a path to npx like plain npx", async () => {
    const plain = await resolveOrFail("npx", NPX_RUNS.pinned);
    expect(await resolveOrFail("cmd", ["/c", "npx", ...NPX_RUNS.pinned])).toEqual(plain);
    expect(await resolveOrFail("npx.cmd", NPX_RUNS.pinned)).toEqual(plain);
    const npxPath = (process.env.PATH ?? "")
      .split(delimiter)
      .map((dir) => join(dir, "npx"))
      .find((path) => existsSync(path))!;
    expect(await resolveOrFail(npxPath, NPX_RUNS.pinned)).toEqual(plain);
  });
});

describe("when npx would ask the registry", () => {
  it("has npm re-check a tag or range once its install is a day old, then trusts it for a day; never an exact pin", async () => {
    const npm = await countingNpm("freshness");
    const execCalls = async () => (await npm.calls()).filter((call) => call.startsWith("exec ")).length;
    const agentDir = await freshAgentDir();

    await ageInstall(installDirOf("semver"));
    expect((await resolveOrFail("npx", NPX_RUNS.bare, { env: npm.env, agentDir })).args[0]).toContain(installDirOf("semver"));
    expect(await execCalls()).toBe(1);
    await resolveOrFail("npx", NPX_RUNS.bare, { env: npm.env, agentDir });
    expect(await execCalls()).toBe(1);

    await ageInstall(installDirOf("semver@7.6.3"));
    await resolveOrFail("npx", NPX_RUNS.pinned, { env: npm.env });
    await ageInstall(installDirOf("semver@latest"));
    // --prefer-offline: npx itself takes the cached install without asking.
    const offline = await resolveOrFail("npx", ["-y", "--prefer-offline", "semver@latest"], { env: npm.env });
    expect(offline.args[0]).toContain(installDirOf("semver@latest"));
    expect(await execCalls()).toBe(1);
  });
});

describe("finding npm's cache", () => {
  it("reads npm_config_cache in either letter case", async () => {
    const { npm_config_cache: _lowercase, ...withoutCache } = baseEnv;
    const upper = await resolveOrFail("npx", NPX_RUNS.pinned, { env: { ...withoutCache, NPM_CONFIG_CACHE: cache } });
    const lower = await resolveOrFail("npx", NPX_RUNS.pinned, { env: { ...withoutCache, npm_config_cache: cache } });
    expect(upper).toEqual(lower);
    expect(upper.args[0].startsWith(installDirOf("semver@7.6.3"))).toBe(true);
  });

  it("otherwise asks npm for its configured cache, once", async () => {
    const npm = await countingNpm("config");
    const npmrc = join(root, "npmrc-with-cache");
    await writeFile(npmrc, `cache=${cache}\n`);
    const { npm_config_cache: _cache, npm_config_prefix: _prefix, ...env } = npm.env;
    env.npm_config_userconfig = npmrc;
    const pinned = await resolveOrFail("npx", NPX_RUNS.pinned, { env });
    const range = await resolveOrFail("npx", NPX_RUNS.range, { env });
    expect(pinned.args[0].startsWith(installDirOf("semver@7.6.3"))).toBe(true);
    expect(range.args[0].startsWith(installDirOf("semver@^6"))).toBe(true);
    expect((await npm.calls()).filter((call) => call.startsWith("config get"))).toHaveLength(1);
  });
});

describe("remembered resolutions", () => {
  it("replaces a damaged cache file with a valid private one", async () => {
    const agentDir = await freshAgentDir();
    await writeFile(npxCacheFile(agentDir), "{ this is not json");
    const resolved = await resolveOrFail("npx", NPX_RUNS.pinned, { agentDir });
    const stored = JSON.parse(await readFile(npxCacheFile(agentDir), "utf8"));
    expect(Object.values(stored.entries)).toEqual([expect.objectContaining({ binPath: resolved.args[0] })]);
    expect((await stat(npxCacheFile(agentDir))).mode & 0o777).toBe(0o600);
  });

  it("re-derives a remembered resolution whose bin is gone", async () => {
    const agentDir = await freshAgentDir();
    const first = await resolveOrFail("npx", NPX_RUNS.pinned, { agentDir });
    const file = npxCacheFile(agentDir);
    const stored = JSON.parse(await readFile(file, "utf8"));
    for (const entry of Object.values<{ args: string[]; binPath: string }>(stored.entries)) {
      entry.binPath = join(root, "gone.js");
      entry.args = [entry.binPath];
    }
    await writeFile(file, JSON.stringify(stored));
    expect(await resolveOrFail("npx", NPX_RUNS.pinned, { agentDir })).toEqual(first);
  });
});

describe("leaving npx to decide", () => {
  it("when the project or a global install would take precedence", async () => {
    const withBin = join(root, "project-with-bin");
    await mkdir(join(withBin, "node_modules", ".bin"), { recursive: true });
    await writeFile(join(withBin, "node_modules", ".bin", "semver"), "");
    expect(await fallbackReason("npx", NPX_RUNS.bare, { cwd: withBin })).toMatch(/\.bin.semver exists/);

    const withPackage = join(root, "project-with-package");
    await mkdir(join(withPackage, "node_modules", "semver"), { recursive: true });
    expect(await fallbackReason("npx", NPX_RUNS.pinned, { cwd: withPackage })).toMatch(
      /^npx would not use its own install: semver is installed in/,
    );

    const globalPrefix = join(root, "global-with-semver");
    await mkdir(join(globalPrefix, "bin"), { recursive: true });
    await writeFile(join(globalPrefix, "bin", "semver"), "");
    const global = await fallbackReason("npx", NPX_RUNS.bare, { env: { ...baseEnv, npm_config_prefix: globalPrefix } });
    expect(global).toMatch(/installed globally/);
  });

  it("when npm could not pick a bin, the spec is not a registry one, or the line has options we do not model", async () => {
    expect(await fallbackReason("npx", ["-y", "make-dir@3.1.0"])).toMatch(/make-dir has no bin/);
    expect(await fallbackReason("npx", ["-y", "github:npm/node-semver"])).toBe("unsupported package spec github:npm/node-semver (git)");
    expect(await fallbackReason("npx", ["-y", "https://example.invalid/x.tgz"])).toBe(
      "unsupported package spec https://example.invalid/x.tgz (remote)",
    );
    expect(await fallbackReason("npx", ["--ignore-scripts", "semver"])).toBe("unsupported option --ignore-scripts");
    expect(await resolveWith("node", ["server.js"])).toBeUndefined();
  });
});

describe("what a server's connection reports", () => {
  it("the program that runs instead of npm, or why npm runs it", async () => {
    // The manager gives a server Pi's environment plus its own: the test's npm settings go in its own.
    const npmEnv = Object.fromEntries(Object.entries(baseEnv).filter(([name]) => /^npm_config_/i.test(name))) as Record<string, string>;
    const env = { ...npmEnv, MEMORY_FILE_PATH: join(root, "memory.jsonl") };
    const manager = new McpServerManager({ agentDir: await freshAgentDir() });
    try {
      const memory = await manager.connect(
        serverDef("memory", { command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"], env, cwd: project }),
      );
      const memoryBin = join(
        installDirOf("@modelcontextprotocol/server-memory"),
        "node_modules",
        "@modelcontextprotocol",
        "server-memory",
        "dist",
        "index.js",
      );
      expect(memory.npx).toEqual({ kind: "resolved", command: "node", args: [memoryBin], binPath: memoryBin });

      // `node` is no bin of the install: npx runs it (from PATH, with the install's bins on PATH), and so does npm here.
      const viaNpm = await manager.connect(
        serverDef("via-npm", {
          command: "npx",
          args: ["-y", "-p", "semver@7.6.3", "-p", "which@4.0.0", "node", STDIO_FIXTURE],
          env,
          cwd: project,
        }),
      );
      expect(viaNpm.npx).toEqual({ kind: "fallback", reason: "node is not a bin of the installed packages" });
      expect(viaNpm.tools.map((tool) => tool.name)).toContain("echo");

      const direct = await manager.connect(serverDef("direct", { command: process.execPath, args: [STDIO_FIXTURE], cwd: project }));
      expect(direct.npx).toBeUndefined();
    } finally {
      await manager.closeAll();
    }
  });
});

/** Starts the server through real npx and reports which file its node process runs (resolved through .bin links). */
async function programStartedByNpx(args: string[]): Promise<string> {
  const child = spawn("npx", args, { cwd: project, env: baseEnv, detached: true, stdio: ["pipe", "ignore", "pipe"] });
  try {
    await new Promise<void>((resolve, reject) => {
      let stderr = "";
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
        stderr += chunk;
        if (stderr.includes("running on stdio")) resolve();
      });
      child.on("exit", (code) => reject(new Error(`npx exited (${code}): ${stderr}`)));
    });
    const nodeProcess = descendantPids(child.pid!)
      .map((pid) => commandLine(pid) ?? [])
      .find((argv) => argv.length > 1 && /(^|\/)node$/.test(argv[0]) && argv[1].includes("mcp-server-memory"));
    if (!nodeProcess) throw new Error("no node process under npx");
    return await realpath(nodeProcess[1]);
  } finally {
    process.kill(-child.pid!, "SIGTERM");
  }
}

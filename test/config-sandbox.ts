/**
 * A throwaway home, agent dir and project for config tests: fixture files from test/fixtures/config are copied to
 * where the real hosts keep them, with `__PROJECT__` replaced by the project path.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { loadConfig, type LoadConfigOptions } from "../config.ts";
import type { LoadedConfig } from "../types.ts";

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures", "config");

export interface ConfigSandbox {
  root: string;
  home: string;
  project: string;
  agentDir: string;
  /** Copies `fixtures/config/<fixture>` to `<root>/<destination>`; returns the absolute destination. */
  place(fixture: string, destination: string): string;
  /** Writes text (or JSON for a non-string) to `<root>/<destination>`; returns the absolute destination. */
  write(destination: string, content: unknown): string;
  /** The project is trusted unless `projectTrusted: false` is given (most tests are about what its files mean). */
  load(options?: Partial<LoadConfigOptions>): LoadedConfig;
  remove(): void;
}

export function createConfigSandbox(): ConfigSandbox {
  const root = mkdtempSync(path.join(os.tmpdir(), "pi-mcp-config-"));
  const home = path.join(root, "home");
  const project = path.join(root, "project");
  const agentDir = path.join(home, ".pi", "agent");
  for (const dir of [agentDir, project]) mkdirSync(dir, { recursive: true });

  const write = (destination: string, content: unknown): string => {
    const file = path.join(root, destination);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, typeof content === "string" ? content : JSON.stringify(content, null, 2));
    return file;
  };
  return {
    root,
    home,
    project,
    agentDir,
    place: (fixture, destination) =>
      write(destination, readFileSync(path.join(FIXTURES, fixture), "utf8").replaceAll("__PROJECT__", project)),
    write,
    load: (options) => loadConfig({ agentDir, cwd: project, homeDir: home, env: {}, platform: "linux", projectTrusted: true, ...options }),
    remove: () => rmSync(root, { recursive: true, force: true }),
  };
}

/** Servers by name, without their source (for compact exact assertions). */
export function serversByName(config: LoadedConfig): Record<string, unknown> {
  return Object.fromEntries(config.servers.map(({ name, source: _source, ...rest }) => [name, rest]));
}

export function sourcesByName(config: LoadedConfig): Record<string, string> {
  return Object.fromEntries(config.servers.map(({ name, source }) => [name, `${source.kind}:${source.path}`]));
}

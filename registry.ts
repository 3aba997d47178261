/**
 * The MCP Registry (the official one, or a company's sub-registry with the same v0.1 API): finding servers, and
 * turning an entry into a server of our config. `/mcp search` and `/mcp add <registry name>` (commands/) use it.
 *
 * Behind it: `registry/client.ts` (the HTTP API, its failures in one line), `registry/server-json.ts` (its answers
 * read as untrusted data), `registry/install-plan.ts` (an entry as a config entry: runtimes, inputs, secrets).
 */
import { findExecutable } from "./util/executables.ts";
import { DEFAULT_REGISTRY_URL } from "./registry/client.ts";
import { type InstallOption, installOptions, type Runtime, RUNTIMES } from "./registry/install-plan.ts";
import type { RegistryServer } from "./registry/server-json.ts";
import type { McpSettings } from "./types.ts";

export { DEFAULT_REGISTRY_URL, describeRegistry, fetchLatestServer, searchRegistry } from "./registry/client.ts";
export { type InputSlot, type InstallOption, installOptions, type PlannedEntry, planInstall } from "./registry/install-plan.ts";
export { REGISTRY_NAME, type RegistryServer } from "./registry/server-json.ts";

/** The registry the user's settings name; undefined when `settings.registry` is `false`. */
export function registryUrl(settings: McpSettings): string | undefined {
  const setting = settings.registry;
  if (setting === false) return undefined;
  return (typeof setting === "object" && setting.url) || DEFAULT_REGISTRY_URL;
}

/**
 * One line of a search result: `io.github.x/y 1.2.0 — Title: description · npm, remote`; an entry with no way to run
 * that can be added here (only NuGet or an MCP bundle, say) is marked so, before anyone picks it.
 */
export function describeListing(server: RegistryServer): string {
  const about = [server.title, server.description].filter(Boolean).join(": ");
  const runs = [...new Set([...server.packages.map((pkg) => pkg.registryType), ...server.remotes.map(() => "remote")])];
  const ways = runs.join(", ") || "no way to run it listed";
  const addable = installOptions(server).options.length > 0;
  return `${server.name}${server.version ? ` ${server.version}` : ""}${about ? ` — ${about}` : ""} · ${ways}${addable || runs.length === 0 ? "" : " (not installable here)"}`;
}

/** The program this option runs with when it is not on PATH (so it cannot run here); undefined when it can run. */
export function missingRuntime(option: InstallOption, env: NodeJS.ProcessEnv = process.env): Runtime | undefined {
  if (option.kind === "remote") return undefined;
  const runtime = RUNTIMES[option.kind];
  return findExecutable(runtime.command, env) ? undefined : runtime;
}

/** `pypi x 1.0 runs with uvx (PyPI packages), which is not installed here: install uv (https://…)`. */
export function describeMissingRuntime(option: InstallOption, runtime: Runtime): string {
  return `${option.label} runs with ${runtime.command} (${runtime.packages}), which is not installed here: install ${runtime.install}`;
}

/**
 * The option used when nobody chooses: `kind` if given (`npm`, `pypi`, `oci`, `remote`), else the first one this
 * machine can run, else the first one (which then says what to install).
 */
export function defaultOption(options: readonly InstallOption[], kind?: string, env?: NodeJS.ProcessEnv): InstallOption | undefined {
  if (kind !== undefined) return options.find((option) => option.kind === kind);
  return options.find((option) => missingRuntime(option, env) === undefined) ?? options[0];
}

/** The config name a registry entry gets: the part after the `/`, in the letters a server name may use. */
export function configNameFor(registryName: string): string {
  const base = registryName.slice(registryName.indexOf("/") + 1);
  const name = base
    .replace(/[^A-Za-z0-9_-]+/g, "-")
    .replace(/^[-_]+|[-_]+$/g, "")
    .slice(0, 64);
  return name || "server";
}

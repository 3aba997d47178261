/**
 * The session following a config change, made from inside Pi (`/mcp enable | disable | add | remove`) or in a file
 * (init.ts notices), without `/reload`: servers no longer enabled (or whose entry changed) are stopped and their tools leave the view; servers
 * newly enabled bring their tools from the cache, or from a first connection made by the caller (init.ts).
 * What was listed live in this session is kept for the servers the change did not touch.
 */
import type { McpLifecycleManager } from "../lifecycle.ts";
import type { MetadataCacheSnapshot } from "../metadata-cache.ts";
import type { ToolSearchIndex } from "../tool-search.ts";
import type { McpServerManager } from "../server-manager.ts";
import { buildToolView, type ToolView } from "../tool-view.ts";
import type { LoadedConfig, McpSettings, ServerDefinition } from "../types.ts";

/** What of the session a config change touches: its view of the tools, the search over them, and its servers. */
export interface ConfigApplyContext extends ToolView {
  searchIndex: ToolSearchIndex | undefined;
  readonly lifecycle: Pick<McpLifecycleManager, "registerServers">;
  readonly manager: Pick<McpServerManager, "close">;
}

/** Servers the change started using (newly enabled, added, or changed) and stopped using. */
export interface ConfigChange {
  started: string[];
  stopped: string[];
  /** Resolves once the servers it stopped using are closed. */
  closed: Promise<void>;
}

/** The new config is the session's when this returns (its tools, its servers); closing what it stopped goes on. */
export function applyConfig(state: ConfigApplyContext, config: LoadedConfig, cache: MetadataCacheSnapshot): ConfigChange {
  const before = enabledByName(state.config.servers);
  const after = enabledByName(config.servers);
  const changed = (name: string) => JSON.stringify(before.get(name)) !== JSON.stringify(after.get(name));
  const stopped = [...before.keys()].filter(changed);
  const started = [...after.keys()].filter(changed);
  const kept = new Map([...state.inventories].filter(([name]) => after.has(name) && !changed(name)));
  Object.assign(state, buildToolView(config, cache, kept));
  state.searchIndex = undefined;
  state.lifecycle.registerServers(config.servers, config.settings);
  const closed = Promise.all(stopped.map((name) => state.manager.close(name))).then(() => undefined);
  return { started, stopped, closed };
}

function enabledByName(servers: readonly ServerDefinition[]): Map<string, ServerDefinition> {
  return new Map(servers.filter((server) => server.enabled !== false).map((server) => [server.name, server]));
}

/** Settings the session reads once, when it starts (the capability servers are offered, the files it opens). */
const READ_AT_START: ReadonlyArray<[string, (settings: McpSettings) => unknown]> = [
  ["settings.sampling", (settings) => settings.sampling],
  ["settings.captureStats", (settings) => settings.captureStats],
  ["settings.search.embeddings", (settings) => settings.search?.embeddings],
];

/** Of the settings a session reads when it starts, those the new config changes: they take effect after /reload. */
export function settingsReadAtStart(before: McpSettings, after: McpSettings): string[] {
  return READ_AT_START.filter(([, read]) => JSON.stringify(read(before)) !== JSON.stringify(read(after))).map(([name]) => name);
}

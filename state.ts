/**
 * What one Pi session of the adapter knows: its configuration, its connections, every server's tools, and what the
 * model has been given. Built at `session_start` (init.ts), dropped at `session_shutdown`.
 */
import type { SessionApprovals } from "./approvals.ts";
import type { ConfigChange } from "./config-apply.ts";
import type { UnansweredPages } from "./elicitation-url.ts";
import type { ToolSearchIndex } from "./search-index.ts";
import type { SemanticRanker } from "./search-semantic.ts";
import type { McpLifecycleManager } from "./lifecycle.ts";
import type { MetadataCacheWriter } from "./metadata-cache-writer.ts";
import type { McpServerManager } from "./server-manager.ts";
import type { CallStats } from "./stats.ts";
import type { ServerCatalog, ToolMetadataIndex } from "./tool-metadata.ts";
import type { LoadedConfig, ServerDefinition } from "./types.ts";

/** A server's tools and resources, and whether they come from the cache or from the server itself. */
export interface ServerCatalogEntry extends ServerCatalog {
  origin: "cache" | "live";
  listedAt: number;
}

/** What the running host can do with tools activated during a run. */
export interface HostCapabilities {
  version: string;
  /** Pi ≥ 0.80.3 offers a tool activated during a run from the run's next turn; older hosts from the next prompt. */
  refreshesToolsEachTurn: boolean;
}

/** The user-facing channel: Pi's UI when there is one, stderr otherwise. Silent after shutdown. */
export interface McpUi {
  notify(message: string, level: "info" | "warning" | "error"): void;
  setStatus(text: string | undefined): void;
  /** Output of a command the user ran (shown even without a UI, e.g. in print mode). */
  show(text: string): void;
}

/** The tools known from the configuration and the servers' metadata (cached or live): what gets registered. */
export interface ToolView {
  readonly config: LoadedConfig;
  /** Every configured server by name, disabled ones included. */
  readonly servers: ReadonlyMap<string, ServerDefinition>;
  /** Servers whose tools are known (live or cached), by name. */
  readonly catalogs: Map<string, ServerCatalogEntry>;
  /** The tools built from `catalogs`, with their Pi names. */
  tools: ToolMetadataIndex;
  /** Tools active from the first request (MCP_DIRECT_TOOLS / directTools). */
  directToolNames: ReadonlySet<string>;
}

export interface McpExtensionState extends ToolView {
  readonly agentDir: string;
  readonly cwd: string;
  readonly manager: McpServerManager;
  readonly lifecycle: McpLifecycleManager;
  readonly host: HostCapabilities;
  readonly ui: McpUi;
  /** Tools and servers the user allowed for this session (approveTools). */
  readonly approvals: SessionApprovals;
  /** Set when `settings.captureStats` is on. */
  readonly stats: CallStats | undefined;
  /** Built on the first search after `tools` changed. */
  searchIndex: ToolSearchIndex | undefined;
  /** Set when `settings.search.embeddings` is. */
  readonly semantic: SemanticRanker | undefined;
  /** Servers whose instructions a ToolSearch answer has shown the model in this session (server-instructions.ts). */
  readonly instructionsShown: Set<string>;
  /** The tools the model is offered in the current run (read at agent_start). */
  offeredThisRun: ReadonlySet<string>;
  /** Connecting eager/keep-alive servers and learning the tools of servers not in the cache. */
  startup: Promise<void>;
  /** Writes listed servers to the cache, batched (flushed at shutdown). */
  readonly cacheWriter: MetadataCacheWriter;
  /**
   * Registers these MCP tools with Pi if they are not yet (see `ToolRegistrar`: once the session is bound, a tool is
   * registered only when it is to be active). Pi activates a tool it registers for the first time.
   */
  readonly registerTools: (names: readonly string[]) => void;
  /** After a config file was changed from inside Pi: the session follows the new config (no /reload). */
  readonly reloadConfig: () => Promise<ConfigChange>;
  /** Pages servers asked the user to open when nobody could be asked (print mode): told to the model with the result. */
  readonly unansweredPages: UnansweredPages;
  shutDown: boolean;
  /** Pi's reason for the shutdown (`quit`, `reload`, `new`, …): calls cut short by it say so. */
  shutdownReason?: string;
}

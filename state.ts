/**
 * What one Pi session of the adapter knows: its configuration, its connections, every server's tools, and what the
 * model has been given. Built at `session_start` (init.ts), dropped at `session_shutdown`.
 */
import type { AppViews } from "./apps.ts";
import type { SessionApprovals } from "./calls/approvals.ts";
import type { ConfigChange } from "./config/apply.ts";
import type { UnansweredPages } from "./connection/elicitation-url.ts";
import type { ProtocolTrace } from "./connection/protocol-trace.ts";
import type { HostCapabilities } from "./host.ts";
import type { McpLifecycleManager } from "./lifecycle.ts";
import type { MetadataCacheWriter } from "./tools/cache-writer.ts";
import type { ToolSearchIndex } from "./search/tool-index.ts";
import type { SemanticRanker } from "./search/semantic.ts";
import type { McpServerManager } from "./server-manager.ts";
import type { SkillSession } from "./skills/session.ts";
import type { CallStats } from "./calls/stats.ts";
import type { SessionTasks } from "./tasks.ts";
import type { ToolView } from "./tool-view.ts";
import type { McpUi } from "./ui.ts";

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
  /** Servers whose instructions a ToolSearch answer has shown the model in this session (search/server-instructions.ts). */
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
  /** Follows the config files if they changed since they were read (a stat each when they did not): `/mcp` commands first do. */
  readonly followConfigFiles: () => void;
  /** The servers' skills offered to Pi (skills/session.ts). */
  readonly skills: SkillSession;
  /** Tool calls that run as tasks: waited for, handed back, delivered (tasks.ts). */
  readonly tasks: SessionTasks;
  /** Tools' views (MCP Apps): the page in the user's browser, started with the first view. */
  readonly views: AppViews;
  /** Pages servers asked the user to open when nobody could be asked (print mode): told to the model with the result. */
  readonly unansweredPages: UnansweredPages;
  /** The protocol trace (`/mcp trace`): off until the user turns it on. */
  readonly trace: ProtocolTrace;
  shutDown: boolean;
  /** Pi's reason for the shutdown (`quit`, `reload`, `new`, …): calls cut short by it say so. */
  shutdownReason?: string;
}

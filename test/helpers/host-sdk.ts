/**
 * What the session harness needs from a host's SDK; one implementation per SDK shape (`host-sdk-0.73.ts`,
 * `host-sdk-earendil.ts` for 0.87.1 and 1.x), loaded only in the vitest run of that host (0.87.1 and 1.x cannot
 * even be imported on Node 20).
 */
import type { ModelScript } from "./faux-script.ts";

/** The part of a host's `AgentSession` the harness uses; every host has it with these shapes. */
export interface HostAgentSession {
  prompt(text: string): Promise<void>;
  /** Esc: aborts the run (and the tool calls in it). */
  abort(): Promise<void>;
  subscribe(listener: (event: HostSessionEvent) => void): () => void;
  bindExtensions(bindings: object): Promise<void>;
  reload(): Promise<void>;
  getActiveToolNames(): string[];
  setActiveToolsByName(toolNames: string[]): void;
  getAllTools(): { name: string }[];
  readonly messages: readonly HostMessage[];
  readonly systemPrompt: string;
  readonly extensionRunner: { getCommand(name: string): unknown };
  /** `/tree`: move to another entry of the session (`session_tree`). */
  navigateTree(targetId: string, options?: object): Promise<{ cancelled: boolean }>;
  /** The session's entries (custom entries extensions wrote among them). */
  readonly sessionManager: {
    getBranch(): readonly HostSessionEntry[];
    getEntries(): readonly HostSessionEntry[];
    getSessionFile(): string | undefined;
  };
}

export interface HostSessionEntry {
  id: string;
  type: string;
  customType?: string;
  data?: unknown;
  message?: HostMessage & { toolName?: string; details?: unknown };
}

export interface HostMessage {
  role: string;
  stopReason?: string;
  errorMessage?: string;
  content?: unknown;
}

export interface HostSessionEvent {
  type: string;
  toolCallId?: string;
  toolName?: string;
  isError?: boolean;
  result?: { content?: unknown; details?: unknown };
}

/** The part of `AgentSessionRuntime` the harness uses. */
export interface HostRuntime {
  readonly session: HostAgentSession;
  setRebindSession(rebind: () => Promise<void>): void;
  newSession(options?: unknown): Promise<{ cancelled: boolean }>;
  /** `/fork`: `position: "at"` keeps the entry itself in the new session. */
  fork(entryId: string, options?: { position?: "before" | "at" }): Promise<{ cancelled: boolean }>;
  switchSession(sessionPath: string, options?: unknown): Promise<{ cancelled: boolean }>;
  dispose(): Promise<void>;
}

export interface SdkRuntimeOptions {
  cwd: string;
  agentDir: string;
  extensionPaths: readonly string[];
  script: ModelScript;
  /** In-memory settings; the adapter adds what keeps a scripted run deterministic (no retries, no cache warming). */
  settings: Record<string, unknown>;
  /** Session files go there, and a start continues the most recent one (a resume); default: in memory. */
  sessionDir?: string;
}

export interface SdkRuntime {
  runtime: HostRuntime;
  /** Extensions that failed to load (a throwing factory, an unresolved import). */
  loadErrors: { path: string; error: string }[];
  /** Host-specific fields for `bindExtensions` (0.87.1 and 1.x want a `mode`). */
  bindingExtras: object;
  /** What `ctx.waitForIdle()` means on this host (the CLI's own binding). */
  waitForIdle(): Promise<void>;
  /** Resolves once the current run and every extension handler of its events have finished. */
  settle(): Promise<void>;
  /** `/reload`: `session.reload()`, keeping the scripted model (the reload clears pi-ai's API registry). */
  reload(): Promise<void>;
  /** `runtime.dispose()` (emits `session_shutdown`), then drop the scripted model. */
  dispose(): Promise<void>;
}

export type CreateSdkRuntime = (options: SdkRuntimeOptions) => Promise<SdkRuntime>;

/**
 * A real Pi session in this process, on the host of this vitest run, with a scripted model.
 *
 * It records what a test wants to look at: every model request (tools offered, system prompt, messages),
 * every tool result, what extensions show in the UI (`notify`, `setStatus`) and every extension error.
 *
 *   const pi = await startSession({ extensions: [entry], script: ["hello"] });
 *   try { await pi.prompt("hi"); expect(pi.requests[0]...) } finally { await pi.dispose(); }
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { contentText, type ModelRequest, ModelScript, type ScriptStep, type ToolResultRecord } from "./faux-script.ts";
import type { CreateSdkRuntime, HostAgentSession, HostSessionEvent, SdkRuntime, SdkRuntimeOptions } from "./host-sdk.ts";
import { currentHost, type PiHost } from "./hosts.ts";

export interface SessionOptions {
  /** Extension entry files or directories, loaded like `pi -e` (relative paths: from the process cwd). */
  extensions: readonly string[];
  script?: readonly ScriptStep[];
  /** Default: a fresh temp dir, removed by `dispose()`. */
  cwd?: string;
  /** Default: a fresh temp dir, removed by `dispose()`. */
  agentDir?: string;
  /** In-memory Pi settings. */
  settings?: Record<string, unknown>;
  /** How the user answers extension dialogs (default: confirm → no, select/input → dismissed). */
  dialogs?: DialogAnswers;
  /** Keep the session in a file (in a temp dir of its own): `restart()` then resumes it. Default: in memory. */
  persistSession?: boolean;
}

export interface DialogAnswers {
  confirm?: (title: string, message: string) => boolean;
  select?: (title: string, options: string[]) => string | undefined;
  input?: (title: string, placeholder: string | undefined) => string | undefined;
}

export type UiRecord =
  | { kind: "notify"; message: string; level: "info" | "warning" | "error" }
  | { kind: "status"; key: string; text: string | undefined }
  | { kind: "dialog"; dialog: "confirm" | "select" | "input"; title: string; answer: unknown };

export interface ExtensionErrorRecord {
  extensionPath: string;
  event: string;
  error: string;
}

export interface CommandOutput {
  /** What the command showed, in order. */
  ui: UiRecord[];
  /** The messages it notified, one per line. */
  text: string;
  /** The error Pi reported if the handler threw. */
  error?: string;
}

export interface PiSession {
  readonly host: PiHost;
  readonly cwd: string;
  readonly agentDir: string;
  readonly requests: readonly ModelRequest[];
  readonly toolResults: readonly ToolResultRecord[];
  readonly ui: readonly UiRecord[];
  readonly errors: readonly ExtensionErrorRecord[];
  /** The current host session, for what the records do not cover. */
  readonly session: HostAgentSession;
  /** Add model steps for later requests. */
  script(steps: readonly ScriptStep[]): void;
  /**
   * Send a user prompt and wait until the run and the extensions' handlers of its events have finished;
   * throws if the model run ended in an error.
   */
  prompt(text: string): Promise<void>;
  /** Run an extension command (`"/mcp status"`) and return what it showed. Throws if no extension registered it. */
  command(line: string): Promise<CommandOutput>;
  activeToolNames(): string[];
  /** `/reload`: `session_shutdown {reason: "reload"}`, the factories run again, `session_start {reason: "reload"}`. */
  reload(): Promise<void>;
  /**
   * Quit and start Pi again on the same cwd and agentDir (`session_start {reason: "startup"}`); with
   * `persistSession`, the new process resumes the same session file.
   */
  restart(): Promise<void>;
  /** `/tree`: move to an entry of the session (`session_tree`). */
  navigateTree(entryId: string): Promise<void>;
  /** `/fork` at an entry: a new session holding the branch up to it (`session_start {reason: "fork"}`). */
  fork(entryId: string): Promise<void>;
  /** Quit (`session_shutdown {reason: "quit"}`) and remove the temp dirs this harness created. Idempotent. */
  dispose(): Promise<void>;
}

const SDK_MODULES: Record<PiHost["version"], string> = {
  "0.73.1": "./host-sdk-0.73.ts",
  "0.87.1": "./host-sdk-earendil.ts",
  "1.5.2": "./host-sdk-earendil.ts",
  "1.6.0": "./host-sdk-earendil.ts",
};

export async function startSession(options: SessionOptions): Promise<PiSession> {
  const host = currentHost();
  const { createSdkRuntime } = (await import(SDK_MODULES[host.version])) as { createSdkRuntime: CreateSdkRuntime };
  const ownedDirs: string[] = [];
  const removeOwnedDirs = () => Promise.all(ownedDirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
  const tempDir = async (given: string | undefined, prefix: string) => {
    if (given !== undefined) return given;
    const dir = await mkdtemp(join(tmpdir(), prefix));
    ownedDirs.push(dir);
    return dir;
  };
  const records: Records = { toolResults: [], ui: [], errors: [] };
  const script = new ModelScript(options.script);
  let sdk: SdkRuntime;
  let cwd: string;
  let agentDir: string;
  const extensionPaths = options.extensions.map((path) => resolve(path));
  const settings = options.settings ?? {};
  let sessionDir: string | undefined;
  // Extensions find the agent dir with getAgentDir(), i.e. $PI_CODING_AGENT_DIR, as under the CLI.
  const previousAgentDirEnv = process.env.PI_CODING_AGENT_DIR;
  const restoreAgentDirEnv = () => {
    if (previousAgentDirEnv === undefined) delete process.env.PI_CODING_AGENT_DIR;
    else process.env.PI_CODING_AGENT_DIR = previousAgentDirEnv;
  };
  const start = () => {
    process.env.PI_CODING_AGENT_DIR = agentDir;
    return startRuntime(createSdkRuntime, { cwd, agentDir, extensionPaths, script, settings, sessionDir }, records, options.dialogs ?? {});
  };
  try {
    cwd = await tempDir(options.cwd, "pi-cwd-");
    agentDir = await tempDir(options.agentDir, "pi-agent-");
    if (options.persistSession) sessionDir = await tempDir(undefined, "pi-sessions-");
    sdk = await start();
  } catch (error) {
    restoreAgentDirEnv();
    await removeOwnedDirs();
    throw error;
  }
  let running = true;
  const quit = async () => {
    if (!running) return;
    running = false;
    await sdk.dispose();
    restoreAgentDirEnv();
  };

  return {
    host,
    cwd,
    agentDir,
    requests: script.requests,
    ...records,
    get session() {
      return sdk.runtime.session;
    },
    script: (steps) => script.append(steps),
    async prompt(text) {
      await sdk.runtime.session.prompt(text);
      await sdk.settle();
      const last = sdk.runtime.session.messages.at(-1);
      if (last?.role === "assistant" && (last.stopReason === "error" || last.stopReason === "aborted")) {
        throw new Error(`model run ended with ${last.stopReason}: ${last.errorMessage ?? "(no message)"}`);
      }
    },
    async command(line) {
      const name = line.slice(1).split(" ")[0] ?? "";
      if (!line.startsWith("/") || !sdk.runtime.session.extensionRunner.getCommand(name)) {
        throw new Error(`no extension command /${name}`);
      }
      const uiBefore = records.ui.length;
      const errorsBefore = records.errors.length;
      await sdk.runtime.session.prompt(line);
      await sdk.settle();
      const shown = records.ui.slice(uiBefore);
      return {
        ui: shown,
        text: shown.flatMap((entry) => (entry.kind === "notify" ? [entry.message] : [])).join("\n"),
        error: records.errors.slice(errorsBefore).find((error) => error.event === "command")?.error,
      };
    },
    activeToolNames: () => sdk.runtime.session.getActiveToolNames(),
    reload: () => sdk.reload(),
    async restart() {
      await quit();
      sdk = await start();
      running = true;
    },
    async navigateTree(entryId) {
      const result = await sdk.runtime.session.navigateTree(entryId);
      if (result.cancelled) throw new Error(`navigating to ${entryId} was cancelled`);
      await sdk.settle();
    },
    async fork(entryId) {
      const result = await sdk.runtime.fork(entryId, { position: "at" });
      if (result.cancelled) throw new Error(`forking at ${entryId} was cancelled`);
      await sdk.settle();
    },
    async dispose() {
      await quit();
      await removeOwnedDirs();
    },
  };
}

interface Records {
  toolResults: ToolResultRecord[];
  ui: UiRecord[];
  errors: ExtensionErrorRecord[];
}

/** A host runtime with the UI, error listener and command actions bound to every session it creates, like the CLI. */
async function startRuntime(
  createSdkRuntime: CreateSdkRuntime,
  options: SdkRuntimeOptions,
  records: Records,
  dialogs: DialogAnswers,
): Promise<SdkRuntime> {
  const sdk = await createSdkRuntime(options);
  records.errors.push(...sdk.loadErrors.map(({ path, error }) => ({ extensionPath: path, event: "load", error })));
  const uiContext = capturingUiContext(records.ui, dialogs);
  let unsubscribe = () => {};
  const bind = async () => {
    const session = sdk.runtime.session;
    unsubscribe();
    unsubscribe = session.subscribe((event) => recordToolResult(event, records.toolResults));
    await session.bindExtensions({
      ...sdk.bindingExtras,
      uiContext,
      onError: (error: ExtensionErrorRecord) => records.errors.push(error),
      commandContextActions: {
        waitForIdle: () => sdk.waitForIdle(),
        newSession: (opts: unknown) => sdk.runtime.newSession(opts),
        fork: (entryId: string, opts?: { position?: "before" | "at" }) => sdk.runtime.fork(entryId, opts),
        navigateTree: async () => ({ cancelled: true }),
        switchSession: (path: string, opts: unknown) => sdk.runtime.switchSession(path, opts),
        reload: () => sdk.reload(),
      },
    });
  };
  sdk.runtime.setRebindSession(bind);
  await bind();
  return sdk;
}

function recordToolResult(event: HostSessionEvent, toolResults: ToolResultRecord[]): void {
  if (event.type !== "tool_execution_end") return;
  toolResults.push({
    toolName: event.toolName ?? "",
    toolCallId: event.toolCallId ?? "",
    isError: event.isError === true,
    text: contentText(event.result?.content),
    details: event.result?.details,
  });
}

/** Interactive-like UI for extensions: records notify/setStatus and dialogs (answered by `dialogs`); TUI parts are ignored. */
function capturingUiContext(ui: UiRecord[], dialogs: DialogAnswers): object {
  const ignore = () => {};
  const dialog = <T>(kind: "confirm" | "select" | "input", title: string, answer: T): T => {
    ui.push({ kind: "dialog", dialog: kind, title, answer });
    return answer;
  };
  return {
    notify: (message: string, level: "info" | "warning" | "error" = "info") => {
      ui.push({ kind: "notify", message, level });
    },
    setStatus: (key: string, text: string | undefined) => ui.push({ kind: "status", key, text }),
    select: async (title: string, options: string[]) => dialog("select", title, dialogs.select?.(title, options)),
    confirm: async (title: string, message: string) => dialog("confirm", title, dialogs.confirm?.(title, message) ?? false),
    input: async (title: string, placeholder?: string) => dialog("input", title, dialogs.input?.(title, placeholder)),
    editor: async () => undefined,
    custom: async () => undefined,
    onTerminalInput: () => ignore,
    setWorkingMessage: ignore,
    setWorkingVisible: ignore,
    setWorkingIndicator: ignore,
    setHiddenThinkingLabel: ignore,
    setWidget: ignore,
    setFooter: ignore,
    setHeader: ignore,
    setTitle: ignore,
    pasteToEditor: ignore,
    setEditorText: ignore,
    getEditorText: () => "",
    addAutocompleteProvider: ignore,
    setEditorComponent: ignore,
    getEditorComponent: () => undefined,
    theme: undefined,
    getAllThemes: () => [],
    getTheme: () => undefined,
    setTheme: () => ({ success: false, error: "no UI themes in tests" }),
    getToolsExpanded: () => false,
    setToolsExpanded: ignore,
  };
}

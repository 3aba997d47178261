/**
 * The real `pi` CLI in print mode (or RPC mode), on the host of this vitest run and its Node binary:
 *
 *   PI_CODING_AGENT_DIR=<agentDir> <node> <host cli.js> --offline --no-session -e <ext>… -e <script>
 *     --model faux/faux-1 -p "q1" "q2" …          (runPrint)
 *     --model faux/faux-1 --mode rpc               (runRpc: each prompt a `prompt` command on stdin, in turn)
 *
 * The model is a faux script extension (faux-provider-extension.ts); what it was shown and every tool result
 * come back through a record file.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { ModelReply, ModelRequest, ToolResultRecord } from "./faux-script.ts";
import { FAUX_MODEL, type FauxRecordLine } from "./faux-provider-extension.ts";
import { currentHost, type PiHost, REPO_ROOT } from "./hosts.ts";

export interface PrintOptions {
  /** Extension entry files or directories (relative paths: from the process cwd). */
  extensions: readonly string[];
  /** A faux script extension module (path), or plain replies. */
  script: string | readonly ModelReply[];
  prompts: readonly string[];
  /** Default: a fresh temp dir. */
  cwd?: string;
  /** `PI_CODING_AGENT_DIR`. Default: a fresh temp dir. Gets a settings.json without retries if it has none. */
  agentDir?: string;
  /** Extra CLI arguments, before `-p`. */
  args?: readonly string[];
  env?: Record<string, string>;
  /** Default 60 s; the process is killed after it. */
  timeoutMs?: number;
  /**
   * RPC mode: how the client answers an extension's dialog (`select`, `confirm`, `input`, `editor` requests): the
   * fields of its `extension_ui_response` (`{ confirmed: true }`, `{ value: "Ada" }`; undefined: `{ cancelled: true }`).
   * Without it dialogs go unanswered (until their own timeout).
   */
  dialogs?: (request: Record<string, unknown>) => Record<string, unknown> | undefined;
  /**
   * RPC mode: runs the model started by itself after the last prompt's (an extension's follow-up message) to wait for
   * before stdin is closed. Default 0.
   */
  laterRuns?: number;
}

export interface PrintResult {
  host: PiHost;
  /** RPC mode: every JSON line the CLI wrote to stdout. */
  rpcLines?: Record<string, unknown>[];
  exitCode: number | null;
  stdout: string;
  stderr: string;
  requests: ModelRequest[];
  toolResults: ToolResultRecord[];
}

const JSON_SCRIPT_EXTENSION = join(REPO_ROOT, "test/helpers/faux-json-script.ts");

/** Retries and cache warming would send the model requests the script does not expect. */
const DETERMINISTIC_SETTINGS = { retry: { enabled: false }, cacheWarming: "off" };

export function runPrint(options: PrintOptions): Promise<PrintResult> {
  return runCli(options, "print");
}

/** RPC mode: a prompt is sent when the previous one is done (its `agent_end`, or its response for a command). */
export function runRpc(options: PrintOptions): Promise<PrintResult> {
  return runCli(options, "rpc");
}

async function runCli(options: PrintOptions, mode: "print" | "rpc"): Promise<PrintResult> {
  const host = currentHost();
  const workDir = await mkdtemp(join(tmpdir(), "pi-print-"));
  try {
    const cwd = options.cwd ?? (await makeDir(workDir, "cwd"));
    const agentDir = options.agentDir ?? (await makeDir(workDir, "agent"));
    const settingsFile = join(agentDir, "settings.json");
    if (!existsSync(settingsFile)) await writeFile(settingsFile, JSON.stringify(DETERMINISTIC_SETTINGS));
    const recordFile = join(workDir, "record.jsonl");
    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      PI_CODING_AGENT_DIR: agentDir,
      PI_FAUX_RECORD: recordFile,
      ...options.env,
    };
    let scriptExtension: string;
    if (typeof options.script === "string") {
      scriptExtension = resolve(options.script);
    } else {
      env.PI_FAUX_STEPS = join(workDir, "steps.json");
      await writeFile(env.PI_FAUX_STEPS, JSON.stringify(options.script));
      scriptExtension = JSON_SCRIPT_EXTENSION;
    }
    const args = [
      host.cliPath,
      "--offline",
      "--no-session",
      ...[...options.extensions.map((path) => resolve(path)), scriptExtension].flatMap((path) => ["-e", path]),
      "--model",
      FAUX_MODEL,
      ...(options.args ?? []),
      ...(mode === "print" ? ["-p", ...options.prompts] : ["--mode", "rpc"]),
    ];
    const timeoutMs = options.timeoutMs ?? 60_000;
    const prompts = mode === "rpc" ? options.prompts : undefined;
    const { exitCode, stdout, stderr } = await run(host.nodeBinary, args, {
      cwd,
      env,
      timeoutMs,
      prompts,
      dialogs: options.dialogs,
      laterRuns: options.laterRuns ?? 0,
    });
    const lines = existsSync(recordFile) ? (await readFile(recordFile, "utf8")).split("\n").filter(Boolean) : [];
    const records = lines.map((line) => JSON.parse(line) as FauxRecordLine);
    return {
      host,
      rpcLines: mode === "rpc" ? jsonLines(stdout) : undefined,
      exitCode,
      stdout,
      stderr,
      requests: records.flatMap((line) => ("request" in line ? [line.request] : [])),
      toolResults: records.flatMap((line) => ("toolResult" in line ? [line.toolResult] : [])),
    };
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

/**
 * Sends the prompts one by one: the next when the previous is done (`agent_end` for a prompt the model answers,
 * the command's response for an extension command), then, after `laterRuns` more runs have ended, closes stdin,
 * which ends the CLI.
 */
function rpcDriver(prompts: readonly string[], stdin: NodeJS.WritableStream, laterRuns: number): (stdout: string) => void {
  let sent = 0;
  let waitingFrom = 0;
  let runsLeft = laterRuns;
  const sendNext = () => {
    if (sent === prompts.length && runsLeft > 0) {
      runsLeft--;
      return;
    }
    if (sent === prompts.length) return stdin.end();
    const message = prompts[sent]!;
    sent++;
    stdin.write(`${JSON.stringify({ id: `prompt-${sent}`, type: "prompt", message })}\n`);
  };
  sendNext();
  return (stdout) => {
    const lines = jsonLines(stdout.slice(waitingFrom));
    const isCommand = runsLeft === laterRuns && prompts[sent - 1]!.startsWith("/");
    const done = lines.some((line) => (isCommand ? line.type === "response" && line.id === `prompt-${sent}` : line.type === "agent_end"));
    if (!done) return;
    waitingFrom = stdout.lastIndexOf("\n") + 1;
    sendNext();
  };
}

const DIALOG_METHODS = new Set(["select", "confirm", "input", "editor"]);

/** Answers each dialog request once, as `answer` says. */
function dialogDriver(answer: NonNullable<PrintOptions["dialogs"]>, stdin: NodeJS.WritableStream): (stdout: string) => void {
  const answered = new Set<unknown>();
  return (stdout) => {
    for (const line of jsonLines(stdout)) {
      if (line.type !== "extension_ui_request" || !DIALOG_METHODS.has(line.method as string) || answered.has(line.id)) continue;
      answered.add(line.id);
      const fields = answer(line) ?? { cancelled: true };
      stdin.write(`${JSON.stringify({ type: "extension_ui_response", id: line.id, ...fields })}\n`);
    }
  };
}

async function makeDir(parent: string, name: string): Promise<string> {
  const dir = join(parent, name);
  await mkdir(dir);
  return dir;
}

function jsonLines(text: string): Record<string, unknown>[] {
  return text.split("\n").flatMap((line) => {
    try {
      return [JSON.parse(line) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}

function run(
  command: string,
  args: string[],
  options: {
    cwd: string;
    env: Record<string, string>;
    timeoutMs: number;
    prompts?: readonly string[];
    dialogs?: PrintOptions["dialogs"];
    laterRuns: number;
  },
): Promise<{ exitCode: number | null; stdout: string; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    // Its own process group, so a timeout also ends the servers the extensions under test started.
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: [options.prompts ? "pipe" : "ignore", "pipe", "pipe"],
      detached: true,
    });
    let stdout = "";
    let stderr = "";
    const rpc = options.prompts && child.stdin ? rpcDriver(options.prompts, child.stdin, options.laterRuns) : undefined;
    const dialogs = options.dialogs && child.stdin ? dialogDriver(options.dialogs, child.stdin) : undefined;
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
      dialogs?.(stdout);
      rpc?.(stdout);
    });
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      stderr += `\n[runPrint] killed after ${options.timeoutMs} ms`;
    }, options.timeoutMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (exitCode) => {
      clearTimeout(timer);
      resolvePromise({ exitCode, stdout, stderr });
    });
  });
}

/**
 * stderr without Pi 1.x's notice that the adapter replaces its built-in MCP (it registers `/mcp`): the notice is
 * expected at every start there (docs/coming-from-pi-builtin.md), so a test asking for a quiet run skips it.
 */
export function withoutBuiltinMcpNotice(stderr: string): string {
  return stderr
    .split("\n")
    .filter((line) => !line.startsWith('Warning: Extension package "builtin:mcp": '))
    .join("\n");
}

/**
 * Servers other extensions register for the session through upstream 2.x's event, which plugin hosts already emit:
 * `pi.events.emit("pi-mcp-adapter:runtime-register:v1", { version: 1, name, definition })`. The adapter answers in
 * the same call: it sets `request.result` to `{ ok: true, registration: { dispose() } }` or `{ ok: false, error }`.
 * A registration lives until it is disposed or the session ends; it is never written to a file. A name a configured
 * server (or another registration) has is refused: the configured one stays. The definition is a server entry of
 * our format, checked as a file's would be.
 */
import { ownEntryOptions, parseServerEntry } from "./entry.ts";
import type { InterpolationContext } from "./interpolation.ts";
import { describeValue, isJsonObject } from "../util/guards.ts";
import type { ConfigProblem } from "../types.ts";

export const RUNTIME_REGISTER_EVENT = "pi-mcp-adapter:runtime-register:v1";
/** What `/mcp status` shows as the source of these servers. */
export const RUNTIME_SOURCE_PATH = `event ${RUNTIME_REGISTER_EVENT}`;

/** Letters, digits, `_` and `-` (up to 64): names that make good tool prefixes and config keys. */
export const SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

export interface RuntimeServer {
  name: string;
  config: Record<string, unknown>;
}

export interface RuntimeRegistration {
  dispose(): Promise<void>;
}

export type RuntimeRegistrationResult = { ok: true; registration: RuntimeRegistration } | { ok: false; error: Error };

export interface RuntimeRegistrationHooks {
  /** Names of the servers the config defines now (not these registrations'). */
  configured(): ReadonlySet<string>;
  /** How definitions are checked: the session's directory and environment. */
  context(): InterpolationContext;
  /** The set of registrations changed: the session follows (resolves once it has). */
  changed(): Promise<void>;
}

export class RuntimeRegistrations {
  private readonly hooks: RuntimeRegistrationHooks;
  private readonly live = new Map<string, RuntimeServer>();

  constructor(hooks: RuntimeRegistrationHooks) {
    this.hooks = hooks;
  }

  /** The registered servers, in the order they came. */
  servers(): RuntimeServer[] {
    return [...this.live.values()];
  }

  /** The event's listener: answers a request no other listener answered. Never throws. */
  handle(request: unknown): void {
    if (!isJsonObject(request) || request.result !== undefined) return;
    request.result = this.register(request);
  }

  /** The session ended: its registrations end with it (an extension registers again in the next one). */
  clear(): void {
    this.live.clear();
  }

  private register(request: Record<string, unknown>): RuntimeRegistrationResult {
    const refuse = (text: string): RuntimeRegistrationResult => ({
      ok: false,
      error: new Error(`MCP server registration refused: ${text}`),
    });
    if (request.version !== 1) return refuse(`version ${describeValue(request.version)} is not supported (this adapter reads version 1)`);
    const { name, definition } = request;
    if (typeof name !== "string" || !SERVER_NAME.test(name)) {
      return refuse(
        `the name must use letters, digits, "_" and "-" (up to 64) (got ${typeof name === "string" ? JSON.stringify(name) : describeValue(name)})`,
      );
    }
    if (this.hooks.configured().has(name)) return refuse(`a configured server is named "${name}" (it stays as configured)`);
    if (this.live.has(name)) return refuse(`a server named "${name}" is registered already`);
    const problem = checkDefinition(name, definition, this.hooks.context());
    if (problem) return refuse(problem);
    const server: RuntimeServer = { name, config: definition as Record<string, unknown> };
    this.live.set(name, server);
    void this.hooks.changed().catch(() => {});
    return { ok: true, registration: { dispose: () => this.dispose(server) } };
  }

  private async dispose(server: RuntimeServer): Promise<void> {
    if (this.live.get(server.name) !== server) return; // disposed already, or the session that had it ended
    this.live.delete(server.name);
    await this.hooks.changed();
  }
}

/** Why a definition cannot be a server (its errors, as loading it from a file would give them); undefined when it can. */
function checkDefinition(name: string, definition: unknown, context: InterpolationContext): string | undefined {
  const problems: ConfigProblem[] = [];
  const parsed = parseServerEntry(name, definition, ownEntryOptions(RUNTIME_SOURCE_PATH, context), problems);
  const errors = problems.filter((problem) => problem.level === "error").map((problem) => problem.message);
  return parsed.kind === "server" && errors.length === 0 ? undefined : errors.join("; ") || "not a server definition";
}

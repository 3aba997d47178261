/**
 * How a 2026-07-28 server's list changes reach us: on a `subscriptions/listen` stream the client opens (the 2025 era
 * sends `list_changed` notifications unasked, on the session). The stream asks for the lists the server says can
 * change; its notifications go to the same handlers as the 2025 ones. When it drops without the server ending it,
 * it is opened again after a growing delay; a server that refuses it is not asked again in this session.
 */
import type { Client, SubscriptionFilter } from "@modelcontextprotocol/client";
import { debugLog } from "../util/debug-log.ts";
import { errorMessage } from "../util/guards.ts";

const FIRST_REOPEN_DELAY_MS = 1_000;
const MAX_REOPEN_DELAY_MS = 30_000;

export class ChangeStream {
  private readonly client: Client;
  private readonly serverName: string;
  private closed = false;
  private subscription?: Awaited<ReturnType<Client["listen"]>>;
  private reopenTimer?: ReturnType<typeof setTimeout>;
  private reopenDelayMs = FIRST_REOPEN_DELAY_MS;

  constructor(serverName: string, client: Client) {
    this.serverName = serverName;
    this.client = client;
  }

  /** Opens the stream, if the server announces changes to any list. */
  open(): void {
    const filter = changeFilter(this.client);
    if (Object.keys(filter).length > 0) void this.listen(filter);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reopenTimer);
    await this.subscription?.close();
  }

  private async listen(filter: SubscriptionFilter): Promise<void> {
    if (this.closed) return;
    try {
      this.subscription = await this.client.listen(filter);
    } catch (error) {
      debugLog(`${this.serverName}: subscriptions/listen refused; list changes are not followed`, errorMessage(error));
      return;
    }
    const openedAt = Date.now();
    const how = await this.subscription.closed;
    if (how !== "remote" || this.closed) return;
    // A stream that held a while earns a quick reopen; one that keeps dropping at once, a slower one each time.
    if (Date.now() - openedAt > MAX_REOPEN_DELAY_MS) this.reopenDelayMs = FIRST_REOPEN_DELAY_MS;
    debugLog(`${this.serverName}: the subscriptions/listen stream dropped; reopening in ${this.reopenDelayMs} ms`);
    this.reopenTimer = setTimeout(() => void this.listen(filter), this.reopenDelayMs);
    this.reopenTimer.unref();
    this.reopenDelayMs = Math.min(this.reopenDelayMs * 2, MAX_REOPEN_DELAY_MS);
  }
}

/** The lists the server says can change (its `listChanged` capabilities). */
function changeFilter(client: Client): SubscriptionFilter {
  const capabilities = client.getServerCapabilities();
  return {
    ...(capabilities?.tools?.listChanged ? { toolsListChanged: true } : {}),
    ...(capabilities?.prompts?.listChanged ? { promptsListChanged: true } : {}),
    ...(capabilities?.resources?.listChanged ? { resourcesListChanged: true } : {}),
  };
}

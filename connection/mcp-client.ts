/**
 * The SDK's Client for one server: who we are, what we can do for the server, and the handlers that do it.
 *
 * What the server may ask of the client (a form, a page to open, a completion from the user's model, the roots) is
 * answered by the same handlers in both eras: a 2025-era server sends a request of its own, a 2026-era one answers
 * a call with `input_required`, and the SDK fulfils that through these handlers and retries the call (at most
 * MAX_INPUT_ROUNDS times; its opaque `requestState` goes back untouched, and is never logged or shown).
 */
import { basename } from "node:path";
import { pathToFileURL } from "node:url";
import { Client, type ClientCapabilities, type Root } from "@modelcontextprotocol/client";
import { uiExtension } from "../apps.ts";
import type { ConnectPlan } from "./era.ts";
import { OUR_PROTOCOL_VERSIONS } from "./era.ts";
import type { SessionSettings } from "./session.ts";
import { ADAPTER_INFO } from "../util/own-version.ts";

/** Rounds of input one request may ask for before it fails: a server asking for ever must not hold a call open. */
export const MAX_INPUT_ROUNDS = 8;

type Handlers = Pick<SessionSettings, "elicitation" | "urlElicitation" | "sampling" | "roots" | "viewsOffered">;

/**
 * A client that offers each elicitation mode, and sampling (with tools; not `sampling.context`, whose
 * `includeContext` the handler ignores), only when someone answers it (the SDK then refuses the others before they
 * get here), roots always (Pi's working directory, as a `file://` URI), and MCP Apps to the servers whose views may
 * open.
 */
export function newClient(serverName: string, handlers: Handlers, plan: ConnectPlan): Client {
  const client = new Client(ADAPTER_INFO, {
    capabilities: capabilities(handlers, handlers.viewsOffered?.(serverName) === true),
    supportedProtocolVersions: [...OUR_PROTOCOL_VERSIONS],
    versionNegotiation: plan.negotiation,
    inputRequired: { maxRounds: MAX_INPUT_ROUNDS },
  });
  client.setRequestHandler("roots/list", () => ({ roots: handlers.roots().map(fileRoot) }));
  const { elicitation: form, urlElicitation: url, sampling } = handlers;
  if (form || url) {
    client.setRequestHandler("elicitation/create", ({ params }, ctx) =>
      params.mode === "url" ? url!(serverName, params, ctx.mcpReq.signal) : form!(serverName, params, ctx.mcpReq.signal),
    );
  }
  if (sampling) client.setRequestHandler("sampling/createMessage", ({ params }, ctx) => sampling(serverName, params, ctx.mcpReq.signal));
  return client;
}

/** `views`: the MCP Apps extension is declared (the SDK sends `extensions` in both eras: `initialize`, and each 2026 request). */
function capabilities({ elicitation: form, urlElicitation: url, sampling }: Handlers, views: boolean): ClientCapabilities {
  const modes = { ...(form ? { form: { applyDefaults: true } } : {}), ...(url ? { url: {} } : {}) };
  return {
    roots: { listChanged: true },
    ...(form || url ? { elicitation: modes } : {}),
    ...(sampling ? { sampling: { tools: {} } } : {}),
    ...(views ? { extensions: uiExtension() } : {}),
  };
}

function fileRoot(directory: string): Root {
  return { uri: pathToFileURL(directory).href, name: basename(directory) || directory };
}

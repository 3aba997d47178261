/**
 * The SDK's Client for one server: who we are, what we can do for the server, and the handlers that do it.
 *
 * What the server may ask of the client (a form, a page to open, a completion from the user's model, the roots) is
 * answered by the same handlers (`answerInput`) on every path: a 2025-era server sends a request of its own (tied to
 * a task of ours or not), a 2026-era one answers a call with `input_required`, and the SDK fulfils that through these
 * handlers and retries the call (at most MAX_INPUT_ROUNDS times; its opaque `requestState` goes back untouched, and
 * is never logged or shown), or a task of ours asks for input (`input_required`, answered with `tasks/update`,
 * connection/task-calls.ts).
 *
 * As a 2025-11-25 task receiver (ext-tasks' `bindTaskReceiver`), the client also takes a form or a completion the
 * server asks for as a task of the client's (a task-augmented request it then polls): the same handlers answer it.
 */
import { basename } from "node:path";
import { pathToFileURL } from "node:url";
import {
  Client,
  type ClientCapabilities,
  type CreateMessageRequestParams,
  type CreateMessageResult,
  type ElicitRequestFormParams,
  type ElicitRequestURLParams,
  type ElicitResult,
  type ListRootsResult,
  type Root,
} from "@modelcontextprotocol/client";
import { bindTaskReceiver, type TaskReceiverBinding } from "@modelcontextprotocol/ext-tasks/receiver";
import { uiExtension } from "../apps.ts";
import type { ConnectPlan } from "./era.ts";
import { OUR_PROTOCOL_VERSIONS } from "./era.ts";
import type { SessionSettings } from "./session.ts";
import { ADAPTER_INFO } from "../util/own-version.ts";

/** Rounds of input one request may ask for before it fails: a server asking for ever must not hold a call open. */
export const MAX_INPUT_ROUNDS = 8;

export type InputHandlers = Pick<SessionSettings, "elicitation" | "urlElicitation" | "sampling" | "roots" | "viewsOffered">;

/** What a server may ask of the client, wherever it asks it. */
export type InputRequest =
  | { kind: "elicitation"; params: ElicitRequestFormParams | ElicitRequestURLParams }
  | { kind: "sampling"; params: CreateMessageRequestParams }
  | { kind: "roots" };

/** What answers each kind of request. */
export type InputAnswer<R extends InputRequest> = R extends { kind: "roots" }
  ? ListRootsResult
  : R extends { kind: "sampling" }
    ? CreateMessageResult
    : ElicitResult;

/** The task receivers of the clients made here, ended with their session (`closeTaskReceiver`). */
const receivers = new WeakMap<Client, TaskReceiverBinding>();

/**
 * A client that offers each elicitation mode, and sampling (with tools; not `sampling.context`, whose
 * `includeContext` the handler ignores), only when someone answers it (the SDK then refuses the others before they
 * get here), roots always (Pi's working directory, as a `file://` URI), and MCP Apps to the servers whose views may
 * open. It takes 2025-era task-augmented requests for the forms and completions it offers.
 */
export function newClient(serverName: string, handlers: InputHandlers, plan: ConnectPlan): Client {
  const client = new Client(ADAPTER_INFO, {
    capabilities: clientCapabilities(serverName, handlers),
    supportedProtocolVersions: [...OUR_PROTOCOL_VERSIONS],
    versionNegotiation: plan.negotiation,
    inputRequired: { maxRounds: MAX_INPUT_ROUNDS },
  });
  const answer = <R extends InputRequest>(request: R, signal: AbortSignal) => answerInput(serverName, handlers, request, signal);
  client.setRequestHandler("roots/list", (_request, ctx) => answer({ kind: "roots" }, ctx.mcpReq.signal));
  const { elicitation: form, urlElicitation: url, sampling } = handlers;
  if (form || url)
    client.setRequestHandler("elicitation/create", ({ params }, ctx) => answer({ kind: "elicitation", params }, ctx.mcpReq.signal));
  if (sampling)
    client.setRequestHandler("sampling/createMessage", ({ params }, ctx) => answer({ kind: "sampling", params }, ctx.mcpReq.signal));
  if (form || url || sampling) {
    const receiver = bindTaskReceiver(client, {
      methods: { "elicitation/create": !!(form || url), "sampling/createMessage": !!sampling },
      elicitation: async (request, { signal }) =>
        (await answer({ kind: "elicitation", params: request.params as unknown as ElicitRequestFormParams }, signal)) as never,
      sampling: async (request, { signal }) =>
        (await answer({ kind: "sampling", params: request.params as unknown as CreateMessageRequestParams }, signal)) as never,
    });
    client.registerCapabilities({ tasks: { ...receiver.capabilities } });
    receivers.set(client, receiver);
  }
  return client;
}

/** Ends the client's task receiver: what it still holds (a task's expiry timer) goes with it. */
export function closeTaskReceiver(client: Client): void {
  receivers.get(client)?.close();
  receivers.delete(client);
}

/**
 * Answers what a server asks of the client through the user's handlers (their dialogs, approvals and limits). The
 * SDK refuses a request the client did not offer before it gets here; a path that bypasses it (a task's
 * `input_required`) gets the same refusal from here.
 */
export function answerInput<R extends InputRequest>(
  serverName: string,
  handlers: InputHandlers,
  request: R,
  signal: AbortSignal,
): Promise<InputAnswer<R>> {
  return answer(serverName, handlers, request, signal) as Promise<InputAnswer<R>>;
}

async function answer(serverName: string, handlers: InputHandlers, request: InputRequest, signal: AbortSignal) {
  if (request.kind === "roots") return { roots: handlers.roots().map(fileRoot) };
  if (request.kind === "sampling") {
    if (!handlers.sampling) throw new Error("this client does not sample (sampling/createMessage)");
    return handlers.sampling(serverName, request.params, signal);
  }
  const { params } = request;
  if (params.mode === "url") {
    if (!handlers.urlElicitation) throw new Error("this client does not open pages (URL elicitation)");
    return handlers.urlElicitation(serverName, params, signal);
  }
  if (!handlers.elicitation) throw new Error("this client cannot ask the user (no UI)");
  return handlers.elicitation(serverName, params, signal);
}

/**
 * What the client offers a server (sent at `initialize`, and with every 2026-era request), MCP Apps included when
 * the server's views may open (the SDK sends `extensions` in both eras).
 */
export function clientCapabilities(serverName: string, handlers: InputHandlers): ClientCapabilities {
  const { elicitation: form, urlElicitation: url, sampling } = handlers;
  const views = handlers.viewsOffered?.(serverName) === true;
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

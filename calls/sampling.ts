/**
 * Sampling: a server asks, during a call, for a completion from the user's model (`sampling/createMessage` from a
 * 2025-era server, an `input_required` request from a 2026 one: the connection hands both to this handler). Pi's
 * current model answers, and only once the user approved this one request in Pi's dialog (TUI or RPC), which shows
 * the server, what it asks (its last user message, shortened), its system prompt and how many tokens the answer may
 * take.
 *
 * - With tools (`sampling.tools`): the tools a request brings are offered to the model, which may answer with calls
 *   the server runs and sends back, in its next request, as tool results (calls/sampling-messages.ts). Each request
 *   of such a loop is approved on its own, and the dialog names the tools and whether the model may, must or must
 *   not use them (`toolChoice`). `includeContext` is ignored, as the spec lets a client that does not declare
 *   `sampling.context`: nothing of the session goes to a server, and the dialog says it was asked for.
 * - Offered to every server unless `settings.sampling` turns it off (then servers are told the client cannot
 *   sample), also without a UI: there each request is refused, and the refusal says why, so the model reading the
 *   call's error can tell the user (a 2025-era server gets it as the error of its request; in the 2026 era the call
 *   itself fails with it).
 * - Refused too when the user says no, dismisses the dialog (Esc) or leaves it unanswered, when no model is
 *   selected, when the request holds what Pi cannot give a model, and when the setting was turned off meanwhile.
 * - Bounded: by the request's `maxTokens` and `settings.sampling.maxTokens`, whichever is lower; in time by the
 *   server's request limit (`requestTimeoutMs`, as each request of a call) and by the request's signal (the call
 *   aborted in Pi, or the server's cancel).
 * - The debug log records each request's server, size and outcome, never what it says.
 */
import type { Api, Context, Model } from "@mariozechner/pi-ai";
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import type { CreateMessageRequestParams, CreateMessageResult, CreateMessageResultWithTools } from "@modelcontextprotocol/client";
import { completeWithModel } from "../host.ts";
import type { McpServerManagerOptions } from "../server-manager.ts";
import type { LoadedConfig, McpSettings, SamplingSettings, ServerDefinition } from "../types.ts";
import { DIALOG_TIMEOUT_MS } from "../ui.ts";
import { debugLog } from "../util/debug-log.ts";
import { formatDuration } from "../util/format-time.ts";
import { errorMessage } from "../util/guards.ts";
import { truncate } from "../util/text.ts";
import { lastUserText, samplingContext, samplingResult, type ToolMode, toolMode } from "./sampling-messages.ts";
import { callLimits } from "./limits.ts";

export const DEFAULT_SAMPLING_MAX_TOKENS = 4096;
/**
 * The code of a request the user did not allow (said no, dismissed, left unanswered): the spec's (2025-11-25,
 * client/sampling, Error Handling: "User rejected sampling request: -1"), so a server can tell it from a failure.
 */
const USER_REJECTED_CODE = -1;
/** How much of the request the dialog shows. */
const QUESTION_SHOWN = 300;
const SYSTEM_PROMPT_SHOWN = 200;
const TOOLS_SHOWN = 200;
/** The dialog's words for what the model may do with the request's tools. */
const TOOL_MODE_SHOWN: Record<ToolMode, string> = {
  auto: "it may use them",
  required: "it must use one",
  none: "it may not use them",
};

/** `settings.sampling` with its defaults: on, at most 4096 tokens. */
export function samplingSettings(settings: McpSettings): Required<SamplingSettings> {
  const given = settings.sampling;
  const object = typeof given === "object" ? given : {};
  return { enabled: given !== false && object.enabled !== false, maxTokens: object.maxTokens ?? DEFAULT_SAMPLING_MAX_TOKENS };
}

type SamplingHandler = NonNullable<McpServerManagerOptions["sampling"]>;

/** The session's config, read when a request comes: its settings, and the server's time limit. */
export interface SamplingConfig {
  readonly servers: ReadonlyMap<string, ServerDefinition>;
  readonly config: Pick<LoadedConfig, "settings">;
}

/** What one request is answered with, once it may be. */
interface Sampling {
  ctx: ExtensionContext;
  model: Model<Api>;
  context: Context;
  maxTokens: number;
  /** The server's request time limit (`requestTimeoutMs`). */
  timeLimitMs: number;
}

/** `context`: Pi's, undefined once the session has ended. */
export function piSampling(context: () => ExtensionContext | undefined, session: () => SamplingConfig | undefined): SamplingHandler {
  return async (serverName, request, signal) => {
    debugLog(`${serverName}: sampling request (${describeRequest(request)})`);
    const asked = `MCP server "${serverName}"'s request to use the user's model (sampling)`;
    try {
      const sampling = prepare(context(), session(), serverName, request);
      if (!(await approve(sampling, serverName, request, signal)))
        throw Object.assign(new Error("the user did not allow it"), { code: USER_REJECTED_CODE });
      const result = await complete(sampling, request, signal).catch((error: unknown) => {
        throw new SamplingFailure(`${asked} failed: ${errorMessage(error)}`);
      });
      debugLog(`${serverName}: sampling answered by ${result.model} (${result.stopReason})`);
      return result;
    } catch (error) {
      debugLog(`${serverName}: sampling refused or failed`, error);
      if (error instanceof SamplingFailure) throw error;
      // A refusal the spec gives a code (the user's, -1; an invalid request, -32602) keeps it for a 2025-era server to read.
      const code = (error as { code?: unknown }).code;
      throw Object.assign(new Error(`Pi refused ${asked}: ${errorMessage(error)}.`), typeof code === "number" ? { code } : {});
    }
  };
}

/** Sizes and settings of a request, for the debug log (never what it says). */
function describeRequest(request: CreateMessageRequestParams): string {
  const mode = toolMode(request);
  const context = request.includeContext && request.includeContext !== "none" ? `, includeContext ${request.includeContext} ignored` : "";
  const tools = mode ? `, ${request.tools?.length ?? 0} tools (toolChoice ${mode})` : "";
  return `${request.messages.length} messages, maxTokens ${request.maxTokens}${tools}${context}`;
}

/** The model failed or ran out of time after the user allowed the request (not a refusal). */
class SamplingFailure extends Error {}

/** What the request is answered with; throws why it is refused without asking. */
function prepare(
  ctx: ExtensionContext | undefined,
  session: SamplingConfig | undefined,
  serverName: string,
  request: CreateMessageRequestParams,
): Sampling {
  if (!ctx || !session) throw new Error("the Pi session has ended");
  const { settings } = session.config;
  const limits = samplingSettings(settings);
  if (!limits.enabled) throw new Error('sampling is turned off ("settings.sampling" in the MCP config)');
  if (!ctx.hasUI)
    throw new Error("there is no one to approve it in this mode (no UI); it can be approved in an interactive or RPC session");
  const model = ctx.model;
  if (!model) throw new Error("no model is selected");
  return {
    ctx,
    model,
    context: samplingContext(request, model),
    maxTokens: Math.min(request.maxTokens, limits.maxTokens),
    timeLimitMs: callLimits(session.servers.get(serverName), settings).requestTimeoutMs,
  };
}

/** Pi's dialog: false when the user says no, dismisses it (Esc), leaves it unanswered, or the request is cancelled. */
async function approve(sampling: Sampling, serverName: string, request: CreateMessageRequestParams, signal: AbortSignal): Promise<boolean> {
  const { ctx, model, maxTokens } = sampling;
  const details = [
    `It asks: ${truncate(lastUserText(request), QUESTION_SHOWN)}`,
    ...(request.systemPrompt ? [`System prompt: ${truncate(request.systemPrompt, SYSTEM_PROMPT_SHOWN)}`] : []),
    ...toolsShown(request),
    ...(request.includeContext && request.includeContext !== "none"
      ? [`It asks for context from ${request.includeContext === "thisServer" ? "this server" : "all servers"}: none is added.`]
      : []),
    `Model: ${model.provider}/${model.id}, at most ${maxTokens} tokens.`,
    "Allow it?",
  ].join("\n");
  const approved = await ctx.ui
    .confirm(`MCP server "${serverName}" asks to use your model`, details, { signal, timeout: DIALOG_TIMEOUT_MS })
    .catch((error: unknown) => debugLog("the sampling dialog failed (read as a refusal)", error));
  return approved === true && !signal.aborted;
}

/** The dialog's line on the tools the request offers the model, if it brings any. */
function toolsShown(request: CreateMessageRequestParams): string[] {
  const mode = toolMode(request);
  if (!mode || !request.tools?.length) return [];
  const names = truncate(request.tools.map((tool) => tool.name).join(", "), TOOLS_SHOWN);
  return [`Tools for the model: ${names} (${TOOL_MODE_SHOWN[mode]}).`];
}

/** The completion, ended by the request's signal or the server's time limit. */
async function complete(
  sampling: Sampling,
  request: CreateMessageRequestParams,
  signal: AbortSignal,
): Promise<CreateMessageResult | CreateMessageResultWithTools> {
  const { ctx, model, context, maxTokens, timeLimitMs } = sampling;
  const deadline = AbortSignal.timeout(timeLimitMs);
  const answer = await completeWithModel(ctx.modelRegistry, model, context, {
    maxTokens,
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    // `required` has no provider-neutral form: the answer is checked instead (samplingResult).
    ...(toolMode(request) === "none" ? { toolChoice: "none" as const } : {}),
    signal: AbortSignal.any([signal, deadline]),
  });
  if (deadline.aborted && !signal.aborted)
    throw new Error(`the model did not answer within ${formatDuration(timeLimitMs)} (requestTimeoutMs)`);
  return samplingResult(answer, request);
}

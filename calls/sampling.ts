/**
 * Sampling: a server asks, during a call, for a completion from the user's model (`sampling/createMessage` from a
 * 2025-era server, an `input_required` request from a 2026 one: the connection hands both to this handler). Pi's
 * current model answers, and only once the user approved this one request in Pi's dialog (TUI or RPC), which shows
 * the server, what it asks (its last user message, shortened), its system prompt and how many tokens the answer may
 * take.
 *
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
import type { CreateMessageRequestParams, CreateMessageResult } from "@modelcontextprotocol/client";
import { completeWithModel } from "../host.ts";
import type { McpServerManagerOptions } from "../server-manager.ts";
import type { LoadedConfig, McpSettings, SamplingSettings, ServerDefinition } from "../types.ts";
import { DIALOG_TIMEOUT_MS } from "../ui.ts";
import { debugLog } from "../util/debug-log.ts";
import { formatDuration } from "../util/format-time.ts";
import { errorMessage } from "../util/guards.ts";
import { truncate } from "../util/text.ts";
import { lastUserText, samplingContext, samplingResult } from "./sampling-messages.ts";
import { callLimits } from "./limits.ts";

export const DEFAULT_SAMPLING_MAX_TOKENS = 4096;
/** How much of the request the dialog shows. */
const QUESTION_SHOWN = 300;
const SYSTEM_PROMPT_SHOWN = 200;

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
    debugLog(`${serverName}: sampling request (${request.messages.length} messages, maxTokens ${request.maxTokens})`);
    const asked = `MCP server "${serverName}"'s request to use the user's model (sampling)`;
    try {
      const sampling = prepare(context(), session(), serverName, request);
      if (!(await approve(sampling, serverName, request, signal))) throw new Error("the user did not allow it");
      const result = await complete(sampling, request, signal).catch((error: unknown) => {
        throw new SamplingFailure(`${asked} failed: ${errorMessage(error)}`);
      });
      debugLog(`${serverName}: sampling answered by ${result.model} (${result.stopReason})`);
      return result;
    } catch (error) {
      debugLog(`${serverName}: sampling refused or failed`, error);
      throw error instanceof SamplingFailure ? error : new Error(`Pi refused ${asked}: ${errorMessage(error)}.`);
    }
  };
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
    `Model: ${model.provider}/${model.id}, at most ${maxTokens} tokens.`,
    "Allow it?",
  ].join("\n");
  const approved = await ctx.ui
    .confirm(`MCP server "${serverName}" asks to use your model`, details, { signal, timeout: DIALOG_TIMEOUT_MS })
    .catch((error: unknown) => debugLog("the sampling dialog failed (read as a refusal)", error));
  return approved === true && !signal.aborted;
}

/** The completion, ended by the request's signal or the server's time limit. */
async function complete(sampling: Sampling, request: CreateMessageRequestParams, signal: AbortSignal): Promise<CreateMessageResult> {
  const { ctx, model, context, maxTokens, timeLimitMs } = sampling;
  const deadline = AbortSignal.timeout(timeLimitMs);
  const answer = await completeWithModel(ctx.modelRegistry, model, context, {
    maxTokens,
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    signal: AbortSignal.any([signal, deadline]),
  });
  if (deadline.aborted && !signal.aborted)
    throw new Error(`the model did not answer within ${formatDuration(timeLimitMs)} (requestTimeoutMs)`);
  return samplingResult(answer, request.stopSequences);
}

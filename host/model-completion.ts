/**
 * One completion from a model Pi knows, the way the running host makes it. Pi 0.87 and 1.x complete through their
 * model registry (`modelRegistry.streamSimple`), which resolves the credentials at request time and reaches the
 * providers other extensions registered; their pi-ai's own `completeSimple` cannot see those providers. Pi 0.73's
 * registry has no such call: there pi-ai completes, with the API key and headers the registry resolves for the model.
 * Both are the host's own pi-ai (Pi aliases `@mariozechner/pi-ai` for extensions), never a copy of ours.
 */
import * as piAi from "@mariozechner/pi-ai";
import type { Api, AssistantMessage, Context, Model, SimpleStreamOptions } from "@mariozechner/pi-ai";
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";

/** What Pi 0.87 and 1.x add to the model registry (0.73's types, which we compile against, do not have it). */
interface CompletingRegistry {
  streamSimple(model: Model<Api>, context: Context, options?: CompletionOptions): { result(): Promise<AssistantMessage> };
}

/**
 * The options a caller gives; credentials are the host's business. `toolChoice` is pi-ai's provider-neutral one,
 * which Pi 0.87 and 1.x take (`auto` or `none`); 0.73's simple completion has none, so there it is left out and the
 * caller must check the answer.
 */
export type CompletionOptions = Pick<SimpleStreamOptions, "maxTokens" | "temperature" | "signal"> & { toolChoice?: "auto" | "none" };

/**
 * The model's answer. A failed or aborted completion resolves as pi-ai reports it (`stopReason` `error` or `aborted`,
 * with `errorMessage`); a model without usable credentials on 0.73 throws.
 */
export async function completeWithModel(
  registry: ExtensionContext["modelRegistry"],
  model: Model<Api>,
  context: Context,
  options: CompletionOptions,
): Promise<AssistantMessage> {
  const completing = registry as unknown as Partial<CompletingRegistry>;
  if (typeof completing.streamSimple === "function") return completing.streamSimple(model, context, options).result();
  const auth = await registry.getApiKeyAndHeaders(model);
  if (!auth.ok) throw new Error(auth.error);
  const { toolChoice: _notTaken, ...simple } = options;
  return piAi.completeSimple(model, context, { ...simple, apiKey: auth.apiKey, headers: auth.headers });
}

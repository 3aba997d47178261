/**
 * A Pi extension that registers a scripted model as provider `faux`, model `faux-1`, for the real `pi` CLI
 * (`--model faux/faux-1`). A script is an extension module of its own:
 *
 *   // test/fixtures/faux-scripts/hello.ts
 *   import { fauxProviderExtension } from "../../helpers/faux-provider-extension.ts";
 *   export default fauxProviderExtension(["hello"]);
 *
 * Steps may be functions of the request (see faux-script.ts). When `PI_FAUX_RECORD` names a file, every model
 * request and tool result is appended to it as a JSON line (`{"request": …}` / `{"toolResult": …}`), which
 * `runPrint` reads back. Works on every host: each aliases `@mariozechner/pi-ai` to its own copy.
 */
import { appendFileSync } from "node:fs";
import * as piAi from "@mariozechner/pi-ai";
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import {
  answerWithScript,
  contentText,
  type ModelRequest,
  ModelScript,
  type ScriptStep,
  type ToolResultRecord,
  type TranscriptReplay,
} from "./faux-script.ts";

export const FAUX_MODEL = "faux/faux-1";

export type FauxRecordLine = { request: ModelRequest } | { toolResult: ToolResultRecord };

/** 0.87.1's and 1.x's pi-ai export the transcript replay; 0.73.1's has none (its model gets `tools` directly). */
const replay = ("getCurrentTools" in piAi ? piAi : undefined) as TranscriptReplay | undefined;

export function fauxProviderExtension(steps: readonly ScriptStep[]) {
  return (pi: ExtensionAPI) => {
    const recordFile = process.env.PI_FAUX_RECORD;
    const record = (line: FauxRecordLine) => {
      if (recordFile) appendFileSync(recordFile, `${JSON.stringify(line)}\n`);
    };
    const script = new ModelScript(steps, (request) => record({ request }));
    const faux = piAi.registerFauxProvider({ provider: "faux", models: [{ id: "faux-1" }] });
    answerWithScript(faux, script, piAi, replay);
    const [model] = faux.models;
    pi.registerProvider("faux", {
      api: faux.api,
      // Interactive mode refreshes the model registry, which drops API providers registered outside it: handing
      // Pi the stream function lets it register the faux API again.
      streamSimple: piAi.getApiProvider(faux.api)?.streamSimple,
      baseUrl: model.baseUrl,
      apiKey: "faux-key",
      models: [
        {
          id: model.id,
          name: model.name,
          reasoning: model.reasoning,
          input: model.input,
          cost: model.cost,
          contextWindow: model.contextWindow,
          maxTokens: model.maxTokens,
        },
      ],
    });
    pi.on("tool_execution_end", (event) => {
      record({
        toolResult: {
          toolName: event.toolName,
          toolCallId: event.toolCallId,
          isError: event.isError,
          text: contentText(event.result?.content),
          details: event.result?.details,
        },
      });
    });
  };
}

/**
 * A faux script extension (see faux-provider-extension.ts) whose steps are plain replies read from the JSON
 * file named by `PI_FAUX_STEPS`; `runPrint` uses it when a test passes its steps inline.
 */
import { readFileSync } from "node:fs";
import type { ModelReply } from "./faux-script.ts";
import { fauxProviderExtension } from "./faux-provider-extension.ts";

const stepsFile = process.env.PI_FAUX_STEPS;
if (!stepsFile) throw new Error("faux-json-script: PI_FAUX_STEPS must name a JSON file of model replies");

export default fauxProviderExtension(JSON.parse(readFileSync(stepsFile, "utf8")) as ModelReply[]);

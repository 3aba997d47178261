/**
 * Pi 0.87.1 and 1.x (`@earendil-works/pi-coding-agent`, Node >= 22.19; the same SDK shape): the same services →
 * session → runtime path as their CLI, with a faux provider registered natively in the `ModelRuntime`. The model
 * receives a transcript (prompt and tools as system messages), replayed with the host's own functions to record what
 * it was shown. These versions share a package name, so the run's host is imported from its own folder (1.5.2 and 1.6.0
 * sit under npm aliases, each with its own pi-ai nested in it); the types are 0.87.1's.
 */
import type * as CodingAgent from "@earendil-works/pi-coding-agent";
import type { AgentSessionRuntime, CreateAgentSessionRuntimeFactory } from "@earendil-works/pi-coding-agent";
import type * as PiAi from "@earendil-works/pi-ai";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { answerWithScript, type TranscriptReplay } from "./faux-script.ts";
import type { CreateSdkRuntime, HostRuntime } from "./host-sdk.ts";
import { currentHost, packageDirOf } from "./hosts.ts";

const host = currentHost();
const hostDir = packageDirOf(host);
// Node's own lookup from the host's folder: its nested pi-ai if it has one, else the top-level one.
const nestedPiAi = join(hostDir, "node_modules/@earendil-works/pi-ai");
const piAiDir = existsSync(nestedPiAi) ? nestedPiAi : join(host.modulesDir, "@earendil-works/pi-ai");
const importFile = (path: string) => import(pathToFileURL(path).href);
const {
  createAgentSessionFromServices,
  createAgentSessionRuntime,
  createAgentSessionServices,
  ModelRuntime,
  SessionManager,
  SettingsManager,
} = (await importFile(join(hostDir, "dist/index.js"))) as typeof CodingAgent;
const { fauxAssistantMessage, fauxProvider, fauxText, fauxToolCall, getCurrentSystemPrompt, getCurrentTools } = (await importFile(
  join(piAiDir, "dist/index.js"),
)) as typeof PiAi;

const replay = { getCurrentTools, getCurrentSystemPrompt } as unknown as TranscriptReplay;

export const createSdkRuntime: CreateSdkRuntime = async (options) => {
  const faux = fauxProvider({ provider: "faux", models: [{ id: "faux-1" }] });
  answerWithScript(faux, options.script, { fauxAssistantMessage, fauxText, fauxToolCall }, replay);
  const modelRuntime = await ModelRuntime.create({
    authPath: join(options.agentDir, "auth.json"),
    modelsPath: null,
    refreshOnCreate: false,
  });
  modelRuntime.registerNativeProvider(faux.provider);
  const settingsManager = SettingsManager.inMemory({
    retry: { enabled: false },
    // Warming sends extra requests to the model, which would consume script steps.
    cacheWarming: "off",
    ...options.settings,
  });
  const loadErrors: { path: string; error: string }[] = [];

  const createRuntime: CreateAgentSessionRuntimeFactory = async (target) => {
    const { cwd, agentDir, sessionManager, sessionStartEvent } = target;
    const services = await createAgentSessionServices({
      cwd,
      agentDir,
      modelRuntime,
      settingsManager,
      resourceLoaderOptions: {
        additionalExtensionPaths: [...options.extensionPaths],
        noSkills: true,
        noContextFiles: true,
        noPromptTemplates: true,
      },
    });
    loadErrors.push(...services.resourceLoader.getExtensions().errors);
    const created = await createAgentSessionFromServices({
      services,
      sessionManager,
      sessionStartEvent,
      model: faux.getModel(),
    });
    return { ...created, services, diagnostics: services.diagnostics };
  };
  const runtime: AgentSessionRuntime = await createAgentSessionRuntime(createRuntime, {
    cwd: options.cwd,
    agentDir: options.agentDir,
    sessionManager: options.sessionDir
      ? SessionManager.continueRecent(options.cwd, options.sessionDir)
      : SessionManager.inMemory(options.cwd),
  });
  return {
    runtime: runtime as unknown as HostRuntime,
    loadErrors,
    // The harness stands in for the interactive UI.
    bindingExtras: { mode: "tui" },
    waitForIdle: () => runtime.session.waitForIdle(),
    // The run awaits extension handlers of its events; idle means settled.
    settle: () => runtime.session.waitForIdle(),
    // The faux provider is native to the ModelRuntime, which a reload keeps.
    reload: () => runtime.session.reload(),
    dispose: () => runtime.dispose(),
  };
};

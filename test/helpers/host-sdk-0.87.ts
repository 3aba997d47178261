/**
 * Pi 0.87.1 (`@earendil-works/pi-coding-agent`, Node >= 22.19): the same services → session → runtime path
 * as its CLI, with a faux provider registered natively in the `ModelRuntime`. The model receives a transcript
 * (prompt and tools as system messages), replayed with the host's own functions to record what it was shown.
 */
import {
  type AgentSessionRuntime,
  type CreateAgentSessionRuntimeFactory,
  createAgentSessionFromServices,
  createAgentSessionRuntime,
  createAgentSessionServices,
  ModelRuntime,
  SessionManager,
  SettingsManager,
} from "@earendil-works/pi-coding-agent";
import {
  fauxAssistantMessage,
  fauxProvider,
  fauxText,
  fauxToolCall,
  getCurrentSystemPrompt,
  getCurrentTools,
} from "@earendil-works/pi-ai";
import { join } from "node:path";
import { answerWithScript, type TranscriptReplay } from "./faux-script.ts";
import type { CreateSdkRuntime, HostRuntime } from "./host-sdk.ts";

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

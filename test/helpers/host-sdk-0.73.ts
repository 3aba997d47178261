/**
 * Pi 0.73.1 (`@mariozechner/pi-coding-agent`, Node 20): sessions built the way its CLI builds them
 * (services → session → `AgentSessionRuntime`), with a faux model registered in pi-ai's API registry.
 */
import {
  type AgentSessionRuntime,
  AuthStorage,
  type CreateAgentSessionRuntimeFactory,
  createAgentSessionFromServices,
  createAgentSessionRuntime,
  createAgentSessionServices,
  ModelRegistry,
  SessionManager,
  SettingsManager,
} from "@mariozechner/pi-coding-agent";
import { fauxAssistantMessage, fauxText, fauxToolCall, registerFauxProvider, type Model } from "@mariozechner/pi-ai";
import { answerWithScript, type ModelScript } from "./faux-script.ts";
import type { CreateSdkRuntime, HostRuntime } from "./host-sdk.ts";

const PROVIDER = "faux";

export const createSdkRuntime: CreateSdkRuntime = async (options) => {
  let faux = registerScriptedModel(options.script);
  const model = faux.getModel();
  const authStorage = AuthStorage.inMemory();
  authStorage.setRuntimeApiKey(PROVIDER, "faux-key");
  const modelRegistry = ModelRegistry.inMemory(authStorage);
  const settingsManager = SettingsManager.inMemory({ retry: { enabled: false }, ...options.settings });
  const loadErrors: { path: string; error: string }[] = [];

  const createRuntime: CreateAgentSessionRuntimeFactory = async (target) => {
    const { cwd, agentDir, sessionManager, sessionStartEvent } = target;
    const services = await createAgentSessionServices({
      cwd,
      agentDir,
      authStorage,
      modelRegistry,
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
      model: model as Model<any>,
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
    bindingExtras: {},
    waitForIdle: () => runtime.session.agent.waitForIdle(),
    settle: async () => {
      await runtime.session.agent.waitForIdle();
      // 0.73.1 hands agent events to extensions on a private queue the run does not await, so `prompt()`
      // can resolve before `agent_end` handlers finish. Drain it (0.73.1 is pinned; this field is stable there).
      const session = runtime.session as unknown as { _agentEventQueue: Promise<void> };
      let queue: Promise<void>;
      do {
        queue = session._agentEventQueue;
        await queue;
      } while (queue !== session._agentEventQueue);
    },
    reload: async () => {
      await runtime.session.reload();
      faux = registerScriptedModel(options.script, faux.api);
    },
    dispose: async () => {
      await runtime.dispose();
      faux.unregister();
    },
  };
};

/** A faux provider whose every response is the script's next step; returns the registration. */
function registerScriptedModel(script: ModelScript, api?: string) {
  const faux = registerFauxProvider({ api, provider: PROVIDER, models: [{ id: "faux-1" }] });
  answerWithScript(faux, script, { fauxAssistantMessage, fauxText, fauxToolCall });
  return faux;
}

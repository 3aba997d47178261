/**
 * Validating the `settings` object of a config file. A setting with a bad value is a warning and falls back to its
 * default (or, where that would not be safe, to the safe value); the other settings still apply.
 */
import {
  approvalRule,
  boolean,
  booleanOrStringList,
  type Check,
  checkUrl,
  directToolsSetting,
  type Fallback,
  httpUrl,
  nonEmptyString,
  number,
  outputGuard,
  positiveWholeNumber,
  taskSettings,
  timeLimit,
  toolPrefixMode,
} from "./checks.ts";
import { configProblem } from "./problems.ts";
import { describeValue, isJsonObject } from "../util/guards.ts";
import type { InterpolationContext } from "./interpolation.ts";
import { expandHome } from "../util/paths.ts";
import type { CaptureStatsSettings, ConfigProblem, EmbeddingsSettings, McpSettings, SearchSettings } from "../types.ts";

const SETTINGS_CHECKS = {
  toolPrefix: toolPrefixMode,
  idleTimeout: number(0, true),
  directTools: directToolsSetting,
  approveTools: approvalRule,
  toonEncode: booleanOrStringList,
  requestTimeoutMs: timeLimit,
  maxTotalTimeoutMs: timeLimit,
  outputGuard,
  tasks: taskSettings,
  trustProjectServers: boolean,
} satisfies Record<string, Check<unknown>>;

/** A setting with a bad value is left out (its default applies), except where that would not be safe. */
const SETTINGS_FALLBACKS: Readonly<Record<string, Fallback>> = {
  approveTools: { means: "every MCP tool asks before it runs", value: true },
};
const SETTING_LEFT_OUT: Fallback = { means: "ignored (the default applies)" };

/** An invalid setting is a warning and falls back (see SETTINGS_FALLBACKS); the others still apply. */
export function parseSettings(raw: unknown, file: string, context: InterpolationContext, problems: ConfigProblem[]): McpSettings {
  if (raw === undefined) return {};
  if (!isJsonObject(raw)) {
    problems.push(configProblem("error", { file, field: "settings" }, `must be an object (got ${describeValue(raw)})`));
    return {};
  }
  const settings: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    const field = `settings.${key}`;
    if (key === "captureStats") {
      const captureStats = parseCaptureStats(value, file, context, problems);
      if (captureStats !== undefined) settings.captureStats = captureStats;
      continue;
    }
    if (Object.hasOwn(SWITCH_CHECKS, key)) {
      const parsed = parseSwitchSettings(key, SWITCH_CHECKS[key]!, value, file, problems);
      if (parsed !== undefined) settings[key] = parsed;
      continue;
    }
    if (key === "search") {
      const search = parseSearchSettings(value, file, problems);
      if (search !== undefined) settings.search = search;
      continue;
    }
    const check = Object.hasOwn(SETTINGS_CHECKS, key) ? (SETTINGS_CHECKS as Record<string, Check<unknown>>)[key] : undefined;
    if (!check) {
      problems.push(configProblem("warning", { file, field }, "unknown setting, ignored"));
      continue;
    }
    const checked = check(value);
    if (checked.ok) {
      for (const part of checked.leftOut ?? [])
        problems.push(configProblem("warning", { file, field: field + part.at }, `${part.expected}; ${SETTING_LEFT_OUT.means}`));
      if (checked.value !== undefined) settings[key] = checked.value;
      continue;
    }
    const fallback = Object.hasOwn(SETTINGS_FALLBACKS, key) ? SETTINGS_FALLBACKS[key]! : SETTING_LEFT_OUT;
    problems.push(configProblem("warning", { file, field: field + (checked.at ?? "") }, `${checked.expected}; ${fallback.means}`));
    if (fallback.value !== undefined) settings[key] = fallback.value;
  }
  return settings as McpSettings;
}

function parseCaptureStats(
  value: unknown,
  file: string,
  context: InterpolationContext,
  problems: ConfigProblem[],
): boolean | CaptureStatsSettings | undefined {
  if (typeof value === "boolean") return value;
  if (!isJsonObject(value)) {
    const expected = `must be true, false or { "path", "flushDelayMs" } (got ${describeValue(value)})`;
    problems.push(configProblem("warning", { file, field: "settings.captureStats" }, `${expected}; ${SETTING_LEFT_OUT.means}`));
    return undefined;
  }
  const stats: CaptureStatsSettings = {};
  for (const [key, item] of Object.entries(value)) {
    const field = `settings.captureStats.${key}`;
    const checked = key === "path" ? nonEmptyString(item) : key === "flushDelayMs" ? number(0, true)(item) : undefined;
    if (!checked) problems.push(configProblem("warning", { file, field }, "unknown field, ignored"));
    else if (!checked.ok) {
      problems.push(configProblem("warning", { file, field }, `${checked.expected}; ${SETTING_LEFT_OUT.means}`));
      return undefined;
    } else if (key === "path") stats.path = expandHome(checked.value as string, context.homeDir, context.platform);
    else stats.flushDelayMs = checked.value as number;
  }
  return stats;
}

const EMBEDDINGS_CHECKS: Readonly<Record<string, Check<unknown>>> = {
  url: (value) => {
    const checked = nonEmptyString(value);
    const problem = checked.ok ? checkUrl(checked.value) : undefined;
    return problem ? { ok: false, expected: problem } : checked;
  },
  model: nonEmptyString,
  apiKeyEnv: nonEmptyString,
  timeoutMs: number(0, false),
};
const EMBEDDINGS_REQUIRED = ["url", "model"];

/** `{ embeddings: { url, model, apiKeyEnv?, timeoutMs? } }`; anything wrong in it leaves semantic re-ranking off. */
function parseSearchSettings(value: unknown, file: string, problems: ConfigProblem[]): SearchSettings | undefined {
  const off = "semantic re-ranking stays off";
  if (!isJsonObject(value)) {
    problems.push(configProblem("warning", { file, field: "settings.search" }, `must be an object (got ${describeValue(value)}); ignored`));
    return undefined;
  }
  const search: SearchSettings = {};
  for (const [key, raw] of Object.entries(value)) {
    if (key !== "embeddings") {
      problems.push(configProblem("warning", { file, field: `settings.search.${key}` }, "unknown field, ignored"));
      continue;
    }
    if (!isJsonObject(raw)) {
      const expected = `must be an object { "url", "model", "apiKeyEnv", "timeoutMs" } (got ${describeValue(raw)})`;
      problems.push(configProblem("warning", { file, field: "settings.search.embeddings" }, `${expected}; ${off}`));
      continue;
    }
    const embeddings: Record<string, unknown> = {};
    let valid = true;
    for (const [name, item] of Object.entries(raw)) {
      const field = `settings.search.embeddings.${name}`;
      const check = Object.hasOwn(EMBEDDINGS_CHECKS, name) ? EMBEDDINGS_CHECKS[name] : undefined;
      const checked = check?.(item);
      if (!checked) problems.push(configProblem("warning", { file, field }, "unknown field, ignored"));
      else if (checked.ok) embeddings[name] = checked.value;
      else {
        problems.push(configProblem("warning", { file, field }, `${checked.expected}; ${off}`));
        valid = false;
      }
    }
    for (const name of EMBEDDINGS_REQUIRED.filter((name) => !(name in raw))) {
      problems.push(configProblem("warning", { file, field: `settings.search.embeddings.${name}` }, `is required; ${off}`));
      valid = false;
    }
    if (valid) search.embeddings = embeddings as unknown as EmbeddingsSettings;
  }
  return search;
}

/** Settings that are `true`, `false` or an object of fields: `script`, `sampling`, `apps`, `registry`. */
const SWITCH_CHECKS: Readonly<Record<string, Readonly<Record<string, Check<unknown>>>>> = {
  script: { enabled: boolean, timeoutMs: number(0, false), memoryMb: number(1, true) },
  sampling: { enabled: boolean, maxTokens: positiveWholeNumber },
  apps: { enabled: boolean, openBrowser: boolean },
  registry: { url: httpUrl },
};

/** `true`, `false` or `{ enabled, … }`; a bad field is left out (its default applies). */
function parseSwitchSettings(
  key: string,
  checks: Readonly<Record<string, Check<unknown>>>,
  value: unknown,
  file: string,
  problems: ConfigProblem[],
): boolean | Record<string, unknown> | undefined {
  if (typeof value === "boolean") return value;
  if (!isJsonObject(value)) {
    const fields = Object.keys(checks).map((name) => `"${name}"`);
    const expected = `must be true, false or { ${fields.join(", ")} } (got ${describeValue(value)})`;
    problems.push(configProblem("warning", { file, field: `settings.${key}` }, `${expected}; ${SETTING_LEFT_OUT.means}`));
    return undefined;
  }
  const parsed: Record<string, unknown> = {};
  for (const [name, item] of Object.entries(value)) {
    const field = `settings.${key}.${name}`;
    const checked = Object.hasOwn(checks, name) ? checks[name]!(item) : undefined;
    if (!checked) problems.push(configProblem("warning", { file, field }, "unknown field, ignored"));
    else if (!checked.ok) problems.push(configProblem("warning", { file, field }, `${checked.expected}; ${SETTING_LEFT_OUT.means}`));
    else parsed[name] = checked.value;
  }
  return parsed;
}

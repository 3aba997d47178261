/**
 * Validating one server entry written in our format (host files are first mapped to it by config/imports.ts) and
 * substituting variables in it (the `settings` object: config/settings.ts; the checks of single values:
 * config/checks.ts; the `oauth` object: config/oauth-entry.ts). Every problem names the file, the server and the field;
 * nothing here throws.
 *
 * Configs written for pi-mcp-adapter 2.x (upstream, which reads the same files) must not lose a server: its fields
 * we lack are unknown fields (a warning), and a behaviour field with a value we do not know falls back to its default
 * with a warning (an unknown `lifecycle` is `lazy`; an unreadable `approveTools` asks for every tool: fail closed).
 */
import {
  approvalRule,
  authKind,
  boolean,
  type Check,
  type CheckedType,
  checkUrl,
  directToolsField,
  exposure,
  type Fallback,
  nonEmptyString,
  number,
  oneOf,
  outputGuard,
  plainObject,
  string,
  stringList,
  stringMap,
  taskSettings,
  timeLimit,
  toolExposureMap,
  toolPrefixMode,
  transportName,
} from "./checks.ts";
import { configProblem, type ProblemLocation } from "./problems.ts";
import { type CheckedOAuth, IDENTITY_PROVIDER_CHECKS, OAUTH_CHECKS, settleOAuth } from "./oauth-entry.ts";
import { describeValue, isJsonObject } from "../util/guards.ts";
import { interpolate, interpolationProblem, type InterpolationContext } from "./interpolation.ts";
import { expandHome, pathModule } from "../util/paths.ts";
import {
  type ConfigProblem,
  type ConfigSource,
  type LifecycleMode,
  LOG_LEVELS,
  type LogLevelSetting,
  type OAuthSettings,
  type ServerEntry,
  type TransportKind,
} from "../types.ts";

export interface EntryOptions {
  file: string;
  /** Home, project dir and platform: for `~`, relative `cwd` and substitution. */
  context: InterpolationContext;
  /** False for formats without substitution (Codex): values are taken literally. */
  interpolate: boolean;
  /** Our own files: an entry with only behaviour fields adjusts a server defined in a lower-precedence file. */
  allowOverride: boolean;
  /** Our own files: unknown fields are reported (host files carry many fields we have no use for). */
  reportUnknownFields: boolean;
  /** Host files whose fields were renamed to ours: problems name the field as the file spells it. */
  hostFieldNames?: Readonly<Record<string, string>>;
  /** The host that owns the file reads `${VAR:-default}` too (ours, Claude Code): an unset variable's hint may suggest it. */
  defaultsSyntax?: boolean;
  /**
   * What an `env`, `headers` or `oauth` secret value written as `!command` is: `run` (the user's own files, a
   * trusted project's: run when the server starts, the secret when it is needed), `refused` (an untrusted project's:
   * the server cannot start), `literal` (other tools' files, which never meant a command: passed as written).
   */
  commands: CommandValues;
}

export type CommandValues = "run" | "refused" | "literal";

/**
 * How an entry that is the user's own but not written in one of their config files is read: another extension's, an
 * installed package's, or one `/mcp add` is about to write. Substituted, never an override, its `!command` values run.
 */
export function ownEntryOptions(file: string, context: InterpolationContext, reportUnknownFields = false): EntryOptions {
  return { file, context, interpolate: true, allowOverride: false, reportUnknownFields, defaultsSyntax: true, commands: "run" };
}

export type ParsedEntry =
  | {
      kind: "server";
      entry: ServerEntry & { enabled: boolean };
      /** Substitution failures: they matter only if the server ends up enabled. */
      unresolved: ConfigProblem[];
    }
  | { kind: "override"; entry: ServerEntry }
  | { kind: "invalid" };

/** The servers of one file (or one scope of a file), parsed; a layer's entries override those of lower layers. */
export interface ConfigLayer {
  source: ConfigSource;
  entries: Array<{ name: string; parsed: ParsedEntry }>;
}

const LIFECYCLES: readonly LifecycleMode[] = ["lazy", "eager", "keep-alive", "lazy-keep-alive"];

/** Fields that only change how the adapter treats a server: a project file may set them alone, as an override. */
const BEHAVIOUR_CHECKS = {
  enabled: boolean,
  disabled: boolean,
  lifecycle: oneOf(LIFECYCLES),
  idleTimeout: number(0, true),
  startupTimeoutMs: number(0, false),
  requestTimeoutMs: timeLimit,
  maxTotalTimeoutMs: timeLimit,
  outputGuard,
  tasks: taskSettings,
  exposeResources: boolean,
  directTools: directToolsField,
  includeTools: stringList,
  excludeTools: stringList,
  skills: boolean,
  includeSkills: stringList,
  excludeSkills: stringList,
  approveTools: approvalRule,
  apps: boolean,
  toolPrefix: toolPrefixMode,
  debug: boolean,
  logLevel: oneOf<LogLevelSetting>([...LOG_LEVELS, "off"]),
  // Pi 1.x's built-in MCP fields. A bad `exposure` costs the server (as it does there): falling back could show a
  // tool meant to be hidden.
  timeout: number(0, false),
  description: string,
  exposure,
  toolExposure: toolExposureMap,
} satisfies Record<string, Check<unknown>>;

/** What a bad value of a behaviour field falls back to (with a warning) instead of costing the server. */
const BEHAVIOUR_FALLBACKS: Readonly<Record<string, Fallback>> = {
  lifecycle: { means: `using "lazy"` },
  idleTimeout: { means: "using the default" },
  startupTimeoutMs: { means: "using the default (30000)" },
  requestTimeoutMs: { means: "settings.requestTimeoutMs applies" },
  maxTotalTimeoutMs: { means: "settings.maxTotalTimeoutMs applies" },
  outputGuard: { means: "settings.outputGuard applies" },
  tasks: { means: "settings.tasks applies" },
  exposeResources: { means: "using the default (true)" },
  directTools: { means: "ignored (tools are found through ToolSearch)" },
  toolPrefix: { means: "ignored (settings.toolPrefix applies)" },
  debug: { means: "ignored" },
  logLevel: { means: `using the default ("warning")` },
  timeout: { means: "requestTimeoutMs or the default applies" },
  description: { means: "ignored" },
  approveTools: { means: "every tool of this server asks before it runs", value: true },
  // A server's skills are text the model follows: a value that may have meant "no" keeps them out.
  skills: { means: "its skills are not offered", value: false },
  // A view runs the server's code in the user's browser: a value that may have meant "no" opens none.
  apps: { means: "its tools open no view", value: false },
};

const CONNECTION_CHECKS = {
  command: nonEmptyString,
  args: stringList,
  env: stringMap,
  cwd: nonEmptyString,
  url: nonEmptyString,
  headers: stringMap,
  type: transportName,
  transport: transportName,
  auth: authKind,
  oauth: plainObject,
  bearerToken: string,
  bearerTokenEnv: nonEmptyString,
} satisfies Record<string, Check<unknown>>;

type BehaviourFields = { -readonly [K in keyof typeof BEHAVIOUR_CHECKS]?: CheckedType<(typeof BEHAVIOUR_CHECKS)[K]> };
type ConnectionFields = { -readonly [K in keyof typeof CONNECTION_CHECKS]?: CheckedType<(typeof CONNECTION_CHECKS)[K]> };
type RawFields = BehaviourFields & ConnectionFields;

const ALL_CHECKS: Readonly<Record<string, Check<unknown>>> = { ...BEHAVIOUR_CHECKS, ...CONNECTION_CHECKS };
const STDIO_ONLY = ["args", "env", "cwd"] as const;
const HTTP_ONLY = ["headers", "auth", "oauth", "bearerToken", "bearerTokenEnv"] as const;
/** What configures a token: an OAuth server gets its tokens from the sign-in instead. */
const TOKEN_FIELDS = ["bearerToken", "bearerTokenEnv"] as const;

export function parseServerEntry(name: string, raw: unknown, options: EntryOptions, problems: ConfigProblem[]): ParsedEntry {
  const at = locator(name, options);
  if (name.trim() === "") {
    problems.push(configProblem("error", at(), "a server needs a non-empty name"));
    return { kind: "invalid" };
  }
  if (!isJsonObject(raw)) {
    problems.push(configProblem("error", at(), `must be an object (got ${describeValue(raw)})`));
    return { kind: "invalid" };
  }
  // pi-mcp-adapter 2.x reaches a server shared through rmcp-mux by its Unix socket; read as an override, it would be
  // reported as changing a server no other file defines.
  if ("socket" in raw && !("command" in raw) && !("url" in raw)) {
    problems.push(
      configProblem(
        "error",
        at("socket"),
        `an rmcp-mux socket (pi-mcp-adapter 2.x) is not supported here: give the server a "command" or a "url"`,
      ),
    );
    return { kind: "invalid" };
  }
  const fields = checkFields(raw, ALL_CHECKS, "", options, at, problems, BEHAVIOUR_FALLBACKS) as RawFields | undefined;
  if (!fields) return { kind: "invalid" };
  const enabled = fields.disabled === true ? false : fields.enabled;
  const behaviour = behaviourEntry(fields, enabled);

  const hasCommand = fields.command !== undefined;
  const hasUrl = fields.url !== undefined;
  if (hasCommand && hasUrl) {
    problems.push(
      configProblem("error", at("url"), `has both "command" and "url"; a server is either a process (command) or an endpoint (url)`),
    );
    return { kind: "invalid" };
  }
  if (!hasCommand && !hasUrl) {
    const connectionField = Object.keys(CONNECTION_CHECKS).find((key) => key in fields);
    if (options.allowOverride && connectionField === undefined) return { kind: "override", entry: behaviour };
    const has = connectionField === undefined ? "" : `has "${at(connectionField).field}" but `;
    problems.push(configProblem("error", at("command"), `${has}needs "command" (a process) or "url" (an HTTP endpoint)`));
    return { kind: "invalid" };
  }

  const transport = resolveTransport(fields, hasCommand, at, problems);
  if (transport === null) return { kind: "invalid" };
  dropFieldsOfOtherTransport(fields, hasCommand, at, problems);
  const checkedOAuth = fields.oauth && checkOAuth(fields.oauth, options, at, problems);
  if (checkedOAuth === null) return { kind: "invalid" };
  const oauth = settleAuth(fields, checkedOAuth, at, problems);
  warnOfCommandValues(fields, oauth, options, at, problems);

  const unresolved: ConfigProblem[] = [];
  const connection = connectionEntry(fields, oauth, options, at, unresolved);
  if (connection.url !== undefined && !unresolved.some((problem) => problem.field === at("url").field)) {
    const urlProblem = checkUrl(connection.url);
    if (urlProblem) {
      problems.push(configProblem("error", at("url"), urlProblem));
      return { kind: "invalid" };
    }
  }
  if (transport !== undefined) connection.transport = transport;
  return { kind: "server", entry: { ...connection, ...behaviour, enabled: enabled ?? true }, unresolved };
}

type Locator = (field?: string) => ProblemLocation;

/**
 * pi-mcp-adapter 2.x (upstream, which reads the same files) runs a secret that begins with "!" as a command and uses
 * its output ("!!" escapes a literal "!"); so does Pi 1.x's built-in MCP for `env`, `headers` and `oauth.clientSecret`
 * values. Where this adapter does not run it (other tools' files; `bearerToken` anywhere) the value is passed as
 * written, so the server would get the command's text as its secret. Said per field, naming it, so a migrated config
 * is not a silent auth failure.
 */
function warnOfCommandValues(
  fields: RawFields,
  oauth: OAuthSettings | undefined,
  options: EntryOptions,
  at: Locator,
  problems: ConfigProblem[],
): void {
  const literal = options.commands === "literal";
  const maps = literal
    ? ([
        ["env", fields.env],
        ["headers", fields.headers],
      ] as const)
    : [];
  const secrets: Array<[string, string | undefined]> = [
    ...maps.flatMap(([field, map]) => Object.entries(map ?? {}).map(([key, value]): [string, string] => [`${field}.${key}`, value])),
    ["bearerToken", fields.bearerToken],
    ["oauth.clientSecret", literal ? oauth?.clientSecret : undefined],
  ];
  for (const [field, value] of secrets) {
    if (!value?.startsWith("!")) continue;
    const message = value.startsWith("!!")
      ? `begins with "!!", which pi-mcp-adapter 2.x reads as one literal "!"; this adapter passes the value as written`
      : `begins with "!", which pi-mcp-adapter 2.x runs as a command for the secret; this adapter runs only the env, headers and oauth secret values of your own files (and a trusted project's) and passes this one as written (put the secret in an environment variable and use \${VAR})`;
    problems.push(configProblem("warning", at(field), message));
  }
}

/** The `oauth` object, checked field by field (config/oauth-entry.ts says what they are) and as a whole; null on an error. */
function checkOAuth(raw: Record<string, unknown>, options: EntryOptions, at: Locator, problems: ConfigProblem[]): OAuthSettings | null {
  const checked = checkFields(raw, OAUTH_CHECKS, "oauth.", options, at, problems) as CheckedOAuth | undefined;
  if (checked?.identityProvider) {
    // An object: it passed OAUTH_CHECKS.
    const fields = raw.identityProvider as Record<string, unknown>;
    const provider = checkFields(fields, IDENTITY_PROVIDER_CHECKS, "oauth.identityProvider.", options, at, problems);
    if (!provider) return null;
    checked.identityProvider = provider;
  }
  return checked ? settleOAuth(checked, at, problems) : null;
}

function locator(server: string, options: EntryOptions): Locator {
  return (field) => {
    if (field === undefined) return { file: options.file, server };
    const [, base = field, rest = ""] = /^([A-Za-z_]+)(.*)$/.exec(field) ?? [];
    return { file: options.file, server, field: (options.hostFieldNames?.[base] ?? base) + rest };
  };
}

/**
 * The fields of an object (the entry, or an object in it: `prefix` names it), each checked; undefined on an error.
 * A bad value of a field with a fallback is a warning instead.
 */
function checkFields(
  raw: Record<string, unknown>,
  checks: Readonly<Record<string, Check<unknown>>>,
  prefix: string,
  options: EntryOptions,
  at: Locator,
  problems: ConfigProblem[],
  fallbacks: Readonly<Record<string, Fallback>> = {},
): Record<string, unknown> | undefined {
  const fields: Record<string, unknown> = {};
  let valid = true;
  for (const [key, value] of Object.entries(raw)) {
    const check = Object.hasOwn(checks, key) ? checks[key] : undefined;
    if (!check) {
      if (options.reportUnknownFields) problems.push(configProblem("warning", at(prefix + key), "unknown field, ignored"));
      continue;
    }
    const checked = check(value);
    const fallback = Object.hasOwn(fallbacks, key) ? fallbacks[key] : undefined;
    if (checked.ok) {
      fields[key] = checked.value;
      for (const part of checked.leftOut ?? [])
        problems.push(configProblem("warning", at(prefix + key + part.at), `${part.expected}; ${fallback?.means ?? "ignored"}`));
    } else if (fallback) {
      problems.push(configProblem("warning", at(prefix + key + (checked.at ?? "")), `${checked.expected}; ${fallback.means}`));
      if (fallback.value !== undefined) fields[key] = fallback.value;
    } else {
      problems.push(configProblem("error", at(prefix + key + (checked.at ?? "")), checked.expected));
      valid = false;
    }
  }
  return valid ? fields : undefined;
}

/**
 * A server either gets a token from its config or signs in with OAuth. `auth: "bearer"` turns OAuth off; OAuth asked
 * for (`auth: "oauth"` or an `oauth` object) makes configured tokens void, so they are dropped with a warning.
 */
function settleAuth(
  fields: RawFields,
  oauth: OAuthSettings | undefined,
  at: Locator,
  problems: ConfigProblem[],
): OAuthSettings | undefined {
  if (fields.auth === "bearer" && oauth) {
    problems.push(configProblem("warning", at("oauth"), `ignored: "auth" is "bearer"`));
    return undefined;
  }
  if (fields.auth !== "oauth" && !oauth) return oauth;
  const reason = "ignored: the server signs in with OAuth (/mcp-auth)";
  for (const key of TOKEN_FIELDS) {
    if (fields[key] === undefined) continue;
    problems.push(configProblem("warning", at(key), reason));
    delete fields[key];
  }
  for (const key of Object.keys(fields.headers ?? {})) {
    if (key.toLowerCase() !== "authorization") continue;
    problems.push(configProblem("warning", at(`headers.${key}`), reason));
    delete fields.headers![key];
  }
  return oauth;
}

/** The behaviour fields as a server entry holds them (`disabled` is folded into `enabled`). */
type BehaviourEntry = Pick<ServerEntry, Exclude<keyof BehaviourFields, "disabled">>;
/** Every behaviour field but the two that say whether the server is on (settled into `enabled` first). */
const BEHAVIOUR_KEYS = Object.keys(BEHAVIOUR_CHECKS).filter((key) => key !== "enabled" && key !== "disabled") as (keyof BehaviourEntry)[];

function behaviourEntry(fields: RawFields, enabled: boolean | undefined): ServerEntry {
  // The checks' types are the entry's (tsc checks this assignment), so the fields can be copied by name.
  const checked: BehaviourEntry = fields;
  const entry: BehaviourEntry = enabled === undefined ? {} : { enabled };
  for (const key of BEHAVIOUR_KEYS) if (checked[key] !== undefined) Object.assign(entry, { [key]: checked[key] });
  return entry;
}

/** `undefined`: not named by the file (the connection layer picks); `null`: contradictory. */
function resolveTransport(
  fields: RawFields,
  hasCommand: boolean,
  at: Locator,
  problems: ConfigProblem[],
): TransportKind | undefined | null {
  if (fields.type !== undefined && fields.transport !== undefined && fields.type !== fields.transport) {
    problems.push(configProblem("error", at("transport"), `"type" and "transport" name different transports`));
    return null;
  }
  const transport = fields.type ?? fields.transport;
  if (transport === undefined) return undefined;
  const field = fields.type !== undefined ? "type" : "transport";
  if (transport === "stdio" && !hasCommand) {
    problems.push(configProblem("error", at(field), `is "stdio" but the server has a "url" and no "command"`));
    return null;
  }
  if (transport !== "stdio" && hasCommand) {
    problems.push(configProblem("error", at(field), `is an HTTP transport but the server has a "command" and no "url"`));
    return null;
  }
  return transport;
}

function dropFieldsOfOtherTransport(fields: RawFields, hasCommand: boolean, at: Locator, problems: ConfigProblem[]): void {
  const irrelevant = hasCommand ? HTTP_ONLY : STDIO_ONLY;
  for (const key of irrelevant) {
    if (fields[key] === undefined) continue;
    const kind = hasCommand ? "an HTTP server (url)" : "a process (command)";
    problems.push(configProblem("warning", at(key), `only applies to ${kind}; ignored`));
    delete fields[key];
  }
}

/** The connection fields, with variables substituted, `~` expanded and a relative `cwd` resolved. */
function connectionEntry(
  fields: RawFields,
  oauth: OAuthSettings | undefined,
  options: EntryOptions,
  at: Locator,
  unresolved: ConfigProblem[],
): ServerEntry {
  const { context } = options;
  const text = (value: string, field: string, isPath = false): string => {
    let result = value;
    if (options.interpolate) {
      const interpolated = interpolate(value, context);
      for (const issue of interpolated.issues) unresolved.push(interpolationProblem(issue, at(field), options.defaultsSyntax ?? false));
      result = interpolated.value;
    }
    // Only a `~` the user wrote is a home directory, not one that came out of a variable.
    return isPath && value.startsWith("~") ? expandHome(result, context.homeDir, context.platform) : result;
  };
  const commandValues: string[] = [];
  const mapValue = (value: string, field: string): string => {
    if (options.commands === "literal" || !value.startsWith("!")) return text(value, field);
    if (value.startsWith("!!")) return text(value.slice(1), field); // "!!" is a literal "!" (upstream 2.x's escape)
    if (options.commands === "refused") {
      const message = `is a command ("!…"), which runs only once the project is trusted; the server cannot start without it`;
      unresolved.push(configProblem("error", at(field), message));
    } else {
      // Not substituted: the shell reads its own variables.
      commandValues.push(at(field).field!);
    }
    return value;
  };
  const map = (values: Record<string, string>, field: string) =>
    Object.fromEntries(Object.entries(values).map(([key, value]) => [key, mapValue(value, `${field}.${key}`)]));

  const entry: ServerEntry = {};
  if (fields.command !== undefined) entry.command = text(fields.command, "command", true);
  if (fields.args !== undefined) entry.args = fields.args.map((arg, index) => text(arg, `args[${index}]`, true));
  if (fields.env !== undefined) entry.env = map(fields.env, "env");
  if (fields.cwd !== undefined) {
    const paths = pathModule(context.platform);
    // Relative to the project, not to whatever directory Pi's process happens to be in.
    entry.cwd = paths.resolve(context.cwd, text(fields.cwd, "cwd", true));
  }
  if (fields.url !== undefined) entry.url = text(fields.url, "url");
  if (fields.headers !== undefined) entry.headers = map(fields.headers, "headers");
  if (fields.bearerToken !== undefined) entry.bearerToken = text(fields.bearerToken, "bearerToken");
  if (fields.bearerTokenEnv !== undefined) entry.bearerTokenEnv = fields.bearerTokenEnv;
  if (fields.auth) entry.auth = fields.auth;
  if (oauth) {
    entry.oauth = { ...oauth };
    // The client's id, secret and key are the secrets here: substituted like a bearer token.
    if (oauth.clientId !== undefined) entry.oauth.clientId = text(oauth.clientId, "oauth.clientId");
    // A secret written as `!command` is one like an env value's (Pi's built-in runs it too); it runs when needed.
    if (oauth.clientSecret !== undefined) entry.oauth.clientSecret = mapValue(oauth.clientSecret, "oauth.clientSecret");
    if (oauth.privateKey !== undefined) entry.oauth.privateKey = text(oauth.privateKey, "oauth.privateKey");
    // A workload's JWT or a user's ID token: short-lived, so mostly a command's output or a variable's value.
    if (oauth.workloadToken !== undefined) entry.oauth.workloadToken = mapValue(oauth.workloadToken, "oauth.workloadToken");
    if (oauth.workloadTokenFile !== undefined)
      entry.oauth.workloadTokenFile = text(oauth.workloadTokenFile, "oauth.workloadTokenFile", true);
    if (oauth.identityProvider !== undefined) {
      const { issuer, tokenEndpoint, clientId, clientSecret, idToken } = oauth.identityProvider;
      const field = "oauth.identityProvider";
      entry.oauth.identityProvider = { issuer: text(issuer, `${field}.issuer`), clientId: text(clientId, `${field}.clientId`) };
      if (tokenEndpoint !== undefined) entry.oauth.identityProvider.tokenEndpoint = text(tokenEndpoint, `${field}.tokenEndpoint`);
      if (clientSecret !== undefined) entry.oauth.identityProvider.clientSecret = mapValue(clientSecret, `${field}.clientSecret`);
      if (idToken !== undefined) entry.oauth.identityProvider.idToken = mapValue(idToken, `${field}.idToken`);
    }
  }
  if (commandValues.length > 0) entry.commandValues = commandValues;
  return entry;
}

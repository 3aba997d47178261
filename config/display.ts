/**
 * What a configured server runs or reaches, as `/mcp status` shows it, so an imported or overridden server can be
 * checked at a glance — without its secrets: environment and header values are never shown (only their names),
 * URLs lose their user info and query, and arguments that carry a credential (`--token x`, `--api-key=x`,
 * `Authorization: …`) are hidden.
 */
import { safeUrl } from "../util/http-text.ts";
import { hideInDebugLog } from "../util/debug-log.ts";
import type { ConfigSource, LoadedConfig, ServerDefinition } from "../types.ts";

const HIDDEN = "<hidden>";
/** Names of options, headers, variables and fields whose value is a credential. */
const SECRET_NAME =
  /token|secret|passw(?:or)?d|pwd|api[-_]?key|apikey|auth|credential|cookie|private[-_]?key|access[-_]?key|(?:^|[-_])key$/i;
/** Options whose value is a whole header (`curl -H`, `mcp-remote --header`). */
const HEADER_OPTION = /^(?:-H|--header)$/;

/** The name reads as a credential's (`GITHUB_TOKEN`, `--api-key`, `Authorization`, `oauth.clientSecret`). */
export function namesSecret(name: string): boolean {
  return SECRET_NAME.test(name);
}

/** `command: node server.js --port 3 · env: API_KEY · cwd: /srv`, or `url: https://host/mcp · headers: Authorization`. */
export function describeTarget(server: ServerDefinition): string {
  const facts = server.url !== undefined ? urlFacts(server) : commandFacts(server);
  return facts.filter((fact): fact is string => fact !== undefined).join(" · ");
}

function commandFacts(server: ServerDefinition): Array<string | undefined> {
  const words = [server.command ?? "?", ...hideSecretArguments(server.args ?? [])];
  return [`command: ${words.map(quoted).join(" ")}`, names("env", server.env), server.cwd ? `cwd: ${server.cwd}` : undefined];
}

function urlFacts(server: ServerDefinition): Array<string | undefined> {
  const token = server.bearerTokenEnv
    ? `token from $${server.bearerTokenEnv}`
    : server.bearerToken !== undefined
      ? "bearer token set"
      : undefined;
  return [`url: ${displayUrl(server.url!)}`, names("headers", server.headers), token];
}

function names(label: string, values: Record<string, string> | undefined): string | undefined {
  const keys = Object.keys(values ?? {});
  return keys.length > 0 ? `${label}: ${keys.join(", ")}` : undefined;
}

export function hideSecretArguments(args: readonly string[]): string[] {
  return args.map((arg, index) => {
    const previous = index > 0 ? args[index - 1]! : "";
    const isValueOfSecretOption = previous.startsWith("-") && !previous.includes("=") && !arg.startsWith("-");
    if (isValueOfSecretOption && (SECRET_NAME.test(previous) || HEADER_OPTION.test(previous))) {
      return hideHeaderValue(arg) ?? HIDDEN;
    }
    if (looksLikeUrl(arg)) return displayUrl(arg);
    const assignment = /^([^=\s]+)=(.*)$/s.exec(arg);
    if (assignment && SECRET_NAME.test(assignment[1]!)) return `${assignment[1]}=${HIDDEN}`;
    return hideHeaderValue(arg) ?? arg;
  });
}

/**
 * The debug log hides the values of a config that may be credentials wherever they turn up (util/debug-log.ts):
 * env and header values, tokens (a token variable's value too), OAuth secrets (a workload's JWT and an ID token
 * among them, as configured: what a `!command` prints is hidden where it is read), the arguments /mcp status hides,
 * the embeddings endpoint's key.
 */
export function hideConfigSecretsInDebugLog(config: LoadedConfig, env: NodeJS.ProcessEnv = process.env): void {
  const apiKeyEnv = config.settings.search?.embeddings?.apiKeyEnv;
  hideInDebugLog([...config.servers.flatMap((server) => secretValues(server, env)), apiKeyEnv ? env[apiKeyEnv] : undefined]);
}

function secretValues(server: ServerDefinition, env: NodeJS.ProcessEnv): Array<string | undefined> {
  const args = server.args ?? [];
  const shown = hideSecretArguments(args);
  return [
    ...Object.values(server.env ?? {}),
    ...Object.values(server.headers ?? {}),
    server.bearerToken,
    server.bearerTokenEnv ? env[server.bearerTokenEnv] : undefined,
    server.oauth?.clientSecret,
    server.oauth?.privateKey,
    server.oauth?.workloadToken,
    server.oauth?.identityProvider?.clientSecret,
    server.oauth?.identityProvider?.idToken,
    ...args.filter((arg, index) => shown[index] !== arg),
  ];
}

/** `Authorization: Bearer x` → `Authorization: <hidden>`; `Bearer x` → `Bearer <hidden>`. */
function hideHeaderValue(arg: string): string | undefined {
  const header = /^([\w-]+)\s*:\s*\S/.exec(arg);
  if (header && SECRET_NAME.test(header[1]!)) return `${header[1]}: ${HIDDEN}`;
  return /^(bearer|basic)\s+\S/i.test(arg) ? `${arg.split(/\s/)[0]} ${HIDDEN}` : undefined;
}

function looksLikeUrl(arg: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(arg);
}

/** Scheme, host and path; a query (it may hold a key) is marked, not shown. */
function displayUrl(url: string): string {
  return `${safeUrl(url)}${url.includes("?") ? "?…" : ""}`;
}

function quoted(word: string): string {
  return /^[\w@%+=:,./<>~-]+$/.test(word) ? word : JSON.stringify(word);
}

/**
 * A config file as messages name it: `/home/me/.pi/agent/mcp.json (user)`, with what the kind alone does not say:
 * `…/node_modules/acme-tools/mcp.json (pi-package: npm:acme-tools)`.
 */
export function describeSource(source: ConfigSource): string {
  return `${source.path} (${source.kind}${source.label ? `: ${source.label}` : ""})`;
}

/**
 * Variable substitution in server fields: the syntaxes of Claude Code (`${VAR}`, `${VAR:-default}`), Cursor, Windsurf
 * and VS Code (`${env:VAR}`, `${workspaceFolder}`, `${userHome}`, ...) and PowerShell-style `$env:VAR`.
 * It only reads the environment and two known paths; it never runs anything (no backticks, no shell; a whole value
 * written as `!command` is config/entry.ts's to mark and connection/command-values.ts's to run).
 * Anything it cannot resolve is reported, never replaced by an empty string.
 */
import type { ConfigProblem } from "../types.ts";
import { pathModule } from "../util/paths.ts";
import { namesSecret } from "./display.ts";
import { configProblem, type ProblemLocation } from "./problems.ts";

export interface InterpolationContext {
  env: NodeJS.ProcessEnv;
  homeDir: string;
  /** The project directory: `${workspaceFolder}`. */
  cwd: string;
  platform: NodeJS.Platform;
}

export type InterpolationIssue =
  | { kind: "missing-variable"; name: string }
  /** VS Code asks the user for `${input:id}` values; only VS Code can answer them. */
  | { kind: "vscode-input"; id: string }
  | { kind: "unsupported"; expression: string };

export interface InterpolationResult {
  value: string;
  issues: InterpolationIssue[];
}

// `$${` is the escape for a literal `${`; a lone `${` has no closing brace.
const TOKEN = /\$\$\{|\$\{([^}]*)\}|\$\{|\$env:([A-Za-z_][A-Za-z0-9_]*)/g;
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const WITH_DEFAULT = /^([A-Za-z_][A-Za-z0-9_]*):-([\s\S]*)$/;
const ENV_PREFIXED = /^env:([A-Za-z_][A-Za-z0-9_]*)$/;
const VSCODE_INPUT = /^input:(.+)$/;

export function interpolate(text: string, context: InterpolationContext): InterpolationResult {
  const issues: InterpolationIssue[] = [];
  const value = text.replace(TOKEN, (match: string, braced: string | undefined, powershellName: string | undefined, offset: number) => {
    if (match === "$${") return "${";
    if (powershellName !== undefined) return variable(powershellName, match, context, issues);
    if (braced === undefined) {
      issues.push({ kind: "unsupported", expression: text.slice(offset) });
      return match;
    }
    return bracedExpression(braced, match, context, issues);
  });
  return { value, issues };
}

function bracedExpression(body: string, match: string, context: InterpolationContext, issues: InterpolationIssue[]): string {
  const predefined = predefinedVariable(body, context);
  if (predefined !== undefined) return predefined;
  if (VARIABLE_NAME.test(body)) return variable(body, match, context, issues);
  const withDefault = WITH_DEFAULT.exec(body);
  if (withDefault) return lookupEnv(context.env, withDefault[1]!, context.platform) || withDefault[2]!;
  const envPrefixed = ENV_PREFIXED.exec(body);
  if (envPrefixed) return variable(envPrefixed[1]!, match, context, issues);
  const input = VSCODE_INPUT.exec(body);
  issues.push(input ? { kind: "vscode-input", id: input[1]! } : { kind: "unsupported", expression: match });
  return match;
}

/** The VS Code / Cursor predefined variables that make sense outside an editor. */
function predefinedVariable(name: string, context: InterpolationContext): string | undefined {
  const paths = pathModule(context.platform);
  switch (name) {
    case "workspaceFolder":
      return context.cwd;
    case "workspaceFolderBasename":
      return paths.basename(context.cwd);
    case "userHome":
      return context.homeDir;
    case "pathSeparator":
    case "/":
      return paths.sep;
    default:
      return undefined;
  }
}

function variable(name: string, match: string, context: InterpolationContext, issues: InterpolationIssue[]): string {
  const value = lookupEnv(context.env, name, context.platform);
  if (value !== undefined) return value;
  issues.push({ kind: "missing-variable", name });
  return match;
}

/** Environment names are case-insensitive on Windows (as `process.env` is there). */
export function lookupEnv(env: NodeJS.ProcessEnv, name: string, platform: NodeJS.Platform): string | undefined {
  const exact = env[name];
  if (exact !== undefined || platform !== "win32") return exact;
  const upper = name.toUpperCase();
  const key = Object.keys(env).find((candidate) => candidate.toUpperCase() === upper);
  return key === undefined ? undefined : env[key];
}

const SUPPORTED_SYNTAX = "${VAR}, ${VAR:-default}, ${env:VAR}, $env:VAR, ${workspaceFolder}, ${userHome}";

/** An issue of `interpolate` as the config problem that names where it stands. */
export function interpolationProblem(issue: InterpolationIssue, where: ProblemLocation, defaultsSyntax: boolean): ConfigProblem {
  switch (issue.kind) {
    case "missing-variable": {
      // A default would put the secret itself in the file: it belongs in the environment.
      const secret = namesSecret(issue.name) || (where.field !== undefined && namesSecret(where.field));
      // Cursor, VS Code, Windsurf would not understand a default written into their own file.
      const hint = secret
        ? "it holds a secret: set it in Pi's environment, not in a config file, and start Pi again"
        : defaultsSyntax
          ? `write \${${issue.name}:-default} to give a default`
          : `set it before starting Pi, or define the server in your Pi config, where \${${issue.name}:-default} gives a default`;
      return configProblem("error", where, `environment variable ${issue.name} is not set (${hint})`);
    }
    case "vscode-input":
      return configProblem(
        "warning",
        where,
        `uses \${input:${issue.id}}, a value only VS Code can prompt for; server skipped (define it in your Pi config with \${env:VAR} instead)`,
      );
    case "unsupported":
      return configProblem(
        "error",
        where,
        `${issue.expression} is not a supported substitution (supported: ${SUPPORTED_SYNTAX}; write $\${ for a literal \${)`,
      );
  }
}

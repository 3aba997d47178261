/**
 * A registry entry made a server entry of our config: how it can run (an npm package through npx, a PyPI package
 * through uvx, a container image through `docker run -i --rm`, or a remote URL with its headers), which of its
 * inputs the user is asked for, and the entry written once they are answered.
 *
 * Secrets are never asked and never written: a required secret becomes a `${VAR}` reference the user sets in Pi's
 * environment (a secret environment variable is referenced by its own name). A required input the user is not asked
 * (no UI) is referenced the same way, unless the publisher gave a default. Optional inputs, secret or not, are left
 * out: the server's own defaults apply, and the user is told which exist. Everything the registry wrote is data: `${` and a leading `!`
 * in its values are escaped, so nothing in an entry is substituted or run but what this module put there.
 */
import type { RegistryArgument, RegistryInput, RegistryKeyValue, RegistryPackage, RegistryRemote, RegistryServer } from "./server-json.ts";

export type RuntimeKind = "npm" | "pypi" | "oci";

/** The program a kind of package runs with, and what to install when it is missing. */
export interface Runtime {
  command: string;
  packages: string;
  install: string;
}

export const RUNTIMES: Readonly<Record<RuntimeKind, Runtime>> = {
  npm: { command: "npx", packages: "npm packages", install: "Node.js with npm (https://nodejs.org/en/download)" },
  pypi: { command: "uvx", packages: "PyPI packages", install: "uv (https://docs.astral.sh/uv/getting-started/installation/)" },
  oci: { command: "docker", packages: "container images", install: "Docker (https://docs.docker.com/get-started/get-docker/)" },
};

export type InstallOption =
  | { kind: RuntimeKind; pkg: RegistryPackage; label: string }
  | { kind: "remote"; remote: RegistryRemote; label: string };

export interface UnsupportedOption {
  label: string;
  reason: string;
}

/** One value the entry needs that the publisher did not fix. */
export interface InputSlot {
  /** Unique within a plan: the key of its answer. */
  key: string;
  /** The environment variable the entry reads it from when it is not written in: `${variable}`. */
  variable: string;
  /** What it is, for a question or a list: `environment variable API_KEY`, `header X-API-Key`, `option --port`. */
  label: string;
  description?: string;
  required: boolean;
  secret: boolean;
  default?: string;
  choices?: string[];
}

export interface PlannedEntry {
  /** The server entry, in our config's shape. */
  entry: Record<string, unknown>;
  /** Variables the entry reads that must be set before the server can start: its secrets, required values not given. */
  toSet: InputSlot[];
  /** Optional inputs left out. */
  leftOut: InputSlot[];
}

export interface InstallPlan {
  option: InstallOption;
  /** Required inputs the user may give now (never a secret), in the order the entry uses them. */
  questions: InputSlot[];
  /** The entry with these answers (by `InputSlot.key`); an input without an answer is referenced or left out. */
  build(answers: ReadonlyMap<string, string>): PlannedEntry;
}

/** How the entry can run, in the document's order (packages first), and what cannot run here, with why. */
export function installOptions(server: RegistryServer): { options: InstallOption[]; unsupported: UnsupportedOption[] } {
  const options: InstallOption[] = [];
  const unsupported: UnsupportedOption[] = [];
  for (const pkg of server.packages) {
    const label = packageLabel(pkg);
    const reason = unsupportedPackage(pkg);
    if (reason) unsupported.push({ label, reason });
    else options.push({ kind: pkg.registryType as RuntimeKind, pkg, label });
  }
  for (const remote of server.remotes) {
    const label = `remote ${remote.url} (${remote.type})`;
    if (remote.type === "streamable-http" || remote.type === "sse") options.push({ kind: "remote", remote, label });
    else unsupported.push({ label, reason: `the transport "${remote.type}" is not one MCP defines (streamable-http or sse)` });
  }
  return { options, unsupported };
}

function packageLabel(pkg: RegistryPackage): string {
  return `${pkg.registryType} ${pkg.identifier}${pkg.version && pkg.registryType !== "oci" ? ` ${pkg.version}` : ""}`;
}

function unsupportedPackage(pkg: RegistryPackage): string | undefined {
  if (!Object.hasOwn(RUNTIMES, pkg.registryType)) {
    return pkg.registryType === "mcpb"
      ? "MCP bundles (.mcpb) are not supported here"
      : `${pkg.registryType} packages are not supported here (npm, pypi and oci are)`;
  }
  // Started here, then reached over HTTP: one config entry either runs a command or connects to a URL.
  if (pkg.transport !== "stdio") return `it serves ${pkg.transport} on this machine; only stdio packages are supported`;
  return undefined;
}

/** `prefix`: names the variables of headers, arguments and placeholders (`<PREFIX>_TOKEN`); the server's config name. */
export function planInstall(server: RegistryServer, option: InstallOption, prefix: string): InstallPlan {
  const render = (answers: ReadonlyMap<string, string>) => new EntryRenderer(answers, variableName("", prefix)).entry(server, option);
  const dryRun = render(new Map());
  const questions = dryRun.slots.filter((slot) => slot.required && !slot.secret);
  return {
    option,
    questions,
    build: (answers) => {
      const { entry, toSet, leftOut } = render(answers);
      return { entry, toSet: uniqueByVariable(toSet), leftOut };
    },
  };
}

function uniqueByVariable(slots: InputSlot[]): InputSlot[] {
  return slots.filter((slot, index) => slots.findIndex((other) => other.variable === slot.variable) === index);
}

/** A piece of a value: text written as it is (escaped), or a `${VAR}` reference. */
type Piece = { literal: string } | { reference: string };

/** Where a value goes: env and header values are run as commands when they start with `!`. */
type Field = "env" | "header" | "arg" | "url";

class EntryRenderer {
  readonly slots: InputSlot[] = [];
  private readonly toSet: InputSlot[] = [];
  private readonly leftOut: InputSlot[] = [];
  private readonly answers: ReadonlyMap<string, string>;
  private readonly prefix: string;

  constructor(answers: ReadonlyMap<string, string>, prefix: string) {
    this.answers = answers;
    this.prefix = prefix;
  }

  entry(server: RegistryServer, option: InstallOption): PlannedEntry & { slots: InputSlot[] } {
    const body = option.kind === "remote" ? this.remoteEntry(option.remote) : this.commandEntry(option.kind, option.pkg);
    const entry = server.description ? { ...body, description: server.description } : body;
    return { entry, toSet: this.toSet, leftOut: this.leftOut, slots: this.slots };
  }

  private commandEntry(kind: RuntimeKind, pkg: RegistryPackage): Record<string, unknown> {
    const env = this.keyValues(pkg.environmentVariables, "env");
    const runtimeArgs = this.arguments(kind === "oci" ? beyondDockerRun(pkg.runtimeArguments) : pkg.runtimeArguments, "runtime");
    const packageArgs = this.arguments(pkg.packageArguments, "package");
    const spec = escapeLiteral(packageSpec(kind, pkg));
    const args =
      kind === "npm"
        ? ["-y", ...runtimeArgs, spec, ...packageArgs]
        : kind === "pypi"
          ? [...runtimeArgs, spec, ...packageArgs]
          : // The container sees only the variables named with -e (docker takes each one's value from its own environment).
            ["run", "-i", "--rm", ...runtimeArgs, ...Object.keys(env).flatMap((name) => ["-e", name]), spec, ...packageArgs];
    return { command: RUNTIMES[kind].command, args, ...(Object.keys(env).length > 0 ? { env } : {}) };
  }

  private remoteEntry(remote: RegistryRemote): Record<string, unknown> {
    const url = this.template(remote.url, remote.variables, "url", (name) => ({
      key: `url:${name}`,
      label: `{${name}} in the URL`,
    }));
    const headers = this.keyValues(remote.headers, "header");
    return {
      type: remote.type === "sse" ? "sse" : "http",
      url: url ?? remote.url,
      ...(Object.keys(headers).length > 0 ? { headers } : {}),
    };
  }

  private keyValues(inputs: readonly RegistryKeyValue[], field: "env" | "header"): Record<string, string> {
    const values: Record<string, string> = {};
    for (const input of inputs) {
      const label = field === "env" ? `environment variable ${input.name}` : `header ${input.name}`;
      // An environment variable the server reads is referenced by its own name; a header by one of the server's.
      const variable = field === "env" ? variableName("", input.name) : variableName(this.prefix, input.name);
      const value = this.input(input, field, { key: `${field}:${input.name}`, label, variable });
      if (value !== undefined) values[input.name] = value;
    }
    return values;
  }

  private arguments(args: readonly RegistryArgument[], where: string): string[] {
    return args.flatMap((arg, index) => {
      const id = arg.type === "named" ? arg.name! : (arg.valueHint ?? `${where} argument ${index + 1}`);
      const label = arg.type === "named" ? `option ${arg.name}` : `argument ${arg.valueHint ?? index + 1}`;
      const slot = { key: `${where}:${index}`, label, variable: variableName(this.prefix, id.replace(/^-+/, "")) };
      if (arg.type === "named" && arg.format === "boolean") {
        // A switch: present when its value is true.
        const value = arg.value ?? this.answers.get(slot.key) ?? arg.default;
        return value === "true" || (value === undefined && arg.isRequired) ? [escapeLiteral(arg.name!)] : [];
      }
      const value = this.input(arg, "arg", slot);
      if (value === undefined) return [];
      return arg.type === "named" ? [escapeLiteral(arg.name!), value] : [value];
    });
  }

  /** An input's value: the publisher's (its placeholders filled), the user's, a reference, or undefined (left out). */
  private input(input: RegistryInput, field: Field, slot: Pick<InputSlot, "key" | "label" | "variable">): string | undefined {
    if (input.value !== undefined) {
      return this.template(input.value, input.variables, field, (name) => ({
        key: `${slot.key}:${name}`,
        label: `{${name}} of ${slot.label}`,
      }));
    }
    const pieces = this.leaf(input, slot);
    return pieces && joinPieces(pieces, field);
  }

  /** `{name}` placeholders filled from `variables`; a placeholder `variables` does not define stays as written (the schema's rule). */
  private template(
    text: string,
    variables: Readonly<Record<string, RegistryInput>>,
    field: Field,
    slotOf: (name: string) => Pick<InputSlot, "key" | "label">,
  ): string | undefined {
    const pieces: Piece[] = [];
    let last = 0;
    for (const match of text.matchAll(/\{([A-Za-z0-9_.-]+)\}/g)) {
      const variable = Object.hasOwn(variables, match[1]!) ? variables[match[1]!] : undefined;
      if (!variable) continue;
      pieces.push({ literal: text.slice(last, match.index) });
      const filled =
        variable.value !== undefined
          ? [{ literal: variable.value }]
          : this.leaf(variable, { ...slotOf(match[1]!), variable: variableName(this.prefix, match[1]!) });
      // An optional placeholder left out takes its whole value with it (`--port={port}` without a port).
      if (!filled) return undefined;
      pieces.push(...filled);
      last = match.index + match[0].length;
    }
    pieces.push({ literal: text.slice(last) });
    return joinPieces(pieces, field);
  }

  /** A value the user gives: their answer, the default of a required one, or a `${VAR}` reference; undefined: left out. */
  private leaf(input: RegistryInput, at: Pick<InputSlot, "key" | "label" | "variable">): Piece[] | undefined {
    const slot: InputSlot = {
      ...at,
      required: input.isRequired,
      secret: input.isSecret,
      ...(input.description ? { description: input.description } : {}),
      ...(input.default !== undefined ? { default: input.default } : {}),
      ...(input.choices ? { choices: input.choices } : {}),
    };
    this.slots.push(slot);
    const answer = this.answers.get(slot.key);
    if (!slot.required) {
      this.leftOut.push(slot);
      return undefined;
    }
    if (slot.secret) return this.reference(slot);
    if (answer !== undefined && answer !== "") return [{ literal: answer }];
    return slot.default !== undefined ? [{ literal: slot.default }] : this.reference(slot);
  }

  private reference(slot: InputSlot): Piece[] {
    this.toSet.push(slot);
    return [{ reference: `\${${slot.variable}}` }];
  }
}

/** What an image's entry always runs with: `docker run -i --rm` (stdin kept open, the container removed at its end). */
const DOCKER_RUN_FLAGS = new Set(["-i", "--interactive", "--rm"]);

/**
 * An image's runtime arguments less what the entry writes itself: some publishers list `run`, `-i` or `--rm` among
 * them, which would otherwise be written twice (`docker run -i --rm run -i …`: docker would take `run` for the image).
 */
function beyondDockerRun(args: readonly RegistryArgument[]): RegistryArgument[] {
  return args.filter((arg, index) => {
    if (arg.type === "positional") return !(arg.value === "run" && index === 0) && !DOCKER_RUN_FLAGS.has(arg.value ?? "");
    const flag = arg.name !== undefined && DOCKER_RUN_FLAGS.has(arg.name);
    return !(flag && (arg.value === undefined || arg.value === "true" || arg.format === "boolean"));
  });
}

function packageSpec(kind: RuntimeKind, pkg: RegistryPackage): string {
  if (!pkg.version) return pkg.identifier;
  if (kind === "npm") return `${pkg.identifier}@${pkg.version}`;
  if (kind === "pypi") return `${pkg.identifier}==${pkg.version}`;
  // Since 2025-12-11 an image's identifier carries its tag (or digest); older entries gave the tag as the version.
  const lastPart = pkg.identifier.slice(pkg.identifier.lastIndexOf("/") + 1);
  return lastPart.includes(":") || lastPart.includes("@") ? pkg.identifier : `${pkg.identifier}:${pkg.version}`;
}

function joinPieces(pieces: readonly Piece[], field: Field): string {
  const text = pieces.map((piece) => ("reference" in piece ? piece.reference : escapeLiteral(piece.literal))).join("");
  // A whole env or header value written as `!command` would run: a value that only starts with `!` is `!!`.
  const first = pieces.find((piece) => !("literal" in piece) || piece.literal !== "");
  return (field === "env" || field === "header") && first && "literal" in first && first.literal.startsWith("!") ? `!${text}` : text;
}

/** Text from the registry or the user, written so that our config reads it back as the same text: `${` is `$${`. */
function escapeLiteral(text: string): string {
  // A function: in a replacement string "$$" would itself be read as one "$".
  return text.replaceAll("${", () => "$${");
}

/** An environment variable name: upper case, `_` for anything else, `<PREFIX>_` in front when given. */
function variableName(prefix: string, raw: string): string {
  const word = (text: string) =>
    text
      .toUpperCase()
      .replace(/[^A-Z0-9]+/g, "_")
      .replace(/^_+|_+$/g, "");
  const name = [word(prefix), word(raw)].filter(Boolean).join("_") || "VALUE";
  return /^[0-9]/.test(name) ? `_${name}` : name;
}

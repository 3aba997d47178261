/**
 * The JavaScript evaluated inside the sandbox before a script: the script API, the same as Pi 1.x codemode's
 * (docs/codemode.md there) so one script text runs on every host: `tools.<name>(args)`, `searchTools(query,
 * { limit, namespace })`, `describeTool(name)`, `describeNamespace(name)`, `ALL_TOOLS`, `text(value)`, `console.*`,
 * and the script's return value.
 *
 * It evaluates to a function that takes the three host functions the engine worker gave the VM, keeps them in its
 * closure (the script never sees them: they are removed from the global object before the script runs) and returns
 * the function that runs the script body. Everything crossing to the host is JSON text, so no host object ever
 * enters the VM.
 */

/** Where a line number in the script's errors is counted from: the body shares line 1 with the wrapper. */
export const SCRIPT_FILE_NAME = "script.js";

/** Wraps the script as the body of an async function, on the wrapper's first line, so its line numbers stay exact. */
export function wrapScript(code: string): string {
  return `(async () => {${code}\n})`;
}

export const PRELUDE_SOURCE = String.raw`(function (hostCall, print, finish, catalogJson) {
  "use strict";
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const catalog = parse(catalogJson);

  // A value as text: strings as they are, anything else as JSON (undefined and functions by name).
  const show = (value) => {
    if (typeof value === "string") return value;
    if (value === undefined) return "undefined";
    if (typeof value === "function") return "[function]";
    if (value instanceof Error) return value.name + ": " + value.message;
    try {
      const json = stringify(value, null, 2);
      return json === undefined ? String(value) : json;
    } catch (error) {
      return String(value);
    }
  };

  async function call(kind, payload) {
    // Taken before the first await, while the script's frame is still on the stack: a failure names the script's line.
    const origin = new Error().stack;
    const reply = parse(await hostCall(kind, stringify(payload === undefined ? null : payload)));
    if (reply.ok) return reply.value;
    const error = new Error(reply.error);
    error.stack = origin;
    if (reply.tool) error.tool = reply.tool;
    throw error;
  }

  const toolFunctions = new Map();
  // Any name is a call: the host answers an unknown one with close matches. Listing it gives ALL_TOOLS' names.
  const tools = new Proxy({}, {
    get(_target, name) {
      // "then": awaiting the object itself must not call a tool named "then".
      if (typeof name !== "string" || name === "then") return undefined;
      let fn = toolFunctions.get(name);
      if (!fn) {
        fn = (args) => call("tool", { name, args: args === undefined ? {} : args });
        toolFunctions.set(name, fn);
      }
      return fn;
    },
    has: (_target, name) => typeof name === "string" && catalog.some((tool) => tool.name === name),
    set: () => false,
    defineProperty: () => false,
    deleteProperty: () => false,
  });

  const globals = {
    tools,
    ALL_TOOLS: Object.freeze(catalog.map((tool) => Object.freeze({ name: tool.name, description: tool.description }))),
    searchTools: (query, options) => call("searchTools", { query: String(query), options: options === undefined ? {} : options }),
    describeTool: (name) => call("describeTool", { name: String(name) }),
    describeNamespace: (name) => call("describeNamespace", { name: String(name) }),
    text: (value) => print("text", show(value)),
    console: Object.freeze(
      Object.fromEntries(["log", "info", "warn", "error", "debug"].map((level) => [level, (...args) => print("console", args.map(show).join(" "))])),
    ),
  };
  for (const [name, value] of Object.entries(globals)) {
    Object.defineProperty(globalThis, name, { value, writable: false, enumerable: false, configurable: false });
  }

  // Runs the compiled script body; the host gets its return value as text (none for undefined), or its error.
  return (body) =>
    body().then(
      (value) => finish(true, value === undefined ? "" : show(value), value !== undefined),
      (error) =>
        finish(
          false,
          stringify({
            name: error instanceof Error ? error.name : "Error",
            message: error instanceof Error ? String(error.message) : show(error),
            stack: error instanceof Error && typeof error.stack === "string" ? error.stack : "",
            tool: error && typeof error.tool === "string" ? error.tool : undefined,
          }),
          false,
        ),
    );
})`;

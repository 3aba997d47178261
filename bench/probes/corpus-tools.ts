/**
 * Probe extension for attributing startup time: Pi alone registering the corpus's 1,052 tools (real names and
 * schemas) and leaving them inactive, without the adapter. `BENCH_PROBE_TOOLS=session_start` registers them in
 * that event, as the adapter does; `factory` registers them while Pi loads extensions and only narrows the active
 * set at session_start (Pi offers no active-tool calls before then).
 */
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import type { TSchema } from "typebox";
import { corpusServers } from "../corpus.ts";

export default function corpusTools(pi: ExtensionAPI): void {
  const names = new Set<string>();
  const register = () => {
    for (const { server, tools } of corpusServers()) {
      for (const tool of tools) {
        const name = `${server.replaceAll("-", "_")}__${tool.name}`.slice(0, 64);
        names.add(name);
        pi.registerTool({
          name,
          label: tool.name,
          description: tool.description ?? tool.name,
          parameters: (tool.inputSchema ?? { type: "object" }) as TSchema,
          execute: async () => ({ content: [{ type: "text", text: "not called" }], details: undefined }),
        });
      }
    }
  };
  const deactivate = () => pi.setActiveTools(pi.getActiveTools().filter((name) => !names.has(name)));
  if (process.env.BENCH_PROBE_TOOLS === "factory") {
    register();
    pi.on("session_start", deactivate);
  } else {
    pi.on("session_start", () => {
      register();
      deactivate();
    });
  }
}

/**
 * The Pi events a session's skills follow, on every host (0.73, 0.87, 1.x): `resources_discover` (the folders Pi
 * lists), `tool_call` (a file fetched before Pi's tool reads it, or the call refused), `tool_result` (whose text a
 * read returned), `input` (`/skill:<name>`, which Pi expands from the file itself) and `before_agent_start` (what Pi
 * loaded: a user's skill of the same name wins). No handler waits for a server unless a file is needed.
 */
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import type { SkillSession } from "./session.ts";

/** `session`: the running session's skills, or undefined between sessions (then every handler does nothing). */
export function registerSkillEvents(pi: ExtensionAPI, session: () => SkillSession | undefined): void {
  pi.on("resources_discover", async () => {
    const skills = session();
    return skills ? { skillPaths: await skills.discover() } : undefined;
  });
  pi.on("tool_call", async (event, ctx) => {
    const outcome = await session()?.beforeToolCall(event.toolName, event.input, ctx.cwd, ctx.signal);
    return outcome && !outcome.ok ? { block: true, reason: outcome.reason } : undefined;
  });
  pi.on("tool_result", (event, ctx) => {
    const note = event.isError ? undefined : session()?.provenance(event.toolName, event.input, ctx.cwd);
    return note ? { content: [{ type: "text", text: note }, ...event.content] } : undefined;
  });
  pi.on("input", async (event) =>
    (await session()?.beforeSkillCommand(event.text)) === false ? { action: "handled" } : { action: "continue" },
  );
  pi.on("before_agent_start", (event) => {
    session()?.noticeLoaded(event.systemPromptOptions?.skills ?? []);
  });
}

/**
 * Probe extension for the skills bench's baseline: the skills folder of the agent dir (`<agentDir>/skills`, where a
 * user installs skills), given to Pi as Pi finds it itself. The bench's sessions run with Pi's own discovery off (the
 * test hosts' `noSkills`), which leaves skills an extension offers, so this offers the folder Pi would have read.
 */
import { join } from "node:path";
import { type ExtensionAPI, getAgentDir } from "@mariozechner/pi-coding-agent";

export default function localSkills(pi: ExtensionAPI): void {
  pi.on("resources_discover", () => ({ skillPaths: [join(getAgentDir(), "skills")] }));
}

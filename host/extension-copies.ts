/**
 * One copy of the adapter per Pi session. Two copies loaded together (a checkout run with `pi -e` or `npm start`
 * while another is installed as a drop-in or with `pi install`) would register the same tools, flag and commands,
 * and Pi refuses to start on the conflicts ("Tool "ToolSearch" conflicts with …", then one line per cached tool).
 *
 * The copies are separate module instances that share nothing but what Pi gives every extension it loads together:
 * the event bus behind `pi.events` (the same bus for all of them, on both hosts). The copy Pi loads first claims
 * it; a later copy asks on the bus who owns it before registering anything, and steps aside when another copy
 * answers. A claim lapses when its session shuts down, so after a `/reload` the first copy loaded claims again.
 */
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

const CHANNEL = "pi-mcp-adapter:which-copy";

/** Sent on the bus; the owning copy fills it in (listeners run synchronously within `emit`). */
interface CopyQuestion {
  owner?: string;
}

export interface CopyClaim {
  /** Where the copy that owns this session was loaded from, when it is not this one. */
  otherCopy?: string;
  /** The session of the owning copy ended: it answers no more. */
  release(): void;
}

/** `location`: this copy's directory. Asks first, then claims; never throws (a host without a bus: no check). */
export function claimSession(pi: ExtensionAPI, location: string): CopyClaim {
  try {
    const question: CopyQuestion = {};
    pi.events.emit(CHANNEL, question);
    // The same location answering is this copy loaded again (a session that did not shut down first).
    if (question.owner !== undefined && question.owner !== location) return { otherCopy: question.owner, release: () => {} };
    let owning = true;
    pi.events.on(CHANNEL, (data) => {
      const asked = data as CopyQuestion;
      if (owning && asked.owner === undefined) asked.owner = location;
    });
    return { release: () => (owning = false) };
  } catch {
    return { release: () => {} };
  }
}

export function secondCopyWarning(otherCopy: string, location: string): string {
  return (
    `pi-mcp-adapter is loaded twice: the copy at ${otherCopy} is in use, the copy at ${location} does nothing. ` +
    `Remove one of them from Pi's extensions (pi list shows installed packages; drop-ins are in ~/.pi/agent/extensions/).`
  );
}

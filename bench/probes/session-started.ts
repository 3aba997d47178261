/**
 * Probe extension, loaded after the extension under measurement: its `session_start` handler runs once every
 * earlier extension's handler has finished.
 */
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { probeClock } from "./clock.ts";

export default function sessionStarted(pi: ExtensionAPI): void {
  pi.on("session_start", () => {
    probeClock().sessionStartedAt = performance.now();
  });
}

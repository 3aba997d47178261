/** Probe extension, loaded before the extension under measurement: notes when extension loading reached it. */
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { probeClock } from "./clock.ts";

export default function loadStarted(_pi: ExtensionAPI): void {
  probeClock().loadStartedAt = performance.now();
}

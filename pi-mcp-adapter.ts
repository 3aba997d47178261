import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

export default function piMcpAdapter(_pi: ExtensionAPI): void {}

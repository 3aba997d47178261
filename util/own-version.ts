/**
 * Who the adapter says it is to the servers (`clientInfo`) and to tools' views (`hostInfo`): its name and the version
 * in its package.json.
 */
import { readFileSync } from "node:fs";

export const ADAPTER_INFO = { name: "pi-mcp-adapter", version: readOwnVersion() };

function readOwnVersion(): string {
  try {
    return (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }).version;
  } catch {
    return "0.0.0";
  }
}

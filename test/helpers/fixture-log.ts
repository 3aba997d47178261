/** The JSON-lines log our fixture servers write (`start`, `grandchild`, `cancelled`, calls...), read back by tests. */
import { readFileSync } from "node:fs";

export interface FixtureEvent {
  event: string;
  pid?: number;
  name?: string;
  requestId?: number | string;
}

/** Every event logged so far; none while the log does not exist yet. */
export function readEvents(logFile: string): FixtureEvent[] {
  let text: string;
  try {
    text = readFileSync(logFile, "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as FixtureEvent);
}

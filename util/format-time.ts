/**
 * Durations as people read them in messages and `/mcp status`. One module so every message rounds the same way:
 * elapsed times to a tenth of a second, waits still to come up to the next whole second (never "0 s" too early).
 */

/** An elapsed or configured time: "2.5 s". */
export function formatSeconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}

/** A configured limit: whole minutes as "5 min", anything else in seconds. */
export function formatDuration(ms: number): string {
  return ms >= 60_000 && ms % 60_000 === 0 ? `${ms / 60_000} min` : formatSeconds(ms);
}

/** A wait still to come, rounded up: "next attempt in 3 s". */
export function formatSecondsLeft(ms: number): string {
  return `${Math.ceil(ms / 1000)} s`;
}

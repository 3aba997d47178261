/**
 * What a server says about itself (MCP logging: `notifications/message`), kept for the user: the messages at the
 * server's `logLevel` and up, the last MAX_ENTRIES of them, each cut to MAX_TEXT_CHARS. The server is asked for that
 * level (connection/sdk-session.ts: `logging/setLevel` in the 2025 era, the request's `_meta` in the 2026 one), and a
 * server that sends less severe ones anyway has them dropped here.
 *
 * One per server for the whole Pi session, across its reconnects (the manager keeps it): what a server said before it
 * crashed is what the user wants to read after.
 */
import { LOG_LEVELS, type LogLevel, type LogLevelSetting } from "../types.ts";
import { asText, truncate } from "../util/text.ts";

/** Warnings and up: what a user wants to know of a server that works, without its chatter. */
const DEFAULT_LOG_LEVEL: LogLevel = "warning";
/** Messages kept per server: enough to see what led up to a failure, little enough to show. */
export const MAX_LOG_ENTRIES = 100;
/** A message is data of any shape and size; past this it is cut (a log line, not a result). */
export const MAX_LOG_TEXT_CHARS = 1_000;
/** From this severity on, a message is worth interrupting the user for (once per server, see `ServerLog.add`). */
const SEVERE: LogLevel = "error";

export interface ServerLogEntry {
  /** Epoch ms, when it arrived. */
  at: number;
  level: LogLevel;
  /** The server's name for the part of it that logged, if it gave one. */
  logger?: string;
  /** The message's data as text: a string as it is, anything else as JSON; cut to MAX_LOG_TEXT_CHARS. */
  text: string;
}

/** A server's log message as the protocol carries it (`notifications/message` params). */
export interface LogMessage {
  level: string;
  logger?: string;
  data?: unknown;
}

/** The level a server is asked for: its `logLevel`, or the default. */
export function logLevelOf(setting: LogLevelSetting | undefined): LogLevelSetting {
  return setting ?? DEFAULT_LOG_LEVEL;
}

/** Whether `level` is `threshold` or more severe; nothing passes `off`, and a level the protocol does not name never does. */
export function atLeast(level: string, threshold: LogLevelSetting): boolean {
  if (threshold === "off") return false;
  const severity = LOG_LEVELS.indexOf(level as LogLevel);
  return severity >= 0 && severity >= LOG_LEVELS.indexOf(threshold);
}

export class ServerLog {
  private readonly kept: ServerLogEntry[] = [];
  private received = 0;
  private severeSeen = false;

  /**
   * Keeps the message if it is at `threshold` or up. Returns what was kept, and whether it is the first message of
   * this log at `error` or worse (the one the user is told of; later ones are only kept).
   */
  add(message: LogMessage, threshold: LogLevelSetting, now = Date.now()): { entry: ServerLogEntry; firstSevere: boolean } | undefined {
    if (!atLeast(message.level, threshold)) return undefined;
    const entry: ServerLogEntry = { at: now, level: message.level as LogLevel, text: logText(message.data) };
    if (typeof message.logger === "string" && message.logger !== "") entry.logger = message.logger.slice(0, 100);
    this.kept.push(entry);
    if (this.kept.length > MAX_LOG_ENTRIES) this.kept.shift();
    this.received++;
    const firstSevere = !this.severeSeen && atLeast(entry.level, SEVERE);
    if (firstSevere) this.severeSeen = true;
    return { entry, firstSevere };
  }

  /** The kept messages, oldest first. */
  entries(): readonly ServerLogEntry[] {
    return this.kept;
  }

  /** Every message kept since the session began, those no longer held included. */
  get count(): number {
    return this.received;
  }
}

/** A message's data as one readable text, cut to MAX_LOG_TEXT_CHARS. */
function logText(data: unknown): string {
  return truncate(asText(data), MAX_LOG_TEXT_CHARS);
}

/** `12:03:04 error [db]: disk full`, on one line. */
export function formatLogEntry(entry: ServerLogEntry): string {
  const time = new Date(entry.at).toTimeString().slice(0, 8);
  return `${time} ${entry.level}${entry.logger ? ` [${entry.logger}]` : ""}: ${entry.text.replace(/\s*\n\s*/g, " ⏎ ")}`;
}

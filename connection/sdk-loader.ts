/**
 * The SDK half of the connection code (connection/sdk-session.ts), loaded on first use and shared by connects and sign-ins:
 * the MCP SDK is most of the extension's load time, and with lazy servers nothing connects at startup. Only this
 * module names connection/sdk-session.ts, so the manager and the SDK half never import each other.
 */
import { lazyLoad } from "../util/lazy-load.ts";

export type ConnectionCode = typeof import("./sdk-session.ts");

/** Loaded by the first caller and shared by the rest; a failed load is not kept: the next call tries again. */
export const loadConnectionCode: () => Promise<ConnectionCode> = lazyLoad(() => import("./sdk-session.ts"));

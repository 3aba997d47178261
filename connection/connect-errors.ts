/** Why a connect did not happen that is not the server's failure: the caller's own close or shutdown. */

/** A connect attempt ended by `close()` (a reconnect, shutdown): not the server's failure. */
export class ConnectCancelledError extends Error {
  constructor(serverName: string, message = `MCP server "${serverName}" was closed while it was still connecting`) {
    super(message);
    this.name = "ConnectCancelledError";
  }
}

/** A connect asked for after `shutdown()`: nothing is started, and the server is not to blame. */
export class ShuttingDownError extends ConnectCancelledError {
  constructor(serverName: string) {
    super(serverName, `MCP server "${serverName}" was not started: the session is shutting down`);
    this.name = "ShuttingDownError";
  }
}

/**
 * The JSON-RPC error codes of the MCP SDK (its `ErrorCode`) that change what the adapter does or tells the model.
 * Copied, not imported: the SDK is loaded only once a server connects, and the modules that read these codes are
 * loaded with the extension. test/mcp-error-codes.test.ts checks each one against the SDK's.
 */
export const McpErrorCode = {
  ConnectionClosed: -32000,
  RequestTimeout: -32001,
  InvalidParams: -32602,
  UrlElicitationRequired: -32042,
} as const;

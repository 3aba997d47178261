/**
 * The error codes of the MCP SDK that change what the adapter does or tells the model: JSON-RPC codes a server
 * answers with (the SDK's `ProtocolErrorCode`) and the SDK's own, for what happened on our side (`SdkErrorCode`).
 * Copied, not imported: the SDK is loaded only once a server connects, and the modules that read these codes are
 * loaded with the extension. test/mcp-error-codes.test.ts checks each one against the SDK's.
 */
export const McpErrorCode = {
  InvalidParams: -32602,
  UrlElicitationRequired: -32042,
} as const;

export const SdkErrorCode = {
  ConnectionClosed: "CONNECTION_CLOSED",
  RequestTimeout: "REQUEST_TIMEOUT",
} as const;

import { ProtocolErrorCode, SdkErrorCode as SdkCodes } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { McpErrorCode, SdkErrorCode } from "../util/mcp-error-codes.ts";

describe("the MCP SDK's error codes, as copied", () => {
  it("holds the SDK's own value for every JSON-RPC code it names", () => {
    for (const [name, code] of Object.entries(McpErrorCode))
      expect(ProtocolErrorCode[name as keyof typeof ProtocolErrorCode], name).toBe(code);
  });

  it("holds the SDK's own value for every SDK code it names", () => {
    for (const [name, code] of Object.entries(SdkErrorCode)) expect(SdkCodes[name as keyof typeof SdkCodes], name).toBe(code);
  });
});

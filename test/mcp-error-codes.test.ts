import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { McpErrorCode } from "../util/mcp-error-codes.ts";

describe("McpErrorCode", () => {
  it("holds the MCP SDK's own value for every code it names", () => {
    for (const [name, code] of Object.entries(McpErrorCode)) expect(ErrorCode[name as keyof typeof ErrorCode], name).toBe(code);
  });
});

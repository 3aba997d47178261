import { describe, expect, it } from "vitest";
import { allocateToolNames, formatToolName, getServerPrefix, isValidToolName } from "../types.ts";

describe("tool names", () => {
  it("prefixes with the server name and the __ separator", () => {
    expect(getServerPrefix("chrome-devtools-mcp", "short")).toBe("chrome_devtools");
    expect(formatToolName("take_screenshot", "chrome-devtools", "server")).toBe("chrome_devtools__take_screenshot");
  });
  it("always produces valid names", () => {
    const name = formatToolName("x".repeat(100), "srv.with/odd", "server");
    expect(isValidToolName(name)).toBe(true);
    const { names } = allocateToolNames([{ serverName: "a", originalName: "read" }], "none");
    expect([...names.values()][0]).not.toBe("read");
  });
});

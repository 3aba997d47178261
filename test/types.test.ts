import { describe, expect, it } from "vitest";
import { allocateToolNames, BUILTIN_TOOL_NAMES, formatToolName, getServerPrefix, shortHash, toolKey } from "../tool-names.ts";
import { TOOL_SEARCH_NAME } from "../types.ts";
import { isValidToolName } from "./helpers/tool-names.ts";

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

describe("tool names: edge cases", () => {
  const HASHED = /^[A-Za-z0-9_-]+_[0-9a-f]{8}$/;

  it("keeps the base letter of accented names and replaces other characters", () => {
    expect(formatToolName("créer_fichier", "données", "server")).toBe("donnees__creer_fichier");
    expect(formatToolName("files.read/v2", "my.server", "server")).toBe("my_server__files_read_v2");
    expect(formatToolName("ﬁnd", "ｗｉｄｅ", "server")).toBe("wide__find");
    expect(formatToolName("get-issue", "jira", "none")).toBe("get-issue");
  });

  it("names a tool whose name has no usable character by a hash of it", () => {
    const fire = formatToolName("🔥", "srv", "server");
    const water = formatToolName("💧", "srv", "server");
    expect(fire).toMatch(/^srv__tool_[0-9a-f]{8}$/);
    expect(water).toMatch(/^srv__tool_[0-9a-f]{8}$/);
    expect(fire).not.toBe(water);
  });

  it("shortens names over 64 characters with a stable hash that tells similar names apart", () => {
    const a = formatToolName(`${"x".repeat(80)}_alpha`, "server-with-a-long-name", "server");
    const b = formatToolName(`${"x".repeat(80)}_beta`, "server-with-a-long-name", "server");
    expect(a).toHaveLength(64);
    expect(b).toHaveLength(64);
    expect(a).toMatch(/^server_with_a_long_name__x+_[0-9a-f]{8}$/);
    expect(a).not.toBe(b);
    expect(formatToolName(`${"x".repeat(80)}_alpha`, "server-with-a-long-name", "server")).toBe(a);
    const longServer = formatToolName("t", "s".repeat(100), "server");
    expect(longServer).toHaveLength(64);
    expect(isValidToolName(longServer)).toBe(true);
    expect(formatToolName("y".repeat(64), "", "none")).toBe("y".repeat(64));
  });

  it("short mode strips an mcp prefix or suffix, never the whole name", () => {
    expect(getServerPrefix("github-mcp", "short")).toBe("github");
    expect(getServerPrefix("mcp_server_fetch", "short")).toBe("server_fetch");
    expect(getServerPrefix("MCP-Jira", "short")).toBe("Jira");
    expect(getServerPrefix("mcp", "short")).toBe("mcp");
    expect(getServerPrefix("github-mcp", "none")).toBe("");
  });

  it("settles duplicates across servers by (server, tool) order, renaming the loser with its own hash", () => {
    const { names, conflicts } = allocateToolNames(
      [
        { serverName: "a_b", originalName: "search" },
        { serverName: "a.b", originalName: "search" },
      ],
      "server",
    );
    expect(names.get(toolKey("a.b", "search"))).toBe("a_b__search");
    const loser = names.get(toolKey("a_b", "search"))!;
    expect(loser).toMatch(/^a_b__search_[0-9a-f]{8}$/);
    expect(conflicts).toEqual([
      {
        serverName: "a_b",
        originalName: "search",
        wanted: "a_b__search",
        assigned: loser,
        reason: "duplicate",
        keptBy: { serverName: "a.b", originalName: "search" },
      },
    ]);
  });

  it("never takes a builtin or ToolSearch name", () => {
    const requests = [...BUILTIN_TOOL_NAMES, TOOL_SEARCH_NAME].map((originalName) => ({ serverName: "fs", originalName }));
    const { names, conflicts } = allocateToolNames(requests, "none");
    for (const name of names.values()) {
      expect(BUILTIN_TOOL_NAMES.has(name) || name === TOOL_SEARCH_NAME).toBe(false);
      expect(name).toMatch(HASHED);
    }
    expect(conflicts.map((conflict) => `${conflict.originalName}:${conflict.reason}`).sort()).toEqual(
      [...[...BUILTIN_TOOL_NAMES].map((name) => `${name}:builtin`), `${TOOL_SEARCH_NAME}:reserved`].sort(),
    );
  });

  it("gives unique valid names, the same whatever the order of the requests", () => {
    const requests = [
      { serverName: "github", originalName: "search" },
      { serverName: "git-hub", originalName: "search" },
      { serverName: "git.hub", originalName: "search" },
      { serverName: "github", originalName: "search!" },
      { serverName: "github", originalName: "search?" },
      { serverName: "x", originalName: "read" },
      { serverName: "long", originalName: "a".repeat(100) },
      { serverName: "long", originalName: `${"a".repeat(100)}b` },
      { serverName: "日本", originalName: "検索" },
      { serverName: "中文", originalName: "搜索" },
    ];
    for (const mode of ["server", "short", "none"] as const) {
      const forward = allocateToolNames(requests, mode);
      const backward = allocateToolNames([...requests].reverse(), mode);
      const rotated = allocateToolNames([...requests.slice(4), ...requests.slice(0, 4)], mode);
      expect([...backward.names].sort()).toEqual([...forward.names].sort());
      expect([...rotated.names].sort()).toEqual([...forward.names].sort());
      expect(backward.conflicts).toEqual(forward.conflicts);
      const assigned = [...forward.names.values()];
      expect(new Set(assigned).size).toBe(requests.length);
      for (const name of assigned) expect(isValidToolName(name)).toBe(true);
    }
  });

  it("never renames a tool onto a name another tool asks for naturally", () => {
    const renamedRead = `read_${shortHash(toolKey("a", "read"))}`;
    for (const other of ["0", "b"]) {
      // Server "0" is settled before "a" (it takes the name first); server "b" after (it must step aside).
      const requests = [
        { serverName: "a", originalName: "read" },
        { serverName: other, originalName: renamedRead },
      ];
      const { names } = allocateToolNames(requests, "none");
      const assigned = [...names.values()];
      expect(new Set(assigned).size).toBe(2);
      expect(assigned).toContain(renamedRead);
      expect(names.get(toolKey(other === "0" ? other : "a", other === "0" ? renamedRead : "read"))).toBe(renamedRead);
    }
  });
});

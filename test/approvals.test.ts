import { describe, expect, it } from "vitest";
import { type ApprovalContext, type ApprovalGrant, grantsInSession, needsApproval, SessionApprovals } from "../calls/approvals.ts";
import type { ApprovalRule, McpSettings, ServerDefinition, ToolMetadata } from "../types.ts";

const tool = (serverName: string, originalName: string, name = `${serverName}__${originalName}`): ToolMetadata => ({
  name,
  serverName,
  originalName,
  description: "",
  inputSchema: { type: "object", properties: {} },
});

function context(servers: Record<string, ApprovalRule | undefined>, settings: McpSettings = {}): ApprovalContext {
  const definitions = Object.entries(servers).map(
    ([name, approveTools]): ServerDefinition => ({
      name,
      command: "x",
      source: { kind: "user", path: "/u/mcp.json" },
      ...(approveTools === undefined ? {} : { approveTools }),
    }),
  );
  return {
    servers: new Map(definitions.map((server) => [server.name, server])),
    config: { settings },
    approvals: new SessionApprovals([], () => {}),
  };
}

const asking = (approvals: ApprovalContext, tools: ToolMetadata[]) =>
  tools.filter((item) => needsApproval(approvals, item)).map((item) => item.name);

describe("needsApproval", () => {
  const github = ["delete_repo", "merge_pull_request", "get_file", "auto_merge_check"].map((name) => tool("github", name));

  it("matches patterns over the MCP name, the Pi name and upstream's <server>_<tool> name", () => {
    expect(asking(context({ github: ["delete_*"] }), github)).toEqual(["github__delete_repo"]);
    expect(asking(context({ github: ["github__get_file"] }), github)).toEqual(["github__get_file"]);
    expect(asking(context({ github: undefined }, { approveTools: ["github_delete_*", "github_*merge*"] }), github)).toEqual([
      "github__delete_repo",
      "github__merge_pull_request",
      "github__auto_merge_check",
    ]);
  });

  it("takes the server's own rule over the setting's: true asks for all, false for none; unset asks for none", () => {
    const docs = tool("docs", "search");
    const settings = { approveTools: true };
    expect(asking(context({ github: ["delete_*"], docs: false }, settings), [...github, docs])).toEqual(["github__delete_repo"]);
    expect(asking(context({ github: undefined, docs: undefined }, settings), [github[0]!, docs])).toEqual([
      "github__delete_repo",
      "docs__search",
    ]);
    expect(asking(context({ github: undefined }), github)).toEqual([]);
  });

  it("does not ask again for a tool or server granted for the session, and records new grants", () => {
    const recorded: ApprovalGrant[] = [];
    const session = new SessionApprovals([{ server: "github", tool: "delete_repo" }], (grant) => recorded.push(grant));
    const withSession = { ...context({ github: true, docs: true }), approvals: session };
    expect(asking(withSession, [...github, tool("docs", "search")])).toEqual([
      "github__merge_pull_request",
      "github__get_file",
      "github__auto_merge_check",
      "docs__search",
    ]);
    session.grant({ server: "docs" });
    expect(asking(withSession, [tool("docs", "search"), tool("docs", "fetch")])).toEqual([]);
    expect(recorded).toEqual([{ server: "docs" }]);
  });
});

describe("grantsInSession", () => {
  it("reads only well-formed approval entries", () => {
    const entries = [
      { type: "custom", customType: "mcp-approval", data: { server: "a", tool: "delete" } },
      { type: "custom", customType: "mcp-approval", data: { server: "b" } },
      { type: "custom", customType: "mcp-approval", data: { server: 1 } },
      { type: "custom", customType: "mcp-approval", data: { server: "c", tool: 2 } },
      { type: "custom", customType: "other", data: { server: "d" } },
      { type: "message", customType: "mcp-approval", data: { server: "e" } },
      null,
    ];
    expect(grantsInSession(entries)).toEqual([{ server: "a", tool: "delete" }, { server: "b" }]);
  });
});

/** What /mcp status shows of a server's command or URL: enough to check it, no secret. */
import { describe, expect, it } from "vitest";
import { describeTarget, hideSecretArguments } from "../config/display.ts";
import type { ServerDefinition } from "../types.ts";

const source = { kind: "user", path: "/home/ada/.pi/agent/mcp.json" } as const;
const server = (fields: Partial<ServerDefinition>): ServerDefinition => ({ name: "s", source, ...fields });

describe("describeTarget", () => {
  it("a command: its words (quoted when needed), the names of its env variables, its cwd; never an env value", () => {
    const shown = describeTarget(
      server({
        command: "node",
        args: ["/srv/my server.js", "--port", "3000"],
        env: { GITHUB_TOKEN: "ghp_secret", DEBUG: "1" },
        cwd: "/srv",
      }),
    );
    expect(shown).toBe('command: node "/srv/my server.js" --port 3000 · env: GITHUB_TOKEN, DEBUG · cwd: /srv');
    expect(shown).not.toContain("ghp_secret");
  });

  it("a URL: no user info, no query, header names only, where the bearer token comes from", () => {
    expect(
      describeTarget(
        server({ url: "https://ada:pw@api.example.com/mcp?key=abc", headers: { Authorization: "Bearer xyz", "X-Team": "core" } }),
      ),
    ).toBe("url: https://api.example.com/mcp?… · headers: Authorization, X-Team");
    expect(describeTarget(server({ url: "https://api.example.com/mcp", bearerTokenEnv: "API_TOKEN" }))).toBe(
      "url: https://api.example.com/mcp · token from $API_TOKEN",
    );
    expect(describeTarget(server({ url: "https://api.example.com/mcp", bearerToken: "xyz" }))).toBe(
      "url: https://api.example.com/mcp · bearer token set",
    );
  });
});

describe("hideSecretArguments", () => {
  it("hides the values of credential options, credential headers and URLs' secrets; keeps everything else", () => {
    expect(
      hideSecretArguments([
        "-y",
        "mcp-remote",
        "https://user:pw@mcp.example.com/sse?token=abc",
        "--header",
        "Authorization: Bearer abc",
        "--api-key",
        "sk-123",
        "--token=abc",
        "API_KEY=sk-456",
        "--verbose",
        "-H",
        "X-Trace: on",
        "--auth",
        "--port",
        "3000",
        "Bearer abc",
      ]),
    ).toEqual([
      "-y",
      "mcp-remote",
      "https://mcp.example.com/sse?…",
      "--header",
      "Authorization: <hidden>",
      "--api-key",
      "<hidden>",
      "--token=<hidden>",
      "API_KEY=<hidden>",
      "--verbose",
      "-H",
      "<hidden>",
      "--auth",
      "--port",
      "3000",
      "Bearer <hidden>",
    ]);
  });
});

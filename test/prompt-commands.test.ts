/**
 * Prompt commands without Pi: their names (as tool names, `mcp__` prefix), reading their arguments, and how a prompt's
 * messages become the user's message. End to end: prompts.e2e.test.ts.
 */
import { describe, expect, it } from "vitest";
import { transformPromptMessages } from "../calls/content.ts";
import { readArguments } from "../calls/command-arguments.ts";
import { promptCommands } from "../calls/prompt-commands.ts";
import { expandTemplate, templateParameters } from "../tools/resource-tools.ts";
import type { ServerInventoryEntry } from "../tool-view.ts";
import type { McpPrompt } from "../types.ts";

const greet: McpPrompt = { name: "greet", arguments: [{ name: "name", required: true }, { name: "tone" }] };

function inventory(server: string, prompts: McpPrompt[]): [string, ServerInventoryEntry] {
  const definition = { name: server, command: "x", source: { kind: "user" as const, path: "/mcp.json" } };
  return [server, { definition, tools: [], resources: [], prompts, origin: "cache", listedAt: 0 }];
}

describe("prompt command names", () => {
  it("are mcp__<server>__<prompt>, provider-safe, a clash settled with a hash; servers without known prompts give none", () => {
    const view = {
      inventories: new Map([
        inventory("my.server", [{ name: "say hi/now" }]),
        inventory("my_server", [{ name: "say_hi_now" }]),
        inventory("fx", [greet]),
        ["old", { ...inventory("old", [])[1], prompts: undefined }] as [string, ServerInventoryEntry],
      ]),
    };
    const names = [...promptCommands(view)].map(([name, target]) => `${name} → ${target.serverName}/${target.prompt.name}`);
    expect(names).toHaveLength(3);
    expect(names).toContain("mcp__fx__greet → fx/greet");
    expect(names).toContain("mcp__my_server__say_hi_now → my.server/say hi/now");
    expect(names.find((name) => name.endsWith("my_server/say_hi_now"))).toMatch(/^mcp__my_server__say_hi_now_[0-9a-f]{8} → /);
  });
});

describe("readArguments", () => {
  it.each([
    ["Bob", { name: "Bob" }],
    ["Bob Smith", { name: "Bob", tone: "Smith" }],
    ["Bob warm and kind", { name: "Bob", tone: "warm and kind" }],
    ['"Bob Smith" kind', { name: "Bob Smith", tone: "kind" }],
    ["tone=dry Bob", { name: "Bob", tone: "dry" }],
    ['name=\'Ann Lee\' tone="very \\"dry\\""', { name: "Ann Lee", tone: 'very "dry"' }],
    ["x=1", { name: "x=1" }],
    ["", {}],
  ])("%s", (text, values) => {
    expect(readArguments(greet.arguments ?? [], text)).toEqual({ values });
  });

  it("reports what it cannot read", () => {
    expect(readArguments(greet.arguments ?? [], 'name="Bob')).toEqual({ error: 'a " quote is not closed.' });
    expect(readArguments([], "extra")).toEqual({ error: "it takes no arguments." });
    expect(readArguments(greet.arguments ?? [], "name=a tone=b c")).toEqual({ error: 'too many arguments ("c").' });
  });
});

describe("a prompt's messages as the user's message", () => {
  it("keeps text and images, embeds resources with their URI, and labels roles when the assistant speaks too", () => {
    const image = { type: "image", data: "aGk=", mimeType: "image/png" };
    expect(
      transformPromptMessages({
        messages: [
          { role: "user", content: { type: "text", text: "hi" } },
          { role: "user", content: image },
        ],
      }).content,
    ).toEqual([{ type: "text", text: "hi" }, image]);
    const mixed = transformPromptMessages({
      messages: [
        { role: "user", content: { type: "resource", resource: { uri: "note://1", text: "milk" } } },
        { role: "assistant", content: { type: "text", text: "ok" } },
      ],
    });
    expect(mixed.content).toEqual([
      { type: "text", text: "[user]" },
      { type: "text", text: "[Resource: note://1]\nmilk" },
      { type: "text", text: "[assistant]" },
      { type: "text", text: "ok" },
    ]);
    expect(transformPromptMessages({ messages: "nope" }).content).toEqual([{ type: "text", text: "(the prompt has no messages)" }]);
  });
});

describe("resource templates as tools", () => {
  it("take the template's variables as string parameters, query variables optional, and read the expanded URI", async () => {
    const template = { uriTemplate: "file:///{+path}{?rev,mode}{#part}", name: "file" };
    const schema = templateParameters(template) as { properties: Record<string, unknown>; required: string[] };
    expect(Object.keys(schema.properties)).toEqual(["path", "rev", "mode", "part"]);
    expect(schema.required).toEqual(["path"]);
    expect(await expandTemplate(template.uriTemplate, { path: "a/b c", rev: 3, part: "x" })).toBe("file:///a/b%20c?rev=3#x");
    expect(await expandTemplate("note://{id}", { id: "a/b" })).toBe("note://a%2Fb");
    expect(() => templateParameters({ uriTemplate: "note://{id", name: "broken" })).toThrow(/Unclosed/);
  });
});

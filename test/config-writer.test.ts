/**
 * config/writer.ts's edits keep the file's layout: a removed entry takes its lines with it, whichever entry it was
 * (the first one's removal used to pull the next entry up onto the line of `"mcpServers": {`), with the comments
 * around the others kept and the commas right; the first entry added to an empty `"mcpServers": {}` gets lines of
 * its own (it was written as `{"name": {`, its end as `}},`).
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { removeServerEntry, writeServerEntry } from "../config.ts";
import { withTempDir } from "./helpers/temp-dir.ts";

let dir = "";
withTempDir("mcp-writer-", (path) => (dir = path));

async function removed(text: string, name: string): Promise<string> {
  const file = join(dir, "mcp.json");
  await writeFile(file, text);
  await removeServerEntry(file, name);
  const after = await readFile(file, "utf8");
  JSON.parse(after.replace(/\/\/[^\n]*|\/\*[\s\S]*?\*\//g, "")); // still JSON, once the comments are out
  return after;
}

/** As `/mcp add` writes a new file, twice. */
const ADDED = `{
  "mcpServers": {
    "airtable-mcp-server": {
      "command": "npx",
      "args": ["-y", "airtable-mcp-server@1.7.3"]
    },
    "everything": {
      "command": "npx"
    }
  }
}
`;

const COMMENTED = `{
  // mine
  "mcpServers": {
    "a": { "command": "x" }, // the first
    /* b */
    "b": { "command": "y",   "args": [1,   2] }, // b's own
    "c": { "command": "z" } // the last
  },
  "settings": {}
}
`;

describe("removing a server entry keeps the file's layout", () => {
  test("the first of two: the second stays on its own lines", async () => {
    expect(await removed(ADDED, "airtable-mcp-server")).toBe(`{
  "mcpServers": {
    "everything": {
      "command": "npx"
    }
  }
}
`);
  });

  test("the last: the comma before it goes, the comment after the one before stays", async () => {
    expect(await removed(COMMENTED, "c")).toBe(
      COMMENTED.replace(`, // b's own\n    "c": { "command": "z" } // the last\n`, ` // b's own\n`),
    );
  });

  test("one in the middle, with its comment; an odd spacing elsewhere is left as it was", async () => {
    expect(await removed(COMMENTED, "b")).toBe(COMMENTED.replace(`    "b": { "command": "y",   "args": [1,   2] }, // b's own\n`, ""));
    expect(await removed(COMMENTED, "a")).toBe(COMMENTED.replace(`    "a": { "command": "x" }, // the first\n`, ""));
  });

  test("the only one: an empty table", async () => {
    expect(await removed(`{\n  "mcpServers": {\n    "a": { "command": "x" }\n  }\n}\n`, "a")).toBe(`{\n  "mcpServers": {\n  }\n}\n`);
  });

  test("an entry sharing its line with another is still removed, and an added entry removed again leaves the file as it was", async () => {
    expect(await removed(`{ "mcpServers": { "a": { "command": "x" }, "b": { "command": "y" } } }\n`, "a")).toBe(
      `{ "mcpServers": { "b": { "command": "y" } } }\n`,
    );
    const file = join(dir, "mcp.json");
    await writeFile(file, COMMENTED);
    await writeServerEntry(file, "d", { command: "w", args: ["1"] });
    await removeServerEntry(file, "d");
    expect(await readFile(file, "utf8")).toBe(COMMENTED);
  });
});

describe("adding a server entry", () => {
  test("to an empty table, on a line, or on a line of its own, or to an empty file: each on lines of its own", async () => {
    const file = join(dir, "mcp.json");
    const added = async (text: string) => {
      await writeFile(file, text);
      await writeServerEntry(file, "a", { command: "x" });
      return readFile(file, "utf8");
    };
    const entry = `"a": {\n      "command": "x"\n    }`;
    expect(await added(`{\n  "mcpServers": {},\n  "settings": {}\n}\n`)).toBe(
      `{\n  "mcpServers": {\n    ${entry}\n  },\n  "settings": {}\n}\n`,
    );
    expect(await added(`{\n  // mine\n  "mcpServers": {\n  }\n}\n`)).toBe(`{\n  // mine\n  "mcpServers": {\n    ${entry}\n  }\n}\n`);
    expect(await added("{}")).toBe(`{\n  "mcpServers": {\n    ${entry}\n  }\n}\n`);
    expect(await added("")).toBe(`{\n  "mcpServers": {\n    ${entry}\n  }\n}\n`);
  });
});

import { describe, expect, it } from "vitest";
import { interpolate, lookupEnv, type InterpolationContext } from "../config/interpolation.ts";
import { expandHome } from "../util/paths.ts";

const linux: InterpolationContext = {
  env: { FOO: "bar", EMPTY: "", TOKEN: "s3cret", PATHY: "~/not-home" },
  homeDir: "/home/ada",
  cwd: "/work/app",
  platform: "linux",
};
const value = (text: string, context = linux) => interpolate(text, context);

describe("interpolate", () => {
  it("substitutes every supported variable syntax", () => {
    expect(value("${FOO}|${env:FOO}|$env:FOO|x$env:FOO.y")).toEqual({ value: "bar|bar|bar|xbar.y", issues: [] });
    expect(value("Bearer ${TOKEN}")).toEqual({ value: "Bearer s3cret", issues: [] });
  });

  it("uses a default when the variable is unset or empty, as the shell does", () => {
    expect(value("${NOPE:-fallback}|${EMPTY:-e}|${FOO:-unused}|${NOPE:-}")).toEqual({ value: "fallback|e|bar|", issues: [] });
    expect(value("${NOPE:-http://localhost:8080/a:b}")).toEqual({ value: "http://localhost:8080/a:b", issues: [] });
  });

  it("keeps an empty variable empty (it is set)", () => {
    expect(value("[${EMPTY}]")).toEqual({ value: "[]", issues: [] });
  });

  it("resolves the VS Code / Cursor predefined variables to real paths, never to empty strings", () => {
    expect(value("${workspaceFolder}/src|${userHome}/.config|${workspaceFolderBasename}|a${pathSeparator}b${/}c")).toEqual({
      value: "/work/app/src|/home/ada/.config|app|a/b/c",
      issues: [],
    });
    const windows: InterpolationContext = { ...linux, platform: "win32", cwd: "C:\\work\\app", homeDir: "C:\\Users\\ada" };
    expect(value("${workspaceFolderBasename}${/}${userHome}", windows).value).toBe("app\\C:\\Users\\ada");
  });

  it("reports a missing variable instead of substituting an empty string", () => {
    expect(value("--key=${MISSING} --other=$env:ALSO_MISSING ${env:THIRD}")).toEqual({
      value: "--key=${MISSING} --other=$env:ALSO_MISSING ${env:THIRD}",
      issues: [
        { kind: "missing-variable", name: "MISSING" },
        { kind: "missing-variable", name: "ALSO_MISSING" },
        { kind: "missing-variable", name: "THIRD" },
      ],
    });
  });

  it("reports VS Code inputs and unknown ${x:y} forms instead of dropping them", () => {
    expect(value("${input:api-key}").issues).toEqual([{ kind: "vscode-input", id: "api-key" }]);
    for (const expression of [
      "${file:/run/secret}",
      "${command:pick}",
      "${config:editor.tabSize}",
      "${FOO-default}",
      "${}",
      "${1ABC}",
      "${FOO:=x}",
    ]) {
      expect(value(`a ${expression} b`)).toEqual({ value: `a ${expression} b`, issues: [{ kind: "unsupported", expression }] });
    }
  });

  it("reports an unterminated ${ with the rest of the text", () => {
    expect(value("x-${FOO").issues).toEqual([{ kind: "unsupported", expression: "${FOO" }]);
  });

  it("treats $${ as a literal ${ and leaves bare $VAR alone", () => {
    expect(value("$${FOO} $FOO $ {FOO} $$")).toEqual({ value: "${FOO} $FOO $ {FOO} $$", issues: [] });
  });

  it("never runs anything: commands, backticks and $() stay text", () => {
    for (const text of ["!echo hi", "`id`", "$(id)", "!!cat /etc/passwd"]) expect(value(text)).toEqual({ value: text, issues: [] });
  });

  it("does not substitute again inside a substituted value", () => {
    const context = { ...linux, env: { OUTER: "${INNER}", INNER: "no" } };
    expect(value("${OUTER}", context)).toEqual({ value: "${INNER}", issues: [] });
  });

  it("looks variables up case-insensitively on Windows only", () => {
    const env = { Path: "C:\\bin", APPDATA: "C:\\Users\\ada\\AppData\\Roaming" };
    expect(lookupEnv(env, "PATH", "win32")).toBe("C:\\bin");
    expect(lookupEnv(env, "appdata", "win32")).toBe("C:\\Users\\ada\\AppData\\Roaming");
    expect(lookupEnv(env, "PATH", "linux")).toBeUndefined();
    expect(value("${path}", { ...linux, env, platform: "win32" }).value).toBe("C:\\bin");
  });
});

describe("expandHome", () => {
  it("expands ~ and ~/ at the start only", () => {
    expect(expandHome("~", "/home/ada", "linux")).toBe("/home/ada");
    expect(expandHome("~/bin/server", "/home/ada", "linux")).toBe("/home/ada/bin/server");
    expect(expandHome("~other/x", "/home/ada", "linux")).toBe("~other/x");
    expect(expandHome("a/~/b", "/home/ada", "linux")).toBe("a/~/b");
    expect(expandHome("--dir=~/x", "/home/ada", "linux")).toBe("--dir=~/x");
  });

  it("accepts both separators on Windows", () => {
    expect(expandHome("~\\tools\\s.exe", "C:\\Users\\ada", "win32")).toBe("C:\\Users\\ada\\tools\\s.exe");
    expect(expandHome("~/tools", "C:\\Users\\ada", "win32")).toBe("C:\\Users\\ada\\tools");
    expect(expandHome("~\\tools", "/home/ada", "linux")).toBe("~\\tools");
  });
});

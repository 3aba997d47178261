import { describe, expect, it } from "vitest";
import { OutputTail } from "../connection/stderr-tail.ts";
import { mergeEnv } from "../connection/server-target.ts";

describe("OutputTail", () => {
  it("keeps the last lines, joining chunks split mid-line and leaving blank lines out", () => {
    const tail = new OutputTail(3, 1_000);
    tail.append("one\ntw");
    tail.append("o\n\nthree\r\nfour\nfiv");
    expect(tail.lines()).toEqual(["two", "three", "four", "fiv"]);
  });

  it("stays within its byte budget, even for one endless line", () => {
    const tail = new OutputTail(20, 10);
    tail.append("aaaa\nbbbb\ncccc\n");
    expect(tail.lines()).toEqual(["bbbb", "cccc"]);
    tail.append("x".repeat(50));
    expect(tail.lines()).toEqual(["x".repeat(10)]);
  });
});

describe("mergeEnv", () => {
  it("puts the server's env over the parent's and drops unset parent values", () => {
    expect(mergeEnv({ A: "1", B: "2", GONE: undefined }, { B: "3" }, "linux")).toEqual({ A: "1", B: "3" });
  });

  it("on Windows replaces a variable whatever the case of its name", () => {
    expect(mergeEnv({ Path: "C:\\old", X: "1" }, { PATH: "C:\\new" }, "win32")).toEqual({ X: "1", PATH: "C:\\new" });
    expect(mergeEnv({ Path: "/old" }, { PATH: "/new" }, "linux")).toEqual({ Path: "/old", PATH: "/new" });
  });
});

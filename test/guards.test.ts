import { describe, expect, it } from "vitest";
import { describeValue, errorCode, errorMessage, toError } from "../util/guards.ts";

describe("describeValue", () => {
  it("names the kind of value, with the value itself only for numbers and booleans (a string may be a secret)", () => {
    expect([null, [1], "s3cret", 5, false, {}, undefined].map(describeValue)).toEqual([
      "null",
      "an array",
      "a string",
      "the number 5",
      "the boolean false",
      "an object",
      "undefined",
    ]);
  });
});

describe("errorCode", () => {
  it("is the code of a system error, and nothing for anything else thrown", () => {
    expect(errorCode(Object.assign(new Error("gone"), { code: "ENOENT" }))).toBe("ENOENT");
    expect([new Error("plain"), "ENOENT", null, { code: 5 }].map(errorCode)).toEqual([undefined, undefined, undefined, undefined]);
  });
});

describe("errorMessage and toError", () => {
  it("take an Error's message, and anything else thrown as its text", () => {
    expect(errorMessage(new Error("boom"))).toBe("boom");
    expect(errorMessage(42)).toBe("42");
    const error = new Error("kept");
    expect(toError(error)).toBe(error);
    expect(toError("text").message).toBe("text");
  });
});

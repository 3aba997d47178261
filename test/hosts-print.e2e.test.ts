/**
 * The print-mode helper: the real `pi` CLI of this run's host on its own Node binary, with a faux script.
 */
import { describe, expect, test } from "vitest";
import { offeredToolNames } from "./helpers/faux-script.ts";
import { currentHost } from "./helpers/hosts.ts";
import { runPrint } from "./helpers/pi-print.ts";
import { ECHO_TEXT } from "./fixtures/faux-scripts/find-and-call-steps.ts";

const TOY = "test/fixtures/extensions/toy.ts";
const host = currentHost();

describe(`pi ${host.version} -p`, () => {
  test("runs every prompt, prints the last answer, exits 0 and records what the model saw", async () => {
    const result = await runPrint({
      extensions: [TOY],
      script: [{ toolCalls: [{ name: "toy_find", arguments: { query: "echo" } }] }, "found", "bye"],
      prompts: ["find echo", "thanks"],
    });
    expect(result).toMatchObject({ exitCode: 0, stdout: "bye\n", stderr: "" });
    expect(result.requests.map(offeredToolNames).map((names) => names.includes("toy_echo"))).toEqual([
      false,
      host.refreshesToolsEachTurn,
      true,
    ]);
    expect(result.toolResults).toMatchObject([{ toolName: "toy_find", isError: false }]);
  });

  test("the model finds a tool and calls it within one prompt", async () => {
    const result = await runPrint({
      extensions: [TOY],
      script: "test/fixtures/faux-scripts/find-and-call.ts",
      prompts: ["echo something"],
    });
    expect(result).toMatchObject({ exitCode: 0, stdout: "Echoed.\n" });
    expect(result.toolResults.map(({ toolName, text }) => ({ toolName, text }))).toEqual([
      { toolName: "toy_find", text: expect.any(String) },
      { toolName: host.refreshesToolsEachTurn ? "toy_echo" : "toy_call", text: `echo: ${ECHO_TEXT}` },
    ]);
  });

  test("a used-up script ends the run with exit code 1 and the reason on stderr", async () => {
    const result = await runPrint({ extensions: [TOY], script: [], prompts: ["hello"] });
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain("faux script exhausted");
  });
});

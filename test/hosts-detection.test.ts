/**
 * Host detection (host.ts, used by the adapter and the toy extension): Pi 0.80.3 is the first release that offers
 * tools activated during a run from its next turn; Pi 1.x has its own codemode (it exports its factory).
 */
import { expect, test } from "vitest";
import { hostHasCodemode, hostRefreshesToolsEachTurn } from "../host.ts";
import { HOSTS } from "./helpers/hosts.ts";

test.each([
  ["0.73.1", false],
  ["0.79.99", false],
  ["0.80.2", false],
  ["0.80.3-rc.1", false],
  ["0.80.3", true],
  ["0.80.10", true],
  ["0.87.1", true],
  ["1.0.0", true],
  ["0.100.0", true],
  ["0.81.0-beta.1", false],
  ["", false],
  ["unknown", false],
])("Pi %j refreshes tools each turn: %s", (version, expected) => {
  expect(hostRefreshesToolsEachTurn(version)).toBe(expected);
});

test("agrees with what the harness observed on every installed host", () => {
  for (const host of Object.values(HOSTS)) {
    expect(hostRefreshesToolsEachTurn(host.version)).toBe(host.refreshesToolsEachTurn);
  }
});

// Pi 0.87.1 is checked end to end (script-tool.e2e.test.ts: the adapter registers codemode there).
test("codemode: Pi 0.73.1 has none; a host exporting createCodemodeExtension (Pi 1.x) has", async () => {
  expect(hostHasCodemode(await import("@mariozechner/pi-coding-agent"))).toBe(false);
  expect(hostHasCodemode({ createCodemodeExtension: () => ({}) })).toBe(true);
});

/**
 * Host detection (host.ts, used by the adapter and the toy extension): Pi 0.80.3 is the first release that offers
 * tools activated during a run from its next turn.
 */
import { expect, test } from "vitest";
import { hostRefreshesToolsEachTurn } from "../host.ts";
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

/**
 * Large results and time limits, end to end in the real Pi with the items fixture server: a 400 KB result reaches
 * the model as a head preview naming a private file that holds all of it; audio is kept in a .wav file; a tool that
 * would answer after ten minutes, under `requestTimeoutMs: 1500`, fails, is cancelled at the server, and the model is told which limit to raise.
 */
import { readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, test } from "vitest";
import { callLoaded, faultHarness, search } from "./helpers/fault-setup.ts";
import { currentHost } from "./helpers/hosts.ts";
import { itemsServer } from "./helpers/items-fixture.ts";
// @ts-expect-error -- a plain ES module of the fixtures, shared with the items server
import { bigReport } from "./fixtures/servers/report-text.mjs";

const host = currentHost();
const harness = faultHarness();

/** The file a note names: `... is in <path>: read it ...` or `... saved to <path>...`. */
function namedFile(text: string, pattern: RegExp): string {
  const match = pattern.exec(text);
  if (!match) throw new Error(`no file named in: ${text.slice(-400)}`);
  return match[1]!;
}

function mode(path: string): number {
  return statSync(path).mode & 0o777;
}

describe(`large results and time limits on Pi ${host.version}`, () => {
  test("a 400 KB result gives the model a preview under 60 KB that names a private file holding all of it; audio is kept as .wav", async () => {
    const dirs = await harness.dirs({ items: itemsServer() });
    const pi = await harness.session(dirs, [
      search("select:items__report,items__report_audio"),
      callLoaded("items__report", { kb: 400 }),
      callLoaded("items__report_audio"),
      "done",
    ]);
    await pi.prompt("write the report");

    const [, report, audio] = pi.toolResults;
    expect(report!.isError).toBe(false);
    const whole = bigReport(400) as string;
    expect(Buffer.byteLength(whole)).toBeGreaterThan(400_000);
    // What the model was sent with the next request: the tool result message of the report.
    const sent = pi.requests
      .at(-2)!
      .messages.filter((message) => message.role === "toolResult")
      .at(-1)!;
    expect(Buffer.byteLength(JSON.stringify(sent.content))).toBeLessThan(60 * 1024);
    expect(report!.text.startsWith(whole.slice(0, 10_000))).toBe(true);
    const file = namedFile(report!.text, /The whole result \(394\.5KB\) is in (\S+): read it with the read tool/);
    expect(readFileSync(file, "utf8")).toBe(whole);
    expect(file.startsWith(join(dirs.agentDir, "mcp-results"))).toBe(true);
    expect(file).toMatch(/items-report-[0-9a-f]{6}\.txt$/);
    expect(mode(file)).toBe(0o600);
    expect(mode(dirname(file))).toBe(0o700);

    expect(audio!.text).toMatch(/^\[Audio: audio\/wav, 1\.0KB, saved to \S+\.wav; audio cannot be shown to the model\]$/);
    const clip = readFileSync(namedFile(audio!.text, /saved to (\S+\.wav);/));
    expect(clip.subarray(0, 4).toString("latin1")).toBe("RIFF");
    expect(pi.errors).toEqual([]);
  });

  // Ten minutes: the limit comes first whatever the machine's load (no race of the server's timer and ours).
  test("a ten-minute tool under requestTimeoutMs 1500 fails, is cancelled at the server, and the model is told which limit to raise", async () => {
    const dirs = await harness.dirs({ items: itemsServer({ requestTimeoutMs: 1500 }) }, { requestTimeoutMs: 600_000 });
    const pi = await harness.session(dirs, [search("select:items__wait"), callLoaded("items__wait", { seconds: 600 }), "done"]);
    await pi.prompt("wait");

    const waited = pi.toolResults[1]!;
    expect(waited.isError).toBe(true);
    expect(waited.text).toContain(
      'MCP tool "wait" on server "items" timed out: it ran 1.5 s without an answer or progress (the requestTimeoutMs limit) and was cancelled at the server. ' +
        'If it needs longer, the user can raise "requestTimeoutMs" for server "items" in the MCP config',
    );
    // The server saw notifications/cancelled: its handler's signal was aborted with the client's reason.
    const log = join(dirs.cwd, "items.log");
    await expect.poll(() => readFileSync(log, "utf8"), { timeout: 15_000 }).toContain('"tool":"wait cancelled"');
    const cancelled = readFileSync(log, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { tool: string; args: { reason?: string } });
    expect(cancelled.find((entry) => entry.tool === "wait cancelled")!.args.reason).toMatch(/timed out/i);
  }, 60_000);
});

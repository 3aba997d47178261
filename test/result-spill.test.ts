/**
 * calls/result-spill.ts on a real file system: private files with the media type's extension, a directory made private,
 * pruning by age and total size; and mcp-content's overflow kept through it (the whole text, binary parts), or
 * nothing cut under `outputGuard: false` (calls/limits.ts).
 */
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { callLimits } from "../calls/limits.ts";
import { keepOverflow, MAX_TEXT_BYTES, transformMcpResult, transformResourceResult, type PiContent } from "../calls/content.ts";
import { DEFAULT_MAX_TOTAL_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS } from "../server-manager.ts";
import { keepInFile, resultDir } from "../calls/result-spill.ts";

let root: string;
let dir: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "result-spill-"));
  dir = resultDir(root);
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const mode = (path: string) => statSync(path).mode & 0o777;
const texts = (content: PiContent[]) => content.flatMap((block) => (block.type === "text" ? [block.text] : []));

describe("keepInFile", () => {
  it("writes a 0600 file named after the call, with the media type's extension, in a 0700 directory", async () => {
    const text = await keepInFile(dir, "hello", "text/plain", "srv-big tool/../x");
    const wav = await keepInFile(dir, Buffer.from("RIFF"), "audio/wav", "srv-clip");
    const odd = await keepInFile(dir, Buffer.from([1, 2]), "application/x-made-up", "srv-odd");
    expect(text).toMatch(new RegExp(`^${dir}/[0-9TZ-]+-srv-big_tool_x-[0-9a-f]{6}\\.txt$`));
    expect(wav).toMatch(/-srv-clip-[0-9a-f]{6}\.wav$/);
    expect(odd).toMatch(/\.bin$/);
    expect(readFileSync(text!, "utf8")).toBe("hello");
    expect([mode(text!), mode(wav!), mode(dir)]).toEqual([0o600, 0o600, 0o700]);
  });

  it("makes an existing directory private, and refuses one that is a symlink", async () => {
    mkdirSync(dir, { mode: 0o755 });
    chmodSync(dir, 0o755);
    expect(await keepInFile(dir, "x", "text/plain", "a")).toBeDefined();
    expect(mode(dir)).toBe(0o700);

    const elsewhere = join(root, "elsewhere");
    mkdirSync(elsewhere);
    const link = join(root, "link");
    symlinkSync(elsewhere, link);
    expect(await keepInFile(link, "x", "text/plain", "a")).toBeUndefined();
    expect(readdirSync(elsewhere)).toEqual([]);
  });

  it("prunes files past the age limit, then the oldest beyond the total size, keeping the new one; keeps nothing larger than the cap", async () => {
    mkdirSync(dir, { recursive: true });
    const file = (name: string, bytes: number, ageMs: number) => {
      const path = join(dir, name);
      writeFileSync(path, "x".repeat(bytes));
      const when = (Date.now() - ageMs) / 1000;
      utimesSync(path, when, when);
      return path;
    };
    const ancient = file("ancient.txt", 10, 10_000);
    const older = file("older.txt", 40, 3_000);
    const newer = file("newer.txt", 40, 2_000);
    const limits = { maxAgeMs: 5_000, maxTotalBytes: 100 };
    const kept = await keepInFile(dir, "y".repeat(30), "text/plain", "a", limits);
    expect([existsSync(ancient), existsSync(older), existsSync(newer), existsSync(kept!)]).toEqual([false, false, true, true]);
    expect(await keepInFile(dir, "z".repeat(101), "text/plain", "a", limits)).toBeUndefined();
  });
});

describe("large results kept in files", () => {
  const keep = (data: string | Buffer, mimeType: string) => keepInFile(dir, data, mimeType, "srv-tool");

  it("previews the head of a text past the limits and names the file that holds all of it", async () => {
    const whole = Array.from({ length: 5000 }, (_, i) => `line ${i}`).join("\n");
    const out = await keepOverflow(transformMcpResult({ content: [{ type: "text", text: whole }] }), keep);
    const [head, note] = texts(out.content);
    expect(head).toBe(whole.split("\n").slice(0, 2000).join("\n"));
    const file = /is in (\S+): read it with the read tool \(offset\/limit\), grep or bash\.\]$/.exec(note!)?.[1];
    expect(note).toMatch(/^\[Output truncated: showing 2000 of 5000 lines \(/);
    expect(readFileSync(file!, "utf8")).toBe(whole);
  });

  it("keeps a note without a file when the file cannot be written", async () => {
    const out = await keepOverflow(
      transformMcpResult({ content: [{ type: "text", text: "q".repeat(MAX_TEXT_BYTES * 2) }] }),
      async () => undefined,
    );
    expect(texts(out.content).at(-1)).toMatch(/Ask the tool for less/);
  });

  it("writes audio, blobs and images too large for the model to files with their extension", async () => {
    const big = Buffer.alloc(3000, 7).toString("base64");
    const out = await keepOverflow(
      transformMcpResult(
        {
          content: [
            { type: "audio", data: big, mimeType: "audio/mpeg" },
            { type: "image", data: big, mimeType: "image/png" },
            { type: "resource", resource: { uri: "file:///a.pdf", mimeType: "application/pdf", blob: big } },
          ],
        },
        { maxImageBytes: 100 },
      ),
      keep,
    );
    const [audio, image, pdf] = texts(out.content);
    expect(audio).toMatch(/^\[Audio: audio\/mpeg, 2\.9KB, saved to \S+\.mp3; audio cannot be shown to the model\]$/);
    expect(image).toMatch(
      /^\[Image not shown \(image\/png, 2\.9KB, larger than the 100B of base64 the model can take\); saved to \S+\.png\]$/,
    );
    expect(pdf).toMatch(/^\[Resource: file:\/\/\/a\.pdf\] binary content \(application\/pdf, 2\.9KB\) saved to \S+\.pdf$/);
    for (const note of [audio!, image!, pdf!])
      expect(readFileSync(/saved to (\S+?\.(?:mp3|png|pdf))/.exec(note)![1]!)).toEqual(Buffer.alloc(3000, 7));
  });

  it("outputGuard false shows everything; { maxBytes, maxLines } sets the limits; the time limits fall back to the defaults", () => {
    const whole = "w".repeat(MAX_TEXT_BYTES * 3);
    const open = callLimits({ outputGuard: false }, { outputGuard: true });
    expect(transformResourceResult({ contents: [{ uri: "a://1", text: whole }] }, open).content).toEqual([{ type: "text", text: whole }]);
    const tight = callLimits(undefined, { outputGuard: { maxLines: 3 }, requestTimeoutMs: 1500 });
    expect(tight).toEqual({
      requestTimeoutMs: 1500,
      requestTimeoutSource: "settings.requestTimeoutMs",
      maxTotalTimeoutMs: DEFAULT_MAX_TOTAL_TIMEOUT_MS,
      maxTextBytes: MAX_TEXT_BYTES,
      maxTextLines: 3,
    });
    expect(callLimits({ requestTimeoutMs: 0 }, {}).requestTimeoutMs).toBe(DEFAULT_REQUEST_TIMEOUT_MS);
    expect(callLimits({ requestTimeoutMs: 200 }, { requestTimeoutMs: 1500 }).requestTimeoutMs).toBe(200);
  });
});

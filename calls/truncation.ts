/**
 * Text bounded to what the model can take (Pi's own head truncation, whole lines), with a note saying what was cut
 * and how to see the rest.
 */
import type { ImageContent, TextContent } from "@mariozechner/pi-ai";
import { formatSize, truncateHead } from "@mariozechner/pi-coding-agent";

type Block = TextContent | ImageContent;

export interface TruncationInfo {
  totalBytes: number;
  totalLines: number;
  shownBytes: number;
  shownLines: number;
}

export interface TextLimits {
  maxTextBytes: number;
  maxTextLines: number;
  /** Text blocks that stand for binary data: kept as they are, outside the budget. */
  notes: { has(block: TextContent): boolean };
}

export interface BoundText {
  content: Block[];
  truncation?: TruncationInfo;
  /** The whole text (the text blocks joined by newlines) when it was cut. */
  wholeText?: string;
  omittedBlocks: number;
}

interface Head {
  text: string;
  bytes: number;
  lines: number;
}

/**
 * Text blocks share one budget (the model reads them all). The block that crosses it is cut, the text blocks after
 * it are dropped, and a note says what was cut. Images are bounded one by one already and are kept, as are the
 * notes standing for binary data.
 */
export function boundText(content: readonly Block[], limits: TextLimits): BoundText {
  const isText = (block: Block): block is TextContent => block.type === "text" && !limits.notes.has(block);
  const texts = content.filter(isText).map((block) => block.text);
  const totalBytes = texts.reduce((sum, value) => sum + Buffer.byteLength(value, "utf8"), 0);
  const totalLines = texts.reduce((sum, value) => sum + countLines(value), 0);
  if (totalBytes <= limits.maxTextBytes && totalLines <= limits.maxTextLines) return { content: [...content], omittedBlocks: 0 };

  let bytesLeft = limits.maxTextBytes;
  let linesLeft = limits.maxTextLines;
  let cut = false;
  let omittedBlocks = 0;
  const out: Block[] = [];
  for (const block of content) {
    if (!isText(block)) {
      out.push(block);
    } else if (cut) {
      omittedBlocks++;
    } else {
      const head = headOf(block.text, bytesLeft, linesLeft);
      if (head.text !== block.text) cut = true;
      if (head.text === "") omittedBlocks++;
      else out.push(text(head.text));
      bytesLeft -= head.bytes;
      linesLeft -= head.lines;
    }
  }
  const truncation: TruncationInfo = {
    totalBytes,
    totalLines,
    shownBytes: limits.maxTextBytes - bytesLeft,
    shownLines: limits.maxTextLines - linesLeft,
  };
  out.push(text(truncationNote(truncation, omittedBlocks)));
  return { content: out, truncation, wholeText: texts.join("\n"), omittedBlocks };
}

export function truncationNote(info: TruncationInfo, omittedBlocks: number, file?: string): string {
  const omitted = omittedBlocks > 0 ? ` ${omittedBlocks} further text block(s) omitted.` : "";
  const rest = file
    ? `The whole result (${formatSize(info.totalBytes)}) is in ${file}: read it with the read tool (offset/limit), grep or bash.`
    : "Ask the tool for less (a filter, a narrower query or a page) to see the rest.";
  return `[Output truncated: showing ${info.shownLines} of ${info.totalLines} lines (${formatSize(info.shownBytes)} of ${formatSize(info.totalBytes)}).${omitted} ${rest}]`;
}

function countLines(value: string): number {
  let lines = 1;
  for (let i = value.indexOf("\n"); i !== -1; i = value.indexOf("\n", i + 1)) lines++;
  return lines;
}

/**
 * The start of `value` within the budget: whole lines, by Pi's own head truncation. A first line longer than the
 * whole budget (a one-line 20 MB JSON) is cut at a character boundary instead, so the model still sees its start.
 */
function headOf(value: string, maxBytes: number, maxLines: number): Head {
  if (maxBytes <= 0 || maxLines <= 0) return { text: "", bytes: 0, lines: 0 };
  // Only the first maxBytes + 1 characters can matter (each is at least a byte): a 20 MB text is not split whole.
  const head = truncateHead(value.slice(0, maxBytes + 1), { maxBytes, maxLines });
  const kept = head.firstLineExceedsLimit ? cutToBytes(value, maxBytes) : head.content;
  return { text: kept, bytes: Buffer.byteLength(kept, "utf8"), lines: kept === "" ? 0 : countLines(kept) };
}

/** The first `maxBytes` bytes of `value`, not splitting a character. */
function cutToBytes(value: string, maxBytes: number): string {
  // A character takes at least one byte, so the first maxBytes characters hold at least maxBytes bytes.
  let candidate = value.slice(0, maxBytes);
  if (/[\uD800-\uDBFF]$/.test(candidate)) candidate = candidate.slice(0, -1);
  const encoded = Buffer.from(candidate, "utf8");
  if (encoded.length <= maxBytes) return candidate;
  let cutAt = maxBytes;
  while (cutAt > 0 && (encoded[cutAt]! & 0xc0) === 0x80) cutAt--;
  return encoded.subarray(0, cutAt).toString("utf8");
}

function text(value: string): TextContent {
  return { type: "text", text: value };
}

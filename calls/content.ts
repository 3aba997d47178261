/**
 * MCP results → Pi tool results: every MCP content type becomes text or an image the model can take, bounded in
 * size (Pi's own limits and head truncation: truncation.ts), optionally TOON-encoded (toon.ts). Never throws on
 * what a server sends.
 *
 * What the model is not shown — the whole text past the limits, audio, blobs, images too large — is kept aside
 * (`TransformedResult.overflow`); `keepOverflow` hands it to a keeper (calls/result-spill.ts writes files) and names the
 * files in the notes, so the model can read the rest instead of losing it.
 *
 * Errors: an MCP result with `isError: true` comes back with `isError: true`; the caller must then throw
 * (`new McpToolError(result)`), because Pi only marks a tool result as an error when `execute` throws.
 */
import type { ImageContent, TextContent } from "@mariozechner/pi-ai";
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, formatSize } from "@mariozechner/pi-coding-agent";
import type { McpSettings } from "../types.ts";
import { isJsonObject } from "../util/guards.ts";
import { isToonEnabled, toToonIfShorter } from "./toon.ts";
import { boundText, type TruncationInfo, truncationNote } from "./truncation.ts";

/** The limits of Pi's own read and bash tools (50 KB, 2,000 lines): whichever is hit first wins. */
export const MAX_TEXT_BYTES = DEFAULT_MAX_BYTES;
export const MAX_TEXT_LINES = DEFAULT_MAX_LINES;
/** Pi's own image bound (`image-resize.js`): 4.5 MB of base64, below Anthropic's 5 MB limit. */
export const MAX_IMAGE_BASE64_BYTES = 4.5 * 1024 * 1024;

export type PiContent = TextContent | ImageContent;

export interface TransformOptions {
  serverName?: string;
  /** `settings.toonEncode`: true for every server, or the names of the servers whose JSON is TOON-encoded. */
  toonEncode?: McpSettings["toonEncode"];
  maxTextBytes?: number;
  maxTextLines?: number;
  maxImageBytes?: number;
}

export interface ResultDetails {
  isError: boolean;
  /** Set when text was cut to fit the limits. */
  truncation?: TruncationInfo;
  /** Some JSON text was replaced by its shorter TOON form. */
  toonEncoded: boolean;
}

export interface TransformedResult {
  content: PiContent[];
  isError: boolean;
  details: ResultDetails;
  /** What the model is not shown, to keep elsewhere (`keepOverflow`); absent when it was shown everything. */
  overflow?: Overflow;
}

/** Binary data shown as a note (`content` holds the note block itself). */
interface BinaryPart {
  data: string;
  mimeType: string;
  /** The note, naming the file that holds the data once there is one. */
  describe: (file?: string) => string;
}

export interface Overflow {
  /** The whole text (the text blocks joined by newlines) when it was cut. */
  text?: string;
  omittedBlocks: number;
  binaries: Map<TextContent, BinaryPart>;
}

/** Writes data to a file the model can read and gives its path; undefined when it could not. */
export type ResultKeeper = (data: string | Buffer, mimeType: string) => Promise<string | undefined>;

/** What the model reads of an `isError` result: its text, or a note that it had none. */
export function errorResultText(result: TransformedResult): string {
  const text = result.content
    .filter((block): block is TextContent => block.type === "text")
    .map((block) => block.text)
    .join("\n");
  return text || "The MCP tool reported an error without a message.";
}

/** Thrown by the caller for an `isError` result; its message is the result's text, as the model should see it. */
export class McpToolError extends Error {
  readonly result: TransformedResult;

  constructor(result: TransformedResult) {
    super(errorResultText(result));
    this.name = "McpToolError";
    this.result = result;
  }
}

interface Limits {
  maxTextBytes: number;
  maxTextLines: number;
  maxImageBytes: number;
  /** Filled while converting: the binary data shown as notes. */
  binaries: Map<TextContent, BinaryPart>;
}

type Json = Record<string, unknown>;

/** A `tools/call` result (any shape: garbage gives a note, not a throw). */
export function transformMcpResult(result: unknown, options: TransformOptions = {}): TransformedResult {
  const limits = limitsOf(options);
  const raw = isJsonObject(result) ? result : {};
  const isError = raw.isError === true;
  const content = (Array.isArray(raw.content) ? raw.content : []).flatMap((block) => convertBlock(block, limits));
  if (!content.some((block) => block.type === "text")) {
    // Structured output stands in for text only when the server gave none (servers usually send both).
    const structured = raw.structuredContent ?? raw.toolResult;
    if (structured !== undefined) content.push(text(safeStringify(structured)));
  }
  if (content.length === 0) content.push(text(isError ? "(the tool reported an error without a message)" : "(no content)"));
  return finish(content, isError, options, limits);
}

/** A `resources/read` result: `contents[]` of text or base64 blobs. */
export function transformResourceResult(result: unknown, options: TransformOptions = {}): TransformedResult {
  const limits = limitsOf(options);
  const contents = isJsonObject(result) && Array.isArray(result.contents) ? result.contents : [];
  // One resource is shown as it is; several are told apart by their URIs.
  const withHeader = contents.length > 1;
  const content = contents.flatMap((item) =>
    isJsonObject(item) ? convertResourceContents(item, withHeader, limits) : [text("[Unreadable resource contents omitted]")],
  );
  if (content.length === 0) content.push(text("(the resource is empty)"));
  return finish(content, false, options, limits);
}

/**
 * A `prompts/get` result, as one user message: each message's content converted like a tool result's (embedded
 * resources with their URI). A prompt that also speaks as the assistant (a worked example, a primed answer) has each
 * message labelled with its role, since Pi takes it all as the user's words.
 */
export function transformPromptMessages(result: unknown, options: TransformOptions = {}): TransformedResult {
  const limits = limitsOf(options);
  const messages = (isJsonObject(result) && Array.isArray(result.messages) ? result.messages : []).filter(isJsonObject);
  const labelled = messages.some((message) => message.role !== "user");
  const content = messages.flatMap((message) => {
    const blocks = convertBlock(message.content, limits);
    return labelled ? [text(`[${String(message.role)}]`), ...blocks] : blocks;
  });
  if (content.length === 0) content.push(text("(the prompt has no messages)"));
  return finish(content, false, options, limits);
}

function limitsOf(options: TransformOptions): Limits {
  return {
    maxTextBytes: options.maxTextBytes ?? MAX_TEXT_BYTES,
    maxTextLines: options.maxTextLines ?? MAX_TEXT_LINES,
    maxImageBytes: options.maxImageBytes ?? MAX_IMAGE_BASE64_BYTES,
    binaries: new Map(),
  };
}

function finish(content: PiContent[], isError: boolean, options: TransformOptions, limits: Limits): TransformedResult {
  let toonEncoded = false;
  if (isToonEnabled(options.toonEncode, options.serverName)) {
    content = content.map((block) => {
      if (block.type !== "text") return block;
      const encoded = toToonIfShorter(block.text);
      if (encoded === block.text) return block;
      toonEncoded = true;
      return text(encoded);
    });
  }
  const bounded = boundText(content, { ...limits, notes: limits.binaries });
  const result: TransformedResult = {
    content: bounded.content,
    isError,
    details: { isError, truncation: bounded.truncation, toonEncoded },
  };
  if (bounded.wholeText !== undefined || limits.binaries.size > 0) {
    result.overflow = { text: bounded.wholeText, omittedBlocks: bounded.omittedBlocks, binaries: limits.binaries };
  }
  return result;
}

/**
 * Keeps the overflow of `result` with `keep` (one file for the whole text, one per binary part) and names the
 * files in its notes. Whatever cannot be kept keeps its note without a file.
 */
export async function keepOverflow(result: TransformedResult, keep: ResultKeeper): Promise<TransformedResult> {
  const { overflow } = result;
  if (!overflow) return result;
  const content = await Promise.all(
    result.content.map(async (block) => {
      const binary = block.type === "text" ? overflow.binaries.get(block) : undefined;
      if (!binary) return block;
      const file = await keep(Buffer.from(binary.data, "base64"), binary.mimeType);
      return file ? text(binary.describe(file)) : block;
    }),
  );
  const { truncation } = result.details;
  if (overflow.text !== undefined && truncation) {
    const file = await keep(overflow.text, "text/plain");
    // The truncation note is always the last block.
    if (file) content[content.length - 1] = text(truncationNote(truncation, overflow.omittedBlocks, file));
  }
  return { ...result, content };
}

// ---------------------------------------------------------------------------------------------
// Content blocks
// ---------------------------------------------------------------------------------------------

function convertBlock(block: unknown, limits: Limits): PiContent[] {
  if (!isJsonObject(block)) return [text("[Unreadable MCP content omitted]")];
  switch (block.type) {
    case "text":
      return [text(typeof block.text === "string" ? block.text : "")];
    case "image":
      return [image(block.data, block.mimeType, "Image", limits)];
    case "audio":
      return [
        binaryNote(block.data, block.mimeType, limits, (file) => {
          const where = file ? `, saved to ${file}` : "";
          return `[Audio: ${mimeOf(block.mimeType)}, ${sizeOfBase64(block.data)}${where}; audio cannot be shown to the model]`;
        }),
      ];
    case "resource":
      return isJsonObject(block.resource)
        ? convertResourceContents(block.resource, true, limits)
        : [text("[Embedded resource without contents omitted]")];
    case "resource_link":
      return [text(describeResourceLink(block))];
    default:
      return [text(`[Unsupported MCP content type ${JSON.stringify(String(block.type)).slice(0, 60)} omitted]`)];
  }
}

function convertResourceContents(contents: Json, withHeader: boolean, limits: Limits): PiContent[] {
  const uri = typeof contents.uri === "string" ? contents.uri : "(no uri)";
  const header = `[Resource: ${uri}]`;
  if (typeof contents.text === "string") return [text(withHeader ? `${header}\n${contents.text}` : contents.text)];
  if (typeof contents.blob === "string") {
    const mimeType = mimeOf(contents.mimeType);
    if (mimeType.startsWith("image/")) {
      const picture = image(contents.blob, mimeType, `Image resource ${uri}`, limits);
      return withHeader && picture.type === "image" ? [text(header), picture] : [picture];
    }
    const size = sizeOfBase64(contents.blob);
    return [
      binaryNote(contents.blob, mimeType, limits, (file) =>
        file
          ? `${header} binary content (${mimeType}, ${size}) saved to ${file}`
          : `${header} binary content (${mimeType}, ${size}) not shown`,
      ),
    ];
  }
  return [text(`${header} without text or binary content`)];
}

function image(data: unknown, mimeType: unknown, label: string, limits: Limits): PiContent {
  if (typeof data !== "string" || data === "" || typeof mimeType !== "string" || mimeType === "") {
    return text(`[${label} without data or type omitted]`);
  }
  if (data.length > limits.maxImageBytes) {
    const reason = `${mimeType}, ${sizeOfBase64(data)}, larger than the ${formatSize(limits.maxImageBytes)} of base64 the model can take`;
    return binaryNote(data, mimeType, limits, (file) =>
      file ? `[${label} not shown (${reason}); saved to ${file}]` : `[${label} omitted: ${reason}]`,
    );
  }
  return { type: "image", data, mimeType };
}

/** A note standing for binary data the model cannot take; the data is kept aside for `keepOverflow`. */
function binaryNote(data: unknown, mimeType: unknown, limits: Limits, describe: (file?: string) => string): TextContent {
  const note = text(describe());
  if (typeof data === "string" && data !== "") limits.binaries.set(note, { data, mimeType: mimeOf(mimeType), describe });
  return note;
}

function describeResourceLink(link: Json): string {
  const label = [link.title, link.name, link.uri].find((value) => typeof value === "string" && value !== "");
  const lines = [`[Resource link: ${label ?? "(unnamed)"}]`, `URI: ${typeof link.uri === "string" ? link.uri : "(none)"}`];
  if (typeof link.mimeType === "string") lines.push(`Type: ${link.mimeType}`);
  if (typeof link.description === "string" && link.description !== "") lines.push(link.description);
  return lines.join("\n");
}

function text(value: string): TextContent {
  return { type: "text", text: value };
}

function mimeOf(value: unknown): string {
  return typeof value === "string" && value !== "" ? value : "unknown type";
}

/** The decoded size of base64 data, without decoding it. */
function sizeOfBase64(data: unknown): string {
  if (typeof data !== "string") return "size unknown";
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return formatSize(Math.max(0, Math.floor((data.length * 3) / 4) - padding));
}

function safeStringify(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return "[Structured content that cannot be shown as JSON omitted]";
  }
}

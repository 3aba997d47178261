/**
 * A view's `ui://` resource as its server answered `resources/read`, checked before anything of it reaches a browser:
 * one entry for the URI, the MCP Apps MIME type, HTML as text or base64, at most MAX_VIEW_BYTES; its `_meta.ui`
 * (CSP, permissions) comes with it. What fails is refused with a reason the user can read.
 */
import type { McpUiResourcePermissions } from "@modelcontextprotocol/ext-apps/app-bridge";
import { isJsonObject } from "../util/guards.ts";
import { isViewMimeType, VIEW_MIME_TYPE } from "./tool-ui.ts";

/** A view is one page with its scripts inlined; the official examples are a few hundred KB. */
export const MAX_VIEW_BYTES = 5 * 1024 * 1024;

export interface ViewResource {
  html: string;
  /** `_meta.ui.csp` as sent (apps/csp.ts checks it). */
  csp?: unknown;
  permissions?: McpUiResourcePermissions;
  prefersBorder?: boolean;
}

/** The resource cannot be shown: `message` says why, for the user. */
export class ViewRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ViewRefused";
  }
}

const PERMISSIONS = ["camera", "microphone", "geolocation", "clipboardWrite"] as const;

export function viewFromRead(uri: string, answer: unknown): ViewResource {
  const contents = isJsonObject(answer) && Array.isArray(answer.contents) ? answer.contents.filter(isJsonObject) : [];
  const entry = contents.find((content) => content.uri === uri) ?? (contents.length === 1 ? contents[0] : undefined);
  if (!entry) throw new ViewRefused(`${uri} came back without its content`);
  const mimeType = typeof entry.mimeType === "string" ? entry.mimeType : "no MIME type";
  if (!isViewMimeType(entry.mimeType)) throw new ViewRefused(`${uri} is ${mimeType}, not an MCP Apps view (${VIEW_MIME_TYPE})`);
  const html = htmlOf(uri, entry);
  // Python's SDK sends `meta` for `_meta`.
  const meta = isJsonObject(entry._meta) ? entry._meta : isJsonObject(entry.meta) ? entry.meta : {};
  const ui = isJsonObject(meta.ui) ? meta.ui : {};
  const view: ViewResource = { html };
  if (ui.csp !== undefined) view.csp = ui.csp;
  const permissions = isJsonObject(ui.permissions) ? ui.permissions : {};
  const granted = PERMISSIONS.filter((name) => isJsonObject(permissions[name]));
  if (granted.length > 0) view.permissions = Object.fromEntries(granted.map((name) => [name, {}]));
  if (typeof ui.prefersBorder === "boolean") view.prefersBorder = ui.prefersBorder;
  return view;
}

function htmlOf(uri: string, entry: Record<string, unknown>): string {
  const tooLarge = (bytes: number) => new ViewRefused(`${uri} is ${megabytes(bytes)}, over the ${megabytes(MAX_VIEW_BYTES)} a view may be`);
  if (typeof entry.text === "string") {
    const bytes = Buffer.byteLength(entry.text);
    if (bytes > MAX_VIEW_BYTES) throw tooLarge(bytes);
    return entry.text;
  }
  if (typeof entry.blob === "string") {
    // Checked before decoding: base64 is 4 characters for 3 bytes.
    if (entry.blob.length > (MAX_VIEW_BYTES / 3) * 4 + 4) throw tooLarge(Math.floor((entry.blob.length / 4) * 3));
    return Buffer.from(entry.blob, "base64").toString("utf8");
  }
  throw new ViewRefused(`${uri} has neither text nor a blob`);
}

function megabytes(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

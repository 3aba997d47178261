/**
 * A tool's `_meta.ui` (MCP Apps, SEP-1865) as a listing sends it, and what it decides: which tools have a view, and
 * who may call them. Read here rather than with ext-apps' `getToolUiResourceUri`, which throws on a bad URI: a
 * listing is untrusted, and one tool's bad view must cost only its view (with a note), never the server's tools.
 * Nothing here loads the app bridge: the listing and the catalog use it on every start.
 */
import type { McpSettings, McpToolAudience, McpToolUi, ServerEntry } from "../types.ts";
import { isJsonObject } from "../util/guards.ts";

/** The extension's id and the view MIME type we render (ext-apps' `EXTENSION_ID`, `RESOURCE_MIME_TYPE`: a test holds them equal). */
export const UI_EXTENSION_ID = "io.modelcontextprotocol/ui";
export const VIEW_MIME_TYPE = "text/html;profile=mcp-app";
/** Is this the views' MIME type, however a server spaces or cases it? */
export function isViewMimeType(mimeType: unknown): boolean {
  return typeof mimeType === "string" && mimeType.replace(/\s/g, "").toLowerCase() === VIEW_MIME_TYPE;
}

/** The key older servers use instead of `_meta.ui.resourceUri`. */
const LEGACY_URI_KEY = "ui/resourceUri";
const AUDIENCES: readonly McpToolAudience[] = ["model", "app"];

/** What the client declares to a server it offers views to (both eras: `capabilities.extensions`). */
export function uiExtension(): Record<string, { mimeTypes: string[] }> {
  return { [UI_EXTENSION_ID]: { mimeTypes: [VIEW_MIME_TYPE] } };
}

/**
 * The view part of a listed tool's `_meta`, or nothing when it has none. A URI that is not `ui://` is left out
 * (`problem` says why); an audience other than `model` and `app` is ignored.
 */
export function readToolUi(toolName: string, meta: unknown): { ui?: McpToolUi; problem?: string } {
  if (!isJsonObject(meta)) return {};
  const nested = isJsonObject(meta.ui) ? meta.ui : {};
  const uri = nested.resourceUri ?? meta[LEGACY_URI_KEY];
  const ui = keptToolUi({ resourceUri: uri, visibility: nested.visibility });
  if (uri === undefined || ui?.resourceUri !== undefined) return ui ? { ui } : {};
  const problem = `tool "${toolName}" names its view ${JSON.stringify(uri)}, not a ui:// resource: it opens no view`;
  return { ...(ui ? { ui } : {}), problem };
}

/** Offered to the model unless its visibility leaves the model out (`["app"]`): the spec's rule for `tools/list`. */
export function offeredToModel(ui: McpToolUi | undefined): boolean {
  return ui?.visibility === undefined || ui.visibility.includes("model");
}

/** May a view call it? Unless its visibility leaves the app out (`["model"]`). */
export function callableByViews(ui: McpToolUi | undefined): boolean {
  return ui?.visibility === undefined || ui.visibility.includes("app");
}

/** `settings.apps` with its defaults: views on, the browser opened. */
export function appsSettings(settings: McpSettings): { enabled: boolean; openBrowser: boolean } {
  const apps = settings.apps;
  if (typeof apps === "boolean") return { enabled: apps, openBrowser: true };
  return { enabled: apps?.enabled !== false, openBrowser: apps?.openBrowser !== false };
}

/** Do this server's tools open views (and is the extension declared to it)? */
export function viewsOffered(settings: McpSettings, server: Pick<ServerEntry, "apps"> | undefined): boolean {
  return appsSettings(settings).enabled && server?.apps !== false;
}

/** The valid parts of a tool's `ui` (from a listing, or read back from the metadata cache: untrusted), or nothing. */
export function keptToolUi(raw: unknown): McpToolUi | undefined {
  if (!isJsonObject(raw)) return undefined;
  const { resourceUri, visibility } = raw;
  const ui: McpToolUi = {};
  if (typeof resourceUri === "string" && resourceUri.startsWith("ui://")) ui.resourceUri = resourceUri;
  if (Array.isArray(visibility)) ui.visibility = AUDIENCES.filter((audience) => visibility.includes(audience));
  return Object.keys(ui).length > 0 ? ui : undefined;
}

/**
 * MCP Apps (SEP-1865): a tool's interactive view, opened in the user's browser. This front door is light: what every
 * start needs (which tools have a view, who may call them, what the client declares to servers) loads with the
 * extension; the page, its server and the official app bridge load with the first view.
 */
export {
  appsSettings,
  callableByViews,
  keptToolUi,
  offeredToModel,
  readToolUi,
  UI_EXTENSION_ID,
  uiExtension,
  VIEW_MIME_TYPE,
  viewsOffered,
} from "./apps/tool-ui.ts";

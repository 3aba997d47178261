/**
 * URLs and HTTP errors as text a person reads in a message: a URL without what may carry a secret, an error page as
 * one line. Both the connection code and `/mcp status` word them, so they live here.
 */
import { oneLine, truncate } from "./text.ts";

/** Scheme, host and path: no user info, no query (either may carry a secret). */
export function safeUrl(url: string | undefined): string {
  try {
    const parsed = new URL(url ?? "");
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return "the server URL";
  }
}

const HTML_START = /<(?:!doctype|html|head|body)\b/i;
const BRIEF_BODY_CHARS = 80;
const BRIEF_MESSAGE_CHARS = 300;

/**
 * An HTTP error as one short line: the SDK puts the whole response body in its message, and a proxy's or web
 * server's error page is dozens of lines of HTML. A page is given by its title (else its first words).
 */
export function briefHttpError(message: string): string {
  const htmlAt = message.search(HTML_START);
  const text = htmlAt < 0 ? message : `${message.slice(0, htmlAt)}${describeHtmlPage(message.slice(htmlAt))}`;
  return oneLine(text, BRIEF_MESSAGE_CHARS, "excerpt");
}

function describeHtmlPage(html: string): string {
  const title = /<title[^>]*>([^<]*)<\/title>/i.exec(html)?.[1]?.trim();
  const words = html
    .replace(/<(script|style)[\s\S]*?<\/\1>/gi, " ")
    .replace(/<[^>]*>/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  return `${truncate(title || words, BRIEF_BODY_CHARS)} (an HTML page)`;
}

/**
 * A view's Content Security Policy, built from what its resource declares (`_meta.ui.csp`) and nothing else: the
 * spec's restrictive default, opened only for the declared domains. The header is sent with the view's sandbox page,
 * so the view cannot lift it (a `<meta>` policy could only add to it).
 *
 * A declared domain must be an `https://` or `wss://` origin (a host, an optional port), where a wildcard may stand
 * for the subdomains of a registered name (`https://*.example.com`); `*`, a scheme alone, plain `http://`, a wildcard
 * over a whole top-level domain, paths and anything that could break out of the header are refused, each with its
 * reason, and the view opens with the rest.
 */
import type { McpUiResourceCsp } from "@modelcontextprotocol/ext-apps/app-bridge";
import { isJsonObject } from "../util/guards.ts";

/** The declared lists, in the header's words. */
const LISTS = ["connectDomains", "resourceDomains", "frameDomains", "baseUriDomains"] as const;

const ORIGIN = /^(https|wss):\/\/((?:\*\.)?[a-z0-9-]+(?:\.[a-z0-9-]+)*)(:\d{1,5})?\/?$/i;

export interface ViewPolicy {
  /** The `Content-Security-Policy` header. */
  header: string;
  /** What was allowed of the declaration (told to the view as the host's sandbox settings). */
  approved: McpUiResourceCsp;
  /** One line per refused entry: what it was and why. */
  refused: string[];
}

/**
 * The policy of a view whose resource declared `declared` (unchecked: as the server sent it), framed only by
 * `frameAncestor` (the host page's origin).
 */
export function viewPolicy(declared: unknown, frameAncestor: string): ViewPolicy {
  const approved: McpUiResourceCsp = {};
  const refused: string[] = [];
  const csp = isJsonObject(declared) ? declared : {};
  if (declared !== undefined && !isJsonObject(declared)) refused.push(`_meta.ui.csp is not an object: ignored`);
  for (const list of LISTS) {
    const entries = csp[list];
    if (entries === undefined) continue;
    if (!Array.isArray(entries)) {
      refused.push(`${list} is not a list: ignored`);
      continue;
    }
    const kept = entries.flatMap((entry) => {
      const reason = refusal(entry);
      if (reason) refused.push(`${list} ${JSON.stringify(entry)}: ${reason}`);
      return reason ? [] : [String(entry).replace(/\/$/, "").toLowerCase()];
    });
    if (kept.length > 0) approved[list] = [...new Set(kept)];
  }
  return { header: header(approved, frameAncestor), approved, refused };
}

/** Why an entry cannot be a source of the policy, or nothing when it can. */
function refusal(entry: unknown): string | undefined {
  if (typeof entry !== "string") return "not a string";
  if (entry.trim() === "*" || /^[a-z]+:\/\/\*\/?$/i.test(entry)) return "a wildcard that allows every domain";
  if (/^[a-z][a-z0-9+.-]*:$/i.test(entry)) return "a whole scheme, not a domain";
  const match = ORIGIN.exec(entry);
  if (!match) {
    if (/^http:\/\//i.test(entry)) return "not https (only https:// and wss:// domains are allowed)";
    return "not a domain (https://host or wss://host, with an optional port)";
  }
  const host = match[2]!;
  if (host.startsWith("*.") && !host.slice(2).includes(".")) return "a wildcard over a whole top-level domain";
  if (match[3] && Number(match[3].slice(1)) > 65_535) return "not a port";
  return undefined;
}

const sources = (list: readonly string[] | undefined, none: string): string => (list && list.length > 0 ? list.join(" ") : none);

function header(csp: McpUiResourceCsp, frameAncestor: string): string {
  const resources = (csp.resourceDomains ?? []).join(" ");
  const withResources = (base: string) => `${base} ${resources}`.trim();
  const directives: Record<string, string> = {
    "default-src": "'none'",
    "script-src": withResources("'self' 'unsafe-inline'"),
    "style-src": withResources("'self' 'unsafe-inline'"),
    "img-src": withResources("'self' data:"),
    "font-src": withResources("'self' data:"),
    "media-src": withResources("'self' data:"),
    "connect-src": sources(csp.connectDomains, "'none'"),
    "frame-src": sources(csp.frameDomains, "'none'"),
    "object-src": "'none'",
    "base-uri": sources(csp.baseUriDomains, "'self'"),
    // A form posted elsewhere would carry data past connect-src.
    "form-action": "'none'",
    // Only the host page frames the sandbox page (and the sandbox page its view).
    "frame-ancestors": `'self' ${frameAncestor}`,
  };
  return Object.entries(directives)
    .map(([name, value]) => `${name} ${value}`)
    .join("; ");
}

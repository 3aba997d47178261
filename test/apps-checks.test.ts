/**
 * What MCP Apps checks before anything of a view reaches the browser: its Content-Security-Policy, built from the
 * resource's declaration and nothing else (each refused entry with its reason), and its resource (one page of the
 * MCP Apps MIME type, text or base64, bounded in size).
 */
import { describe, expect, it } from "vitest";
import { viewPolicy } from "../apps/csp.ts";
import { MAX_VIEW_BYTES, ViewRefused, viewFromRead } from "../apps/view-resource.ts";

const HOST = "http://127.0.0.1:4100";
const directives = (header: string) =>
  Object.fromEntries(header.split("; ").map((part) => [part.split(" ")[0], part.slice(part.indexOf(" ") + 1)]));

describe("a view's policy", () => {
  it("without a declaration: the spec's restrictive default (no connection, no frame), framed only by the host page", () => {
    const { header, approved, refused } = viewPolicy(undefined, HOST);
    expect(directives(header)).toEqual({
      "default-src": "'none'",
      "script-src": "'self' 'unsafe-inline'",
      "style-src": "'self' 'unsafe-inline'",
      "img-src": "'self' data:",
      "font-src": "'self' data:",
      "media-src": "'self' data:",
      "connect-src": "'none'",
      "frame-src": "'none'",
      "object-src": "'none'",
      "base-uri": "'self'",
      "form-action": "'none'",
      "frame-ancestors": `'self' ${HOST}`,
    });
    expect([approved, refused]).toEqual([{}, []]);
  });

  it("declared https and wss domains open exactly their directives", () => {
    const { header, approved } = viewPolicy(
      {
        connectDomains: ["https://api.example.com", "wss://live.example.com:8443/"],
        resourceDomains: ["https://*.cdn.example.net"],
        frameDomains: ["https://www.youtube.com"],
        baseUriDomains: ["https://cdn.example.com"],
      },
      HOST,
    );
    const csp = directives(header);
    expect(csp["connect-src"]).toBe("https://api.example.com wss://live.example.com:8443");
    expect(csp["script-src"]).toBe("'self' 'unsafe-inline' https://*.cdn.example.net");
    expect(csp["img-src"]).toBe("'self' data: https://*.cdn.example.net");
    expect(csp["frame-src"]).toBe("https://www.youtube.com");
    expect(csp["base-uri"]).toBe("https://cdn.example.com");
    expect(approved.connectDomains).toEqual(["https://api.example.com", "wss://live.example.com:8443"]);
  });

  it("refuses wildcards, plain http, whole schemes, paths and injections, each with its reason; the rest applies", () => {
    const { header, approved, refused } = viewPolicy(
      {
        connectDomains: [
          "*",
          "https://*",
          "https://*.com",
          "http://plain.example",
          "https:",
          "https://api.example.com/v1",
          "https://a.example; script-src *",
          "https://ok.example",
          42,
        ],
        frameDomains: "https://one.example",
      },
      HOST,
    );
    expect(refused).toEqual([
      'connectDomains "*": a wildcard that allows every domain',
      'connectDomains "https://*": a wildcard that allows every domain',
      'connectDomains "https://*.com": a wildcard over a whole top-level domain',
      'connectDomains "http://plain.example": not https (only https:// and wss:// domains are allowed)',
      'connectDomains "https:": a whole scheme, not a domain',
      'connectDomains "https://api.example.com/v1": not a domain (https://host or wss://host, with an optional port)',
      'connectDomains "https://a.example; script-src *": not a domain (https://host or wss://host, with an optional port)',
      "connectDomains 42: not a string",
      "frameDomains is not a list: ignored",
    ]);
    expect(approved).toEqual({ connectDomains: ["https://ok.example"] });
    expect(directives(header)["connect-src"]).toBe("https://ok.example");
    expect(directives(header)["frame-src"]).toBe("'none'");
  });
});

describe("a view's resource", () => {
  const URI = "ui://get-time/app.html";
  const read = (content: Record<string, unknown>) => ({ contents: [{ uri: URI, ...content }] });
  const refusal = (answer: unknown) => {
    try {
      viewFromRead(URI, answer);
    } catch (error) {
      return error instanceof ViewRefused ? error.message : `not refused: ${error}`;
    }
    return "accepted";
  };

  it("HTML of the MCP Apps type, as text or base64, with its CSP, permissions and border preference", () => {
    const meta = { ui: { csp: { connectDomains: ["https://a.example"] }, permissions: { camera: {}, bogus: {} }, prefersBorder: false } };
    expect(viewFromRead(URI, read({ mimeType: "text/html;profile=mcp-app", text: "<p>hi</p>", _meta: meta }))).toEqual({
      html: "<p>hi</p>",
      csp: { connectDomains: ["https://a.example"] },
      permissions: { camera: {} },
      prefersBorder: false,
    });
    const blob = Buffer.from("<p>blob</p>").toString("base64");
    expect(viewFromRead(URI, read({ mimeType: "text/html; profile=mcp-app", blob })).html).toBe("<p>blob</p>");
  });

  it("refuses what is not a view, too large, or missing, saying why", () => {
    expect(refusal(read({ mimeType: "text/plain", text: "x" }))).toBe(
      `${URI} is text/plain, not an MCP Apps view (text/html;profile=mcp-app)`,
    );
    expect(refusal(read({ text: "x" }))).toBe(`${URI} is no MIME type, not an MCP Apps view (text/html;profile=mcp-app)`);
    expect(refusal(read({ mimeType: "text/html;profile=mcp-app", text: "x".repeat(MAX_VIEW_BYTES + 1) }))).toBe(
      `${URI} is 5.0 MB, over the 5.0 MB a view may be`,
    );
    expect(refusal(read({ mimeType: "text/html;profile=mcp-app", blob: "A".repeat(MAX_VIEW_BYTES * 2) }))).toBe(
      `${URI} is 7.5 MB, over the 5.0 MB a view may be`,
    );
    expect(refusal(read({ mimeType: "text/html;profile=mcp-app" }))).toBe(`${URI} has neither text nor a blob`);
    expect(refusal({ contents: [] })).toBe(`${URI} came back without its content`);
    expect(
      refusal({
        contents: [
          { uri: "ui://other", text: "a" },
          { uri: "ui://another", text: "b" },
        ],
      }),
    ).toBe(`${URI} came back without its content`);
  });
});

/**
 * The README is a front page and the reference lives in docs/, one page per topic: a link that points nowhere (a
 * moved page, a renamed heading) would strand a reader, so every relative link and `#anchor` in README.md and
 * docs/*.md must resolve, with anchors made from headings by GitHub's rules.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "./helpers/hosts.ts";

const README = join(REPO_ROOT, "README.md");
const DOCS = join(REPO_ROOT, "docs");
/** Room for a newcomer's five minutes: the front page says what, how to install, the first server, where to read on. */
const README_MAX_LINES = 300;

const pages = [README, ...readdirSync(DOCS).flatMap((name) => (name.endsWith(".md") ? [join(DOCS, name)] : []))];

/** Markdown outside fenced code blocks, with inline code spans blanked: links and headings in code are not either. */
function prose(markdown: string): string[] {
  let fenced = false;
  return markdown.split("\n").map((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return "";
    }
    return fenced ? "" : line.replace(/(`+)[^`]*?\1/g, (span) => " ".repeat(span.length));
  });
}

/** A heading's anchor as GitHub makes it: the text without markup, lower-cased, punctuation dropped, spaces → `-`. */
function githubSlug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/`/g, "")
    .replace(/<[^>]+>/g, "");
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

/** Every anchor a page has: its headings' slugs, a repeated one numbered `-1`, `-2`… as GitHub does. */
function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const slug = githubSlug(heading[1]);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

interface Link {
  file: string;
  line: number;
  target: string;
}

function linksOf(file: string): Link[] {
  return prose(readFileSync(file, "utf8")).flatMap((text, index) =>
    [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => ({ file, line: index + 1, target: match[1] })),
  );
}

/** Why a link does not resolve, or undefined when it does. External links are not followed. */
function brokenBecause(link: Link): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(link.target)) return undefined;
  const [path, anchor] = link.target.split("#", 2);
  const target = path === "" ? link.file : resolve(dirname(link.file), decodeURIComponent(path));
  if (!existsSync(target)) return `no file ${relative(REPO_ROOT, target)}`;
  if (anchor === undefined) return undefined;
  if (statSync(target).isDirectory() || !target.endsWith(".md")) return `an anchor into ${relative(REPO_ROOT, target)}, which has none`;
  return anchorsOf(target).has(decodeURIComponent(anchor).toLowerCase())
    ? undefined
    : `no heading #${anchor} in ${relative(REPO_ROOT, target)}`;
}

describe("README and docs/", () => {
  it("every relative link and anchor resolves", () => {
    const broken = pages.flatMap(linksOf).flatMap((link) => {
      const reason = brokenBecause(link);
      return reason ? [`${relative(REPO_ROOT, link.file)}:${link.line}: (${link.target}) ${reason}`] : [];
    });
    expect(broken).toEqual([]);
  });

  it(`the README stays a front page: at most ${README_MAX_LINES} lines`, () => {
    expect(readFileSync(README, "utf8").trimEnd().split("\n").length).toBeLessThanOrEqual(README_MAX_LINES);
  });

  it("every docs page is linked from the README's list of pages", () => {
    const readmeTargets = new Set(linksOf(README).map((link) => resolve(REPO_ROOT, link.target.split("#")[0])));
    const unlisted = pages.slice(1).filter((page) => !readmeTargets.has(page));
    expect(unlisted.map((page) => relative(REPO_ROOT, page))).toEqual([]);
  });

  it("the README's shell commands copy as they are: no <placeholder> left for the reader to replace", () => {
    const blocks = [...readFileSync(README, "utf8").matchAll(/^```(?:sh|bash)\n([\s\S]*?)^```/gm)].map((block) => block[1]!);
    const commands = blocks.flatMap((block) => block.split("\n")).map((line) => line.replace(/#.*$/, ""));
    expect(commands.filter((line) => /<[^>]+>/.test(line))).toEqual([]);
  });

  it("makes anchors as GitHub does", () => {
    expect(githubSlug("OAuth (sign-in)")).toBe("oauth-sign-in");
    expect(githubSlug("Scripts (codemode on Pi 0.73 and 0.87)")).toBe("scripts-codemode-on-pi-073-and-087");
    expect(githubSlug("Coming from Pi's built-in MCP (Pi ≥ 0.99)")).toBe("coming-from-pis-built-in-mcp-pi--099");
    expect(githubSlug("The `settings.search` field and [links](x.md)")).toBe("the-settingssearch-field-and-links");
    expect(githubSlug("snake_case Über")).toBe("snake_case-über");
  });
});

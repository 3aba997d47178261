/**
 * The shape of the product's imports, type imports included. Every relative import counts: `import`,
 * `import type`, `export … from`, and `import("…")` (a lazy load, or a type taken from one).
 * - No circle: a circle makes the modules one in all but name (neither can be read, changed or loaded without the
 *   other), and with value imports the load order decides which of them sees the other half-initialised.
 * - Areas keep their insides: the top-level modules are the front doors, each area folder (`config/`, `search/`, …)
 *   holds what stands behind them. A module in an area imports its own area, `util/` and front doors, never another
 *   area's modules: what one area needs of another goes through that area's front door, so an area can be
 *   rearranged without reading the rest.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

type ImportGraph = ReadonlyMap<string, readonly string[]>;

const ROOT = join(import.meta.dirname, "..");
/** Top-level files that are not part of the extension. */
const NOT_PRODUCT = new Set(["vitest.config.ts"]);

/** Folders of shared helpers any module may import: they belong to no area. */
const SHARED_FOLDERS = new Set(["util"]);
/** Folders beside the product that hold no product code. */
const NOT_PRODUCT_FOLDERS = new Set(["node_modules", "test", "bench", "conformance", "demo", "examples"]);

/**
 * The relative modules a source file imports, as paths from the repository root (comments and strings are not
 * imports). `importer` is the importing file's own path from the root.
 */
function relativeImports(source: string, importer = "x.ts"): string[] {
  const { importedFiles } = ts.preProcessFile(source, true, true);
  return importedFiles
    .map((file) => file.fileName)
    .filter((name) => name.startsWith("./") || name.startsWith("../"))
    .map((name) => normalize(join(dirname(importer), name)));
}

/** The product's modules: the top-level files and those of the area folders, by path from the root. */
function productModules(): string[] {
  const top = readdirSync(ROOT, { withFileTypes: true });
  const files = top.filter((entry) => entry.isFile()).map((entry) => entry.name);
  const folders = top.filter((entry) => entry.isDirectory() && !entry.name.startsWith(".") && !NOT_PRODUCT_FOLDERS.has(entry.name));
  const inFolders = folders.flatMap((folder) => readdirSync(join(ROOT, folder.name)).map((name) => `${folder.name}/${name}`));
  return [...files, ...inFolders].filter((name) => name.endsWith(".ts") && !name.endsWith(".d.ts") && !NOT_PRODUCT.has(name));
}

function productGraph(): ImportGraph {
  return new Map(productModules().map((name) => [name, relativeImports(readFileSync(join(ROOT, name), "utf8"), name)]));
}

/** The area folder a module is in; undefined for a front door (a top-level module). */
function areaOf(module: string): string | undefined {
  const slash = module.indexOf("/");
  return slash < 0 ? undefined : module.slice(0, slash);
}

/** Every import from inside one area into another area's modules, as `importer → imported`. */
function findAreaBreaches(graph: ImportGraph): string[] {
  const breaches: string[] = [];
  for (const [module, imports] of graph) {
    const area = areaOf(module);
    if (area === undefined || SHARED_FOLDERS.has(area)) continue;
    for (const imported of imports) {
      const other = areaOf(imported);
      if (other !== undefined && other !== area && !SHARED_FOLDERS.has(other)) breaches.push(`${module} → ${imported}`);
    }
  }
  return breaches.sort();
}

/** Every circle a depth-first walk closes, as `a.ts → b.ts → a.ts`, each named once. */
function findCycles(graph: ImportGraph): string[] {
  const cycles = new Set<string>();
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (module: string): void => {
    const onPath = path.indexOf(module);
    if (onPath >= 0) {
      cycles.add(describeCycle(path.slice(onPath)));
      return;
    }
    if (done.has(module)) return;
    path.push(module);
    for (const imported of graph.get(module) ?? []) visit(imported);
    path.pop();
    done.add(module);
  };
  for (const module of [...graph.keys()].sort()) visit(module);
  return [...cycles];
}

/** A circle from its alphabetically first module, so the same circle found from elsewhere reads the same. */
function describeCycle(modules: string[]): string {
  const first = modules.indexOf([...modules].sort()[0]!);
  const rotated = [...modules.slice(first), ...modules.slice(0, first)];
  return [...rotated, rotated[0]].join(" → ");
}

describe("import graph", () => {
  it("has no circle among the product modules", () => {
    const graph = productGraph();
    expect(graph.size).toBeGreaterThan(50);
    expect(graph.get("server-manager.ts")).toContain("connection/session.ts");
    expect(findCycles(graph)).toEqual([]);
  });

  it("has no import from one area into another's modules, past its front door", () => {
    const graph = productGraph();
    expect(graph.get("config/entry.ts")).toContain("util/guards.ts");
    expect(findAreaBreaches(graph)).toEqual([]);
  });

  it("holds the front doors only at the top level", () => {
    // 23: apps.ts (MCP Apps: views of tool results), registry.ts (the MCP Registry) and tasks.ts (tool calls run as
    // tasks) joined as front doors of their areas.
    expect(productModules().filter((module) => areaOf(module) === undefined).length).toBeLessThanOrEqual(23);
  });

  it("finds a module reaching into another area, and lets front doors, util/ and its own area through", () => {
    const graph = new Map([
      ["config.ts", ["config/entry.ts", "search/words.ts"]],
      ["config/entry.ts", ["config/problems.ts", "util/guards.ts", "types.ts"]],
      ["config/apply.ts", ["search/tool-index.ts", "tool-search.ts"]],
      ["util/guards.ts", ["config/problems.ts"]],
      ["search/words.ts", ["search/synonyms.ts"]],
    ]);
    expect(findAreaBreaches(graph)).toEqual(["config/apply.ts → search/tool-index.ts"]);
  });

  it("counts type imports, re-exports and lazy loads, not imports named in comments or strings", () => {
    const source = [
      `import type { A } from "./a.ts";`,
      `import {\n  b,\n} from "./b.ts";`,
      `export { c } from "./c.ts";`,
      `export * from "./d.ts";`,
      `type E = typeof import("./e.ts");`,
      `const f = () => import("./f.ts");`,
      `import { g } from "node:fs";`,
      `// import { h } from "./h.ts";`,
      `const i = 'import("./i.ts")';`,
    ].join("\n");
    expect(relativeImports(source)).toEqual(["a.ts", "b.ts", "c.ts", "d.ts", "e.ts", "f.ts"]);
    expect(relativeImports(`import { a } from "../a.ts";\nimport { b } from "./b.ts";`, "config/entry.ts")).toEqual([
      "a.ts",
      "config/b.ts",
    ]);
  });

  it("names each circle once, whichever module the walk met it from", () => {
    const graph = new Map([
      ["a.ts", ["b.ts"]],
      ["b.ts", ["c.ts", "d.ts"]],
      ["c.ts", ["a.ts"]],
      ["d.ts", []],
      ["e.ts", ["e.ts"]],
      ["f.ts", ["b.ts"]],
    ]);
    expect(findCycles(graph)).toEqual(["a.ts → b.ts → c.ts → a.ts", "e.ts → e.ts"]);
    expect(
      findCycles(
        new Map([
          ["x.ts", ["y.ts"]],
          ["y.ts", ["z.ts"]],
          ["z.ts", []],
        ]),
      ),
    ).toEqual([]);
  });
});

/**
 * No import circle among the product modules (the top-level *.ts files), type imports included: a circle makes the
 * two modules one in all but name (neither can be read, changed or loaded without the other), and with value imports
 * the load order decides which of them sees the other half-initialised. Every relative import counts: `import`,
 * `import type`, `export … from`, and `import("…")` (a lazy load, or a type taken from one).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, normalize } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

type ImportGraph = ReadonlyMap<string, readonly string[]>;

const ROOT = join(import.meta.dirname, "..");
/** Top-level files that are not part of the extension. */
const NOT_PRODUCT = new Set(["vitest.config.ts"]);

/** The relative modules a source file imports, by file name (comments and strings are not imports). */
function relativeImports(source: string): string[] {
  const { importedFiles } = ts.preProcessFile(source, true, true);
  return importedFiles.map((file) => file.fileName).filter((name) => name.startsWith("./")).map((name) => normalize(name));
}

function productGraph(): ImportGraph {
  const modules = readdirSync(ROOT).filter((name) => name.endsWith(".ts") && !name.endsWith(".d.ts") && !NOT_PRODUCT.has(name));
  return new Map(modules.map((name) => [name, relativeImports(readFileSync(join(ROOT, name), "utf8"))]));
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
    expect(graph.get("server-manager.ts")).toContain("connection-common.ts");
    expect(findCycles(graph)).toEqual([]);
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
    expect(findCycles(new Map([["x.ts", ["y.ts"]], ["y.ts", ["z.ts"]], ["z.ts", []]]))).toEqual([]);
  });
});

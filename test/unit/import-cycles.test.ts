import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/*
 * No runtime import cycles in the code that ships (src, functions, infra, statemachines,
 * bin): a cycle makes module initialisation order-dependent and ties two files into one
 * unit. Type-only imports are erased and do not count; dynamic imports (`await
 * import('…')`) do, since they load the module at run time.
 */
const root = fileURLToPath(new URL('../../', import.meta.url));
const FOLDERS = ['src', 'functions', 'infra', 'statemachines', 'bin'];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.(ts|js|mjs)$/.test(e.name) && !e.name.endsWith('.d.ts'))
    .map((e) => join(e.parentPath, e.name));
}

/** The relative modules a file loads at run time. */
function runtimeImports(file: string, text: string): string[] {
  const specifiers = [
    ...text.matchAll(/^\s*import\s+(?!type\b)(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]/gm),
    ...text.matchAll(/^\s*export\s+(?!type\b)[^'";]*?\s+from\s+['"]([^'"]+)['"]/gm),
    ...text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g),
  ].map((m) => m[1]!);
  return specifiers
    .filter((s) => s.startsWith('.'))
    .map((s) => resolve(dirname(file), s))
    .map(
      (p) =>
        [p.replace(/\.js$/, '.ts'), p, `${p}.ts`, join(p, 'index.ts')].find((c) => existsSync(c)) ??
        p.replace(/\.js$/, '.ts'),
    );
}

/** Strongly connected components of more than one module (or a module importing itself). */
function cycles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    indices.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!indices.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, indices.get(w)!));
    }
    if (low.get(v) === indices.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v))
        found.push(component.map((f) => relative(root, f)).sort());
    }
  };
  for (const v of graph.keys()) if (!indices.has(v)) visit(v);
  return found;
}

describe('imports', () => {
  it('have no runtime cycle in the code that ships', () => {
    const graph = new Map<string, string[]>();
    for (const folder of FOLDERS)
      for (const file of sources(join(root, folder))) graph.set(file, runtimeImports(file, readFileSync(file, 'utf8')));
    expect(graph.size).toBeGreaterThan(300);
    expect(cycles(graph)).toEqual([]);
  });

  it('the check sees a cycle through a dynamic import and ignores type-only imports', () => {
    const a = join(root, 'src/a.ts');
    const b = join(root, 'src/b.ts');
    expect(runtimeImports(a, "import type { X } from './b.js';\nexport type { Y } from './b.js';")).toEqual([]);
    const graph = new Map([
      [a, runtimeImports(a, "const m = await import('./b.js');")],
      [b, runtimeImports(b, "import { x } from './a.js';")],
    ]);
    expect(cycles(graph)).toEqual([['src/a.ts', 'src/b.ts']]);
  });
});

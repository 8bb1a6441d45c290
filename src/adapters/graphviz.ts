import { Graphviz } from '@hpcc-js/wasm-graphviz';

/**
 * Graphviz compiled to WebAssembly (no binary, no browser): DOT to SVG with the `dot`
 * layout, for the flows' pictures (src/docs/flow-pictures/). Loaded once per process. The
 * version is pinned in package.json: the pictures are compared byte for byte with what it
 * draws (test/unit/flow-pictures-drift.test.ts).
 */
let loaded: Promise<Graphviz> | undefined;

export async function dotToSvg(dot: string): Promise<string> {
  loaded ??= Graphviz.load();
  return (await loaded).dot(dot);
}

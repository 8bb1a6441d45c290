import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CUT_POINTS } from '../../src/cut-points.js';
import { flowDots, pictureFiles, PICTURES_DIR } from '../../src/docs/flow-pictures/generate.js';
import { REPO_ROOT } from '../../src/local/asl.js';
import { FLOWS } from '../../src/registry/flows.js';

/**
 * docs/pictures/ is generated (`npm run docs:pictures`): every flow has its picture, each
 * byte for byte what its ASL draws now, and each marks every cut point the catalogue says
 * the flow's steps cross. A flow edited without redrawing fails here, naming the command.
 */
const onDisk = (path: string): string | undefined => {
  try {
    return readFileSync(`${REPO_ROOT}${path}`, 'utf8');
  } catch {
    return undefined;
  }
};

describe('the flows, drawn (docs/pictures/)', () => {
  it('every picture and the index are what `npm run docs:pictures` draws from the ASL now', async () => {
    const files = await pictureFiles();
    expect([...files.keys()].filter((p) => p.endsWith('.svg'))).toHaveLength(FLOWS.length);
    const stale = [...files].filter(([path, text]) => onDisk(path) !== text).map(([path]) => path);
    expect(stale, 'run `npm run docs:pictures` and commit docs/pictures/').toEqual([]);
  }, 60_000);

  it("each flow's picture marks every cut point the catalogue names for the flow, and only those", () => {
    for (const [flow, dot] of flowDots()) {
      const marked = new Set([...dot.matchAll(/✂ ([a-z0-9.-]+)/g)].map((m) => m[1]));
      // A child flow's cut points are in the child's own picture; its Task says it starts it.
      const children = FLOWS.filter((f) => dot.includes(`starts ${f.name} and waits`)).map((f) => f.name);
      const own = CUT_POINTS.filter(
        (c) => c.flows.includes(flow) && !children.some((child) => c.flows.includes(child)),
      ).map((c) => c.name);
      expect([...marked].sort(), flow).toEqual(expect.arrayContaining([...own].sort()));
      for (const cut of marked) expect(CUT_POINTS.find((c) => c.name === cut)?.flows, `${flow} ${cut}`).toContain(flow);
    }
  });

  it('the index links every picture', () => {
    const index = onDisk(`${PICTURES_DIR}/README.md`) ?? '';
    for (const f of FLOWS) expect(index).toContain(`(${f.name}.svg)`);
  });
});

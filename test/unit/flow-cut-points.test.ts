import { describe, expect, it } from 'vitest';
import { CUT_POINTS } from '../../src/cut-points.js';
import { LOCAL_CUT_POINTS } from '../../src/local/cut-points.js';
import { DELIVERY_CUT_POINTS } from '../../src/delivery/cut-points.js';
import { PUBLICATION_CUT_POINTS } from '../../src/domain/publication/cut-points.js';
import { flowCutPoints, mapCutPoints } from '../../src/registry/flow-cut-points.js';
import { FLOWS, STEPS } from '../../src/registry/index.js';
import { everyCutPoint } from '../../src/registry/step-entry.js';
import { task } from '../../statemachines/spec/task.js';

/**
 * One order, one place: a flow's cut points come from its spec (the registry steps' cutPoints
 * along the generated ASL, src/registry/flow-cut-points.ts), and as a set they are exactly
 * the catalogue's places for that flow (src/cut-points.ts, which the reach tests
 * test/integration/cut-point-reach-*.test.ts see fire). A step whose cut points the
 * catalogue does not list for a flow, or a cut point the catalogue lists that no step of
 * the flow names, fails here naming both.
 */
const catalogued = (flow: string): string[] =>
  CUT_POINTS.filter((c) => c.flows.includes(flow))
    .map((c) => c.name)
    .sort();

describe('flowCutPoints', () => {
  it.each(FLOWS.map((f) => f.name))('%s: the registry steps along its spec cross what the catalogue lists', (flow) => {
    const derived = flowCutPoints(flow);
    expect(new Set(derived).size, `${flow}: each cut point once`).toBe(derived.length);
    const listed = catalogued(flow);
    const missing = listed.filter((c) => !derived.includes(c));
    const unlisted = derived.filter((c) => !listed.includes(c));
    expect(
      { missing, unlisted },
      `${flow}: 'missing' the catalogue lists but no step of the flow names (src/registry/*-steps.ts cutPoints); 'unlisted' a step names but the catalogue does not (src/cut-points.ts)`,
    ).toEqual({ missing: [], unlisted: [] });
  });

  it('takes the order of the spec: the success path, then the other Tasks, then the Map Run results', () => {
    const D = DELIVERY_CUT_POINTS;
    const window = flowCutPoints('deliver-window');
    expect(window.slice(0, 4)).toEqual([D.custodyAcquire, D.createStaging, D.stagingRecord, D.planPut]);
    expect(window.at(-1)).toBe(LOCAL_CUT_POINTS.mapRunResultWrite);
    // The part's load is the route's publication mode's: a SQL load for deliver-window, an INSERT for publish-clickhouse.
    expect(window).toContain(D.loadChunk);
    expect(window).not.toContain(PUBLICATION_CUT_POINTS.loadInsert);
    expect(flowCutPoints('publish-clickhouse')).not.toContain(D.loadChunk);
    expect(mapCutPoints('deliver-window', 'ExtractLoadParts')).toEqual([
      D.partClaim,
      D.chunkPut,
      D.loadChunk,
      D.partReceipt,
      LOCAL_CUT_POINTS.mapRunResultWrite,
    ]);
    // A Task that starts a child flow crosses the child's cut points, in the order the Tasks start them.
    expect(flowCutPoints('stream-maintain')).toEqual([
      ...new Set([
        ...flowCutPoints('stream-materialize'),
        ...flowCutPoints('stream-compact'),
        ...flowCutPoints('stream-gc'),
      ]),
    ]);
  });

  it('every step names cut points of the catalogue', () => {
    const names = new Set(CUT_POINTS.map((c) => c.name));
    for (const step of STEPS) {
      for (const cut of everyCutPoint(step.cutPoints)) expect(names, `${step.handler}: ${cut}`).toContain(cut);
    }
  });

  it('refuses a Task whose comment names a cut point its step does not cross', () => {
    expect(() => task({ comment: 'Cut point: stream.trim.cas.', lambda: 'stream/trim' })).not.toThrow();
    expect(() => task({ comment: 'Cut point: stream.append.wal.', lambda: 'stream/trim' })).toThrow(
      "functions/stream/trim: its Task's comment names stream.append.wal, which the step does not cross",
    );
  });
});

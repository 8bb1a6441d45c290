import { beforeAll, describe, expect, it } from 'vitest';
import { compactLane } from '../../src/stream/compaction/compact-lane.js';
import { GENERATION_CUT_POINTS } from '../../src/generation/cut-points.js';
import { readStream } from '../../src/stream/read.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { matrixCutPoints } from '../support/matrix-cut-points.js';
import { MATRIX_LANE, withKinds } from '../support/matrix-lane.js';
import { expectLaneInvariant } from '../support/stream-fixture.js';
import { compactionsOf, expectCompacted, laneWithRanges, textOf } from './stream-compaction-world.js';

/**
 * Compaction (issue #11; docs/rules.md#materialization-failures): every cut point a
 * compaction run crosses × every fault kind, persistent and one-shot, then a clean re-run.
 * The invariant: every committed record readable exactly once in order, exactly one
 * committed compaction for the run (one generation, slot 0, no second one allocated), the
 * output one verified batch of the run's records, the mark past it, the task cleaned up.
 * (generation.object.put is not crossed: the compaction writes its one-batch output at
 * stream.compact.object and the mechanism's write step reuses it by exact identity.)
 */
let stores: TestStores;
beforeAll(async () => {
  stores = await freshStores();
});

/** The flow's cut points in its spec's order (src/registry/flow-cut-points.ts): its one Task's run. */
const RUN_CUT_POINTS = matrixCutPoints('stream-compact', {
  [GENERATION_CUT_POINTS.abortCas]:
    "one run never aborts its own generation: two runs racing over one start do (the later one's), cut-point-reach-stream.test.ts",
});

const CASES = [
  ...withKinds(RUN_CUT_POINTS).map(([c, k]) => [c, k, '*'] as const),
  ...withKinds(RUN_CUT_POINTS, 3).map(([c, k]) => [c, k, ''] as const),
];

describe(`compaction under faults (${MATRIX_LANE})`, () => {
  it.each(CASES)('%s × %s%s, then a clean re-run', async (cut, kind, persistent) => {
    const { lane, acknowledged } = await laneWithRanges(stores.ports, `c-${kind}`, 4);
    const all = acknowledged.flatMap((a) => a.records);
    const runEnd = acknowledged.slice(0, 3).reduce((n, a) => n + a.records.length, 0);
    stores.faults.arm(`${cut}:${kind}${kind === 'delay' ? '=5' : ''}${persistent}`);
    const faulted = await compactLane({ ...lane, maxRanges: 3 }, stores.ports).catch((error: unknown) => ({ error }));
    stores.faults.disarm();
    expect(faulted).toBeDefined();
    const clean = await compactLane({ ...lane, maxRanges: 3 }, stores.ports);
    expect(clean.next).toBe(runEnd);
    await expectCompacted(stores.ports, lane, all, 0, runEnd);
    expect(await compactionsOf(stores.ports, lane)).toHaveLength(1);
    const page = await readStream({ ...lane, from: 0, maxRecords: 1000 }, stores.ports);
    expect(textOf(page.records)).toEqual(all);
    await expectLaneInvariant(stores.ports, lane, acknowledged);
  });
});

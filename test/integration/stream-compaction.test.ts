import { beforeAll, describe, expect, it } from 'vitest';
import { compactLane } from '../../src/stream/compaction/compact-lane.js';
import { readStream } from '../../src/stream/read.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { expectLaneInvariant } from '../support/stream-fixture.js';
import { appendOne, compactionsOf, expectCompacted, laneWithRanges, textOf } from '../faults/stream-compaction-world.js';

/**
 * Compaction (issue #11): many small WAL objects into one generation per run, through the
 * generation-commit mechanism, on the real stores.
 */
let stores: TestStores;
beforeAll(async () => {
  stores = await freshStores();
});

describe('compactLane', () => {
  it('compacts the next run into one generation, then continues from the mark; a re-run changes nothing', async () => {
    const { lane, writer, acknowledged } = await laneWithRanges(stores.ports, 'compact', 4);
    const all = acknowledged.flatMap((a) => a.records);
    const ends = acknowledged.reduce<number[]>((e, a) => [...e, (e.at(-1) ?? 0) + a.records.length], []);

    const first = await compactLane({ ...lane, maxRanges: 3 }, stores.ports);
    expect(first).toMatchObject({ compacted: { start: 0, end: ends[2], ranges: 3 }, next: ends[2], taskCleaned: true });
    await expectCompacted(stores.ports, lane, all, 0, ends[2]!);

    // One range left: nothing to compact (a run needs two), the mark stays.
    expect(await compactLane({ ...lane, maxRanges: 3 }, stores.ports)).toEqual({ ...lane, next: ends[2], taskCleaned: false });

    acknowledged.push(await appendOne(writer, 2));
    const all2 = acknowledged.flatMap((a) => a.records);
    const second = await compactLane(lane, stores.ports);
    expect(second).toMatchObject({ compacted: { start: ends[2], end: all2.length, ranges: 2 }, next: all2.length });
    await expectCompacted(stores.ports, lane, all2, ends[2]!, all2.length);
    expect(await compactionsOf(stores.ports, lane)).toHaveLength(2);

    const page = await readStream({ ...lane, from: 0, maxRecords: 1000 }, stores.ports);
    expect(textOf(page.records)).toEqual(all2);
    await expectLaneInvariant(stores.ports, lane, acknowledged);
  });

  it('refuses bad knobs before anything is written', async () => {
    const { lane } = await laneWithRanges(stores.ports, 'knobs', 2);
    await expect(compactLane({ ...lane, maxRanges: 1 }, stores.ports)).rejects.toMatchObject({ name: 'Cutpoint.ValidationError', code: 'stream.invalid_compaction_knob' });
    await expect(compactLane({ ...lane, maxBytes: -1 }, stores.ports)).rejects.toMatchObject({ code: 'stream.invalid_compaction_knob' });
    expect(await compactionsOf(stores.ports, lane)).toEqual([]);
  });
});

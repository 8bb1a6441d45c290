import { beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/domain/digest.js';
import { encodeBatch } from '../../src/domain/record-batch.js';
import { laneKeys, type CommitRecord } from '../../src/domain/stream.js';
import { compactLane } from '../../src/stream/compaction/compact-lane.js';
import { readStream } from '../../src/stream/read.js';
import { trimLane } from '../../src/stream/trim.js';
import { generationKeys } from '../../src/domain/generation.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { expectLaneInvariant } from '../support/stream-fixture.js';
import {
  appendOne,
  compactionsOf,
  expectCompacted,
  laneWithRanges,
  textOf,
} from '../faults/stream-compaction-world.js';
import { replaceObject } from '../support/replace-object.js';

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
    expect(await compactLane({ ...lane, maxRanges: 3 }, stores.ports)).toEqual({
      ...lane,
      next: ends[2],
      taskCleaned: false,
    });

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

  it('a run whose mark CAS failed is caught up by the next one, even after a trim into it: no two compactions overlap', async () => {
    const { lane, acknowledged } = await laneWithRanges(stores.ports, 'compact-lag', 5);
    const all = acknowledged.flatMap((a) => a.records);
    const ends = acknowledged.reduce<number[]>((e, a) => [...e, (e.at(-1) ?? 0) + a.records.length], []);
    stores.faults.arm('stream.compact.mark:fail*');
    await expect(compactLane({ ...lane, maxRanges: 2 }, stores.ports)).rejects.toMatchObject({
      name: 'Cutpoint.EffectFailed',
    });
    stores.faults.disarm();
    const [first] = await compactionsOf(stores.ports, lane);
    expect(first).toMatchObject({ start: 0, end: ends[1] });
    // The trim moves into the compacted run before the next compaction: planning from
    // max(mark, trim) alone would start at the next range boundary inside it.
    await trimLane({ ...lane, to: 1 }, stores.ports);
    const next = await compactLane({ ...lane, maxRanges: 2 }, stores.ports);
    expect(next).toMatchObject({ compacted: { start: ends[1], end: ends[3] }, next: ends[3] });
    const runs = await compactionsOf(stores.ports, lane);
    expect(runs.map((c) => [c.start, c.end])).toEqual([
      [0, ends[1]],
      [ends[1], ends[3]],
    ]);
    // The lagging run's task was cleaned up too, once the mark passed it.
    expect(await stores.ports.authority.get(generationKeys.task(first!.root, first!.taskId))).toBeUndefined();
    expect(textOf((await readStream({ ...lane, from: 1, maxRecords: 1000 }, stores.ports)).records)).toEqual(
      all.slice(1),
    );
  });

  it('refuses bad knobs before anything is written', async () => {
    const { lane } = await laneWithRanges(stores.ports, 'knobs', 2);
    await expect(compactLane({ ...lane, maxRanges: 1 }, stores.ports)).rejects.toMatchObject({
      name: 'Cutpoint.ValidationError',
      code: 'stream.invalid_compaction_knob',
    });
    await expect(compactLane({ ...lane, maxBytes: -1 }, stores.ports)).rejects.toMatchObject({
      code: 'stream.invalid_compaction_knob',
    });
    expect(await compactionsOf(stores.ports, lane)).toEqual([]);
  });
});

describe('reads after compaction', () => {
  it('serve from the compacted object: with every per-range copy gone the lane still reads whole', async () => {
    const { lane, acknowledged } = await laneWithRanges(stores.ports, 'served', 3);
    const all = acknowledged.flatMap((a) => a.records);
    await compactLane(lane, stores.ports);
    await expectCompacted(stores.ports, lane, all, 0, all.length);
    const commits = (await stores.ports.authority.query(laneKeys.pk(lane), 'commit#')) as unknown as CommitRecord[];
    for (const c of commits)
      expect((await stores.ports.objects.delete('test.object.delete', c.walKey)).status).toBe('APPLIED');
    // Offsets inside the run, sliced from the one object.
    for (const from of [0, 1, commits[1]!.start, all.length - 1]) {
      const page = await readStream({ ...lane, from, maxRecords: 1000 }, stores.ports);
      expect(textOf(page.records)).toEqual(all.slice(from));
      expect(page.quarantined).toEqual([]);
    }
  });

  it('a corrupted compacted object is quarantined by exact identity and the per-range copies serve', async () => {
    const { lane, acknowledged } = await laneWithRanges(stores.ports, 'corrupt', 3);
    const all = acknowledged.flatMap((a) => a.records);
    await compactLane(lane, stores.ports);
    const c = await expectCompacted(stores.ports, lane, all, 0, all.length);
    const evil = encodeBatch(all.map((r) => new TextEncoder().encode(`EVIL ${r}`)));
    expect(await replaceObject(stores.ports.objects, c.objectKey, evil, { sha256: sha256Hex(evil) })).toBe('APPLIED');
    const page = await readStream({ ...lane, from: 0, maxRecords: 1000 }, stores.ports);
    expect(textOf(page.records)).toEqual(all);
    expect(page.quarantined).toEqual([{ key: c.objectKey, reason: 'checksum_mismatch' }]);
    expect(await stores.ports.authority.get(laneKeys.quarantine(lane, c.objectKey))).toMatchObject({
      objectKey: c.objectKey,
      expectedSha256: c.sha256,
      reason: 'checksum_mismatch',
      copy: 'compacted',
    });
    // A later read skips the quarantined copy and still reads whole.
    const again = await readStream({ ...lane, from: 1, maxRecords: 1000 }, stores.ports);
    expect(textOf(again.records)).toEqual(all.slice(1));
    expect(again.quarantined).toEqual([{ key: c.objectKey, reason: 'checksum_mismatch' }]);
  });
});

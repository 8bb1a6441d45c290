import { beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/domain/digest.js';
import { generationKeys, sourceSetDigest } from '../../src/domain/generation.js';
import { encodeBatch } from '../../src/domain/record-batch.js';
import { laneKeys, type CommitRecord, type LaneRef } from '../../src/domain/stream.js';
import { compactLane } from '../../src/stream/compaction/compact-lane.js';
import { compactionKeys, type CompactionRecord } from '../../src/stream/compaction/model.js';
import { readStream } from '../../src/stream/read.js';
import { releaseQuarantine } from '../../src/stream/read/quarantine-release.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { expectCompacted, laneWithRanges, textOf } from '../faults/stream-compaction-world.js';
import { overwrite, quarantineItemOf } from '../faults/stream-read-world.js';

/**
 * Releasing a quarantined compacted copy (issue #11; docs/rules.md#quarantine): the
 * evidence is the `compaction#<end>` record and its COMMITTED generation (exact key,
 * SHA-256, size and record count), and the bytes are re-verified against it. A compacted
 * copy that verifies again is released and serves reads again; one that still fails, or an
 * item the evidence does not back, stays. DynamoDB Local and the S3 emulator.
 */
let stores: TestStores;
beforeAll(async () => {
  stores = await freshStores();
}, 120_000);

interface Quarantined {
  lane: LaneRef;
  all: string[];
  c: CompactionRecord;
  good: Uint8Array;
}

/** A compacted lane whose compacted object a read found corrupt (and quarantined); returns the good bytes. */
async function quarantinedCompaction(label: string): Promise<Quarantined> {
  const { lane, acknowledged } = await laneWithRanges(stores.ports, label, 3);
  const all = acknowledged.flatMap((a) => a.records);
  await compactLane(lane, stores.ports);
  const c = await expectCompacted(stores.ports, lane, all, 0, all.length);
  const evil = encodeBatch(all.map((r) => new TextEncoder().encode(`EVIL ${r}`)));
  const good = await overwrite(stores, c.objectKey, evil);
  const page = await readStream({ ...lane, from: 0, maxRecords: 1000 }, stores.ports);
  expect(textOf(page.records), 'the per-range copies serve').toEqual(all);
  expect(page.quarantined).toEqual([{ key: c.objectKey, reason: 'checksum_mismatch' }]);
  expect(await quarantineItemOf(stores, lane, c.objectKey)).toMatchObject({
    copy: 'compacted',
    start: 0,
    end: all.length,
    expectedSha256: c.sha256,
    expectedSize: c.size,
  });
  return { lane, all, c, good };
}

/** Deletes every per-range WAL copy: afterwards only the compacted object can serve the lane. */
async function dropRangeCopies(lane: LaneRef): Promise<void> {
  const commits = (await stores.ports.authority.query(laneKeys.pk(lane), 'commit#')) as unknown as CommitRecord[];
  for (const commit of commits)
    expect((await stores.ports.objects.delete('test.object.delete', commit.walKey)).status).toBe('APPLIED');
}

describe('quarantine release of a compacted copy', () => {
  it('restored exact bytes: released by the compaction evidence, and reads serve the compacted copy again', async () => {
    const q = await quarantinedCompaction('crel');
    await overwrite(stores, q.c.objectKey, q.good);
    const released = await releaseQuarantine({ ...q.lane, objectKey: q.c.objectKey }, stores.ports);
    expect(released).toEqual({
      ...q.lane,
      objectKey: q.c.objectKey,
      copy: 'compacted',
      start: 0,
      end: q.all.length,
      sha256: q.c.sha256,
      size: q.c.size,
      released: true,
    });
    expect(await quarantineItemOf(stores, q.lane, q.c.objectKey)).toBeUndefined();

    await dropRangeCopies(q.lane);
    const page = await readStream({ ...q.lane, from: 0, maxRecords: 1000 }, stores.ports);
    expect(textOf(page.records), 'only the compacted copy is left to serve').toEqual(q.all);
    expect(page.quarantined).toEqual([]);
  });

  it('a compacted copy that still fails (corrupt, then missing) is refused and stays quarantined', async () => {
    const q = await quarantinedCompaction('cbad');
    const before = await quarantineItemOf(stores, q.lane, q.c.objectKey);
    await expect(releaseQuarantine({ ...q.lane, objectKey: q.c.objectKey }, stores.ports)).rejects.toMatchObject({
      name: 'Stream.QuarantineStillBad',
      code: 'stream.quarantine_still_bad',
    });
    expect(await quarantineItemOf(stores, q.lane, q.c.objectKey)).toEqual(before);
    expect((await stores.ports.objects.delete('test.object.delete', q.c.objectKey)).status).toBe('APPLIED');
    await expect(releaseQuarantine({ ...q.lane, objectKey: q.c.objectKey }, stores.ports)).rejects.toMatchObject({
      code: 'stream.quarantine_still_bad',
    });
    expect(await quarantineItemOf(stores, q.lane, q.c.objectKey)).toEqual(before);
    const page = await readStream({ ...q.lane, from: 0, maxRecords: 1000 }, stores.ports);
    expect(textOf(page.records)).toEqual(q.all);
    expect(page.quarantined).toEqual([{ key: q.c.objectKey, reason: 'checksum_mismatch' }]);
  });

  it('bytes the committed generation does not name are refused, even with the item and compaction# forged to match', async () => {
    const q = await quarantinedCompaction('cforge');
    // Valid batch bytes of the right record count, but not the committed generation's.
    const evil = encodeBatch(q.all.map((r) => new TextEncoder().encode(`FORGED ${r}`)));
    await overwrite(stores, q.c.objectKey, evil);
    const itemKey = laneKeys.quarantine(q.lane, q.c.objectKey);
    const item = (await stores.ports.authority.get(itemKey))!;
    const forge = { expectedSha256: sha256Hex(evil), expectedSize: evil.byteLength };
    expect(
      (await stores.ports.authority.update('test.quarantine.forge', itemKey, { version: item.version }, forge)).status,
    ).toBe('APPLIED');
    await expect(releaseQuarantine({ ...q.lane, objectKey: q.c.objectKey }, stores.ports)).rejects.toMatchObject({
      name: 'Stream.QuarantineIdentityMismatch',
      code: 'stream.quarantine_identity_mismatch',
    });

    // compaction# rewritten to the forged bytes too: its COMMITTED generation still names the real ones.
    const recordKey = compactionKeys.record(q.lane, q.c.end);
    const record = (await stores.ports.authority.get(recordKey))!;
    expect(
      (
        await stores.ports.authority.update(
          'test.compaction.forge',
          recordKey,
          { version: record.version },
          { sha256: sha256Hex(evil), size: evil.byteLength },
        )
      ).status,
    ).toBe('APPLIED');
    await expect(releaseQuarantine({ ...q.lane, objectKey: q.c.objectKey }, stores.ports)).rejects.toMatchObject({
      code: 'stream.quarantine_identity_mismatch',
    });
    expect(await quarantineItemOf(stores, q.lane, q.c.objectKey)).toMatchObject({
      version: item.version + 1,
      ...forge,
    });
  });

  it('an item naming a range no compaction covers exactly is refused', async () => {
    const q = await quarantinedCompaction('crange');
    await overwrite(stores, q.c.objectKey, q.good);
    const itemKey = laneKeys.quarantine(q.lane, q.c.objectKey);
    const item = (await stores.ports.authority.get(itemKey))!;
    expect(
      (await stores.ports.authority.update('test.quarantine.forge', itemKey, { version: item.version }, { start: 1 }))
        .status,
    ).toBe('APPLIED');
    await expect(releaseQuarantine({ ...q.lane, objectKey: q.c.objectKey }, stores.ports)).rejects.toMatchObject({
      code: 'stream.quarantine_identity_mismatch',
    });
    expect(await quarantineItemOf(stores, q.lane, q.c.objectKey)).toBeDefined();
  });

  it("a compaction whose source set is not the lane's commits of the run is refused (the digest is re-derived)", async () => {
    const q = await quarantinedCompaction('csources');
    await overwrite(stores, q.c.objectKey, q.good);
    // compaction# and its generation record agree with each other, on a source set the lane never committed.
    const other = sourceSetDigest([{ key: 'wal/elsewhere', sha256: q.c.sha256, size: q.c.size }]);
    for (const key of [compactionKeys.record(q.lane, q.c.end), generationKeys.record(q.c.root, q.c.generation)]) {
      const current = (await stores.ports.authority.get(key))!;
      expect(
        (
          await stores.ports.authority.update(
            'test.compaction.forge',
            key,
            { version: current.version },
            { sourceSetDigest: other },
          )
        ).status,
      ).toBe('APPLIED');
    }
    await expect(releaseQuarantine({ ...q.lane, objectKey: q.c.objectKey }, stores.ports)).rejects.toMatchObject({
      code: 'stream.quarantine_identity_mismatch',
    });
    expect(await quarantineItemOf(stores, q.lane, q.c.objectKey)).toBeDefined();
  });
});

import { beforeAll, describe, expect, it } from 'vitest';
import { laneKeys, type CommitRecord } from '../../src/domain/stream.js';
import { materializeGen0Batch } from '../../src/stream/append/gen0-batch.js';
import { compactLane } from '../../src/stream/compaction/compact-lane.js';
import { readStream } from '../../src/stream/read.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { countingPorts, gcFlow, listAll, MovableClock, rootOf } from '../faults/stream-gc-world.js';
import { appendOne, expectCompacted, laneWithRanges, textOf } from '../faults/stream-compaction-world.js';

/** GC after compaction (issue #11): superseded copies go after the orphan grace, exactly once; reads stay whole. */
let stores: TestStores;
beforeAll(async () => {
  stores = await freshStores();
});

describe('GC after compaction', () => {
  it('deletes the superseded WAL objects and generations 0 once after grace; the compacted object and the reads stay', async () => {
    const clock = new MovableClock();
    const deletes = new Map<string, number>();
    const ports = countingPorts(stores.ports, clock, deletes);
    const { lane, writer, acknowledged } = await laneWithRanges(ports, 'cgc', 3);
    expect((await materializeGen0Batch(lane, ports)).materialized).toHaveLength(3);
    const all = acknowledged.flatMap((a) => a.records);
    await compactLane(lane, ports);
    const c = await expectCompacted(ports, lane, all, 0, all.length);
    // A range past the compaction stays live.
    const tail = await appendOne(writer, 2);
    const everything = [...all, ...tail.records];
    const commits = (await ports.authority.query(laneKeys.pk(lane), 'commit#')) as unknown as CommitRecord[];
    const before = await listAll(ports, lane);
    const superseded = before.filter((k) => k !== c.objectKey && k !== commits[3]!.walKey);
    expect(superseded).toHaveLength(6); // 3 WAL objects + 3 generations 0

    expect((await gcFlow({ lane, ports })).status).toBe('SUCCEEDED');
    expect([...deletes.keys()]).toEqual([]); // in grace
    clock.advance(11 * 60_000);
    expect((await gcFlow({ lane, ports })).status).toBe('SUCCEEDED');
    expect((await gcFlow({ lane, ports })).status).toBe('SUCCEEDED');

    const after = new Set(await listAll(ports, lane));
    for (const key of superseded) {
      expect(after.has(key), `${key} not collected`).toBe(false);
      expect(deletes.get(key), key).toBe(1);
      expect((await rootOf({ lane, ports }, key))?.state).toBe('DELETED');
    }
    expect(after.has(c.objectKey)).toBe(true);
    expect(after.has(commits[3]!.walKey)).toBe(true);
    const page = await readStream({ ...lane, from: 0, maxRecords: 1000 }, ports);
    expect(textOf(page.records)).toEqual(everything);
    expect(page.quarantined).toEqual([]);
  });

  it("a scan page reads and verifies a compaction's object once, however many copies it supersedes", async () => {
    const deletes = new Map<string, number>();
    const counted = countingPorts(stores.ports, new MovableClock(), deletes);
    const reads = new Map<string, number>();
    const ports = {
      ...counted,
      objects: {
        ...counted.objects,
        get: (key: string, cut?: string) => (reads.set(key, (reads.get(key) ?? 0) + 1), counted.objects.get(key, cut)),
      },
    };
    const { lane, acknowledged } = await laneWithRanges(ports, 'cgc-once', 4);
    await materializeGen0Batch(lane, ports);
    await compactLane(lane, ports);
    const c = await expectCompacted(
      ports,
      lane,
      acknowledged.flatMap((a) => a.records),
      0,
      acknowledged.flatMap((a) => a.records).length,
    );
    reads.clear();
    const run = await gcFlow({ lane, ports });
    expect(run.status).toBe('SUCCEEDED');
    // 4 WAL objects + 4 generations 0, all SUPERSEDED (in grace): one check of the compaction
    // per scanned page (the WAL prefix and the generations prefix are a page each), not per copy.
    expect(run.output).toMatchObject({ totals: { scanned: 9, superseded: 8 } });
    const pages = run.events.filter((e) => e.type === 'StateEntered' && e.state === 'Scan').length;
    expect(pages).toBe(2);
    expect(reads.get(c.objectKey)).toBe(pages);
  });
});

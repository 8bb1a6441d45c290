import { beforeAll, describe, expect, it } from 'vitest';
import { laneKeys, walPrefixOf } from '../../src/domain/stream.js';
import { appendBatch } from '../../src/stream/append-batch.js';
import { materializeGen0Batch } from '../../src/stream/append/gen0-batch.js';
import { trimLane } from '../../src/stream/trim.js';
import { resolveAppend } from '../../src/stream/resolve.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { interceptPorts, landBetween, sameKey } from '../support/intercept-ports.js';
import { batchOf } from '../support/stream-fixture.js';
import { gcFlow, gcWorld, listAll } from '../faults/stream-gc-world.js';

/**
 * An attempt's outcome outlives its WAL object (src/stream/gc/attempt-record.ts). GC
 * deletes the WAL object of a committed attempt once it is trimmed (or superseded by a
 * compaction); before that DELETE it writes the attempt's collected record. Without it,
 * the randomized history found a re-run of such an attempt id answered KNOWN_NOT_COMMITTED
 * (the attempt was spent although it had committed) — and the owner re-running it would
 * have appended the same batch a second time.
 */
let stores: TestStores;
beforeAll(async () => {
  stores = await freshStores();
});

const encode = (rs: string[]) => rs.map((r) => new TextEncoder().encode(r));

describe('a committed attempt whose WAL object GC collected', () => {
  it('re-runs, resolves and refuses other bytes exactly as before the collection, and appends nothing twice', async () => {
    const world = await gcWorld(stores.ports, 'gc-evidence');
    const { lane, ports } = world;
    // gcWorld committed a1 = [0, 3) and trimmed to 3: a1's WAL object is collected at once.
    const run = await gcFlow(world);
    expect(run.status, `${run.error}: ${run.cause}`).toBe('SUCCEEDED');
    const a1Wal = world.trimmed.find((k) => k.includes('/a1/'))!;
    expect(await listAll(ports, lane)).not.toContain(a1Wal);
    expect(await ports.authority.get(laneKeys.collected(lane, 'a1'))).toMatchObject({
      attemptId: 'a1',
      walKey: a1Wal,
      start: 0,
      end: 3,
    });
    const head = await ports.authority.get(laneKeys.head(lane));

    // The owner re-runs a1 with its records: the same outcome, nothing appended again.
    const session = (head as unknown as { fence: { owner: string; session: string; epoch: number } }).fence;
    const again = await appendBatch({ ...lane, attemptId: 'a1', session, records: encode(batchOf('a1', 3)) }, ports);
    expect(again).toMatchObject({ status: 'KNOWN_COMMITTED', start: 0, end: 3 });
    expect((await ports.authority.get(laneKeys.head(lane)))?.committedEnd).toBe(head!.committedEnd);
    expect(await listAll(ports, lane)).not.toContain(a1Wal);

    // A resolve of the original attempt: KNOWN_COMMITTED, never spent.
    expect(await resolveAppend({ ...lane, attemptId: 'a1' }, ports)).toMatchObject({
      status: 'KNOWN_COMMITTED',
      start: 0,
      end: 3,
    });
    expect(await ports.authority.get(laneKeys.spent(lane, 'a1'))).toBeUndefined();

    // The same attempt id with other bytes is still an identity conflict, nothing written.
    await expect(
      appendBatch({ ...lane, attemptId: 'a1', session, records: encode(['other']) }, ports),
    ).rejects.toMatchObject({ name: 'Stream.AttemptIdentityConflict' });
    expect((await ports.authority.get(laneKeys.head(lane)))?.version).toBe(head!.version);
  });
});

describe('a re-run racing the collection of its WAL object', () => {
  it("GC collecting between the re-run's reads of its WAL objects and its collected record: still KNOWN_COMMITTED, appended once", async () => {
    // GC writes the collected record, then deletes the WAL object. A re-run that read the
    // record (absent) before GC and listed the WAL objects after it saw neither, took the
    // committed batch for a new one and appended it a second time.
    const world = await gcWorld(stores.ports, 'gc-evidence-race');
    const { lane, ports } = world;
    const head = (await ports.authority.get(laneKeys.head(lane))) as unknown as {
      committedEnd: number;
      fence: { owner: string; session: string; epoch: number };
    };
    const collectedKey = laneKeys.collected(lane, 'a1');
    const race = landBetween(async () => {
      const run = await gcFlow(world);
      expect(run.status, `${run.error}: ${run.cause}`).toBe('SUCCEEDED');
    });
    const racing = interceptPorts(ports, {
      authority: {
        get: (key) =>
          sameKey(key, collectedKey) ? race.read(() => ports.authority.get(key)) : ports.authority.get(key),
      },
      objects: {
        list: (prefix) =>
          prefix === walPrefixOf(lane, 'a1') ? race.read(() => ports.objects.list(prefix)) : ports.objects.list(prefix),
      },
    });
    const again = await appendBatch(
      { ...lane, attemptId: 'a1', session: head.fence, records: encode(batchOf('a1', 3)) },
      racing,
    );
    expect(race.landed()).toBe(1);
    expect(again).toMatchObject({ status: 'KNOWN_COMMITTED', start: 0, end: 3 });
    expect((await ports.authority.get(laneKeys.head(lane)))?.committedEnd).toBe(head.committedEnd);
    expect(
      (await ports.authority.query(laneKeys.pk(lane), 'commit#')).filter((c) => c.attemptId === 'a1'),
    ).toHaveLength(1);
    expect((await listAll(ports, lane)).filter((k) => k.includes('/a1/'))).toEqual([]);
  });
});

describe('generation 0 after GC collected a range', () => {
  it('moves its mark past trimmed ranges whose WAL objects are gone instead of stalling on them', async () => {
    const world = await gcWorld(stores.ports, 'gc-gen0-mark');
    const { lane, ports } = world;
    // gcWorld materialized [0, 7) and trimmed to 3; two more ranges commit, then a trim past the first of them.
    const head = (await ports.authority.get(laneKeys.head(lane))) as unknown as {
      fence: { owner: string; session: string; epoch: number };
    };
    for (const id of ['b1', 'b2']) {
      expect(
        await appendBatch({ ...lane, attemptId: id, session: head.fence, records: encode(batchOf(id, 2)) }, ports),
      ).toMatchObject({ status: 'KNOWN_COMMITTED' });
    }
    await trimLane({ ...lane, to: 9 }, ports); // b1 = [7, 9) is below the trim
    expect((await gcFlow(world)).status).toBe('SUCCEEDED');
    expect((await listAll(ports, lane)).some((k) => k.includes('/b1/'))).toBe(false);
    const run = await materializeGen0Batch(lane, ports);
    expect(run.failed).toBeUndefined();
    expect(run.materialized.map((m) => [m.start, m.end])).toEqual([[9, 11]]);
    expect(run.next).toBe(11);
  });
});

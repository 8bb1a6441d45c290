import { beforeAll, describe, expect, it } from 'vitest';
import {
  laneKeys,
  walFate,
  walPrefixOf,
  type CommitRecord,
  type LaneHead,
  type LaneRef,
  type SpentMarker,
} from '../../src/domain/stream.js';
import { appendBatch } from '../../src/stream/append-batch.js';
import { STREAM_CUT_POINTS } from '../../src/stream/cut-points.js';
import { resolveAppend } from '../../src/stream/resolve.js';
import { takeOverWithNewSession } from '../../src/stream/takeover.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { batchOf, expectLaneInvariant, newLane } from '../support/stream-fixture.js';

/**
 * There is no intent item: this file shows, for each append cut point (docs/rules.md#append-cut-points), the
 * exact durable evidence left behind and the one interpretation recovery derives from it —
 * the attempt's WAL object (its metadata binds attempt, SHA-256, record count, fence epoch
 * and start), the head, commit#<start + count>, and the spent marker.
 */
let stores: TestStores;
beforeAll(async () => {
  stores = await freshStores();
});

const bytes = (rs: string[]) => rs.map((r) => new TextEncoder().encode(r));

async function evidence(lane: LaneRef, attemptId: string) {
  const head = (await stores.ports.authority.get(laneKeys.head(lane))) as unknown as LaneHead;
  const keys = await stores.ports.objects.list(walPrefixOf(lane, attemptId));
  const wals = await Promise.all(keys.map(async (k) => (await stores.ports.objects.head(k))!));
  const fates = await Promise.all(
    wals.map(async (w) => {
      const end = Number(w.metadata.start) + Number(w.metadata['record-count']);
      const commit = (await stores.ports.authority.get(laneKeys.commit(lane, end))) as unknown as
        CommitRecord | undefined;
      return walFate(w.metadata, head, commit);
    }),
  );
  const marker = (await stores.ports.authority.get(laneKeys.spent(lane, attemptId))) as unknown as
    SpentMarker | undefined;
  return { head, wals, fates, marker };
}

describe('exact evidence at each append cut point', () => {
  it('before primary WAL I/O: no WAL object, head unchanged; resolve spends the id → KNOWN_NOT_COMMITTED, and a late re-run can never commit it', async () => {
    const { lane, session } = await newLane(stores.ports, 'ev-before');
    stores.faults.arm(`${STREAM_CUT_POINTS.wal}:crash-before*`);
    await expect(
      appendBatch({ ...lane, attemptId: 'a1', session, records: bytes(['x']) }, stores.ports),
    ).rejects.toMatchObject({ name: 'Cutpoint.WorkerCrashed' });
    stores.faults.disarm();
    const before = await evidence(lane, 'a1');
    expect(before.wals).toEqual([]);
    expect(before.head.committedEnd).toBe(0);
    expect(await resolveAppend({ ...lane, attemptId: 'a1' }, stores.ports)).toMatchObject({
      status: 'KNOWN_NOT_COMMITTED',
    });
    expect((await evidence(lane, 'a1')).marker).toMatchObject({
      attemptId: 'a1',
      walKey: walPrefixOf(lane, 'a1'),
      walSha256: '',
      recordCount: 0,
      reason: expect.any(String),
      orphanSince: expect.any(String),
    });
    expect((await appendBatch({ ...lane, attemptId: 'a1', session, records: bytes(['x']) }, stores.ports)).status).toBe(
      'KNOWN_NOT_COMMITTED',
    );
    await expectLaneInvariant(stores.ports, lane, []);
  });

  it('WAL durable, CAS unknown for good: the WAL object binds start 0 and the epoch (MAY_COMMIT); once resolved, the spent marker stops a re-run at that same start', async () => {
    const { lane, session } = await newLane(stores.ports, 'ev-wal');
    stores.faults.arm(`${STREAM_CUT_POINTS.headCas}:crash-before*`);
    const first = await appendBatch(
      { ...lane, attemptId: 'a1', session, records: bytes(batchOf('a1', 3)) },
      stores.ports,
    );
    stores.faults.disarm();
    expect(first.status).toBe('MAY_HAVE_COMMITTED'); // the worker kept dying at the CAS: suspended
    const ev = await evidence(lane, 'a1');
    expect(ev.wals.map((w) => w.metadata)).toEqual([
      expect.objectContaining({
        'attempt-id': 'a1',
        start: '0',
        'record-count': '3',
        'fence-epoch': String(session.epoch),
      }),
    ]);
    expect(ev.fates).toEqual(['MAY_COMMIT']);
    expect(ev.head).toMatchObject({ committedEnd: 0, suspendedBy: 'a1' });
    // Resolve proves it not committed (spent marker + head version bump); the WAL is dead to a re-run.
    expect(await resolveAppend({ ...lane, attemptId: 'a1' }, stores.ports)).toMatchObject({
      status: 'KNOWN_NOT_COMMITTED',
      unsuspended: true,
    });
    const after = await evidence(lane, 'a1');
    expect(after.marker).toMatchObject({
      attemptId: 'a1',
      walKey: ev.wals[0]!.key,
      walSha256: ev.wals[0]!.metadata.sha256,
      reason: expect.any(String),
    });
    expect(after.head.version).toBeGreaterThan(ev.head.version);
    // Right away, with the committed end still at its start: the spent marker is the only thing that stops it.
    expect(
      (await appendBatch({ ...lane, attemptId: 'a1', session, records: bytes(batchOf('a1', 3)) }, stores.ports)).status,
    ).toBe('KNOWN_NOT_COMMITTED');
    expect((await evidence(lane, 'a1')).head.committedEnd).toBe(0);
  });

  it('WAL durable, the worker dead right after the PUT: the rerun finds the exact object, reuses its binding (no second PUT) and commits exactly at its start', async () => {
    const { lane, session } = await newLane(stores.ports, 'ev-rerun');
    stores.faults.arm(`${STREAM_CUT_POINTS.wal}:crash-after`);
    const outcome = await appendBatch(
      { ...lane, attemptId: 'a1', session, records: bytes(batchOf('a1', 2)) },
      stores.ports,
    );
    stores.faults.disarm();
    expect(outcome).toMatchObject({ status: 'KNOWN_COMMITTED', start: 0, end: 2 });
    const ev = await evidence(lane, 'a1');
    expect(ev.wals).toHaveLength(1);
    expect(ev.wals[0]!.metadata).toMatchObject({ start: '0', 'fence-epoch': String(session.epoch) });
    expect(ev.fates).toEqual(['COMMITTED']);
  });

  it('head CAS response lost after it applied: commit#<end> names the attempt and SHA-256 → KNOWN_COMMITTED, walFate COMMITTED', async () => {
    const { lane, session } = await newLane(stores.ports, 'ev-lost');
    stores.faults.arm(`${STREAM_CUT_POINTS.headCas}:lose-response*`);
    const outcome = await appendBatch(
      { ...lane, attemptId: 'a1', session, records: bytes(batchOf('a1', 2)) },
      stores.ports,
    );
    stores.faults.disarm();
    expect(outcome).toMatchObject({ status: 'KNOWN_COMMITTED', start: 0, end: 2 });
    const ev = await evidence(lane, 'a1');
    expect(ev.fates).toEqual(['COMMITTED']);
    expect(ev.marker).toBeUndefined();
    await expectLaneInvariant(stores.ports, lane, [{ attemptId: 'a1', records: batchOf('a1', 2) }]);
  });

  it('head CAS condition fails (a takeover): the WAL object is bound to the old epoch (DEAD), the attempt KNOWN_NOT_COMMITTED', async () => {
    const { lane, session } = await newLane(stores.ports, 'ev-fenced');
    stores.faults.arm(`${STREAM_CUT_POINTS.headCas}:crash-before*`);
    await appendBatch({ ...lane, attemptId: 'a1', session, records: bytes(['x']) }, stores.ports);
    stores.faults.disarm();
    const next = await takeOverWithNewSession(lane, 'new-owner', stores.ports);
    expect((await evidence(lane, 'a1')).fates).toEqual(['DEAD']);
    const rerun = await appendBatch({ ...lane, attemptId: 'a1', session: next, records: bytes(['x']) }, stores.ports);
    expect(rerun).toMatchObject({ status: 'KNOWN_NOT_COMMITTED', reason: 'Stream.Fenced' });
    expect((await evidence(lane, 'a1')).head.suspendedBy).toBeUndefined();
  });

  it('the offset was taken by another attempt: committedEnd passed the bound start (DEAD); the attempt can never commit at another offset', async () => {
    const { lane, session } = await newLane(stores.ports, 'ev-taken');
    stores.faults.arm(`${STREAM_CUT_POINTS.headCas}:crash-before*`);
    await appendBatch({ ...lane, attemptId: 'a1', session, records: bytes(['x']) }, stores.ports);
    stores.faults.disarm();
    await resolveAppend({ ...lane, attemptId: 'a1' }, stores.ports);
    expect(
      (await appendBatch({ ...lane, attemptId: 'a2', session, records: bytes(['y', 'z']) }, stores.ports)).status,
    ).toBe('KNOWN_COMMITTED');
    expect((await evidence(lane, 'a1')).fates).toEqual(['DEAD']);
    await expectLaneInvariant(stores.ports, lane, [{ attemptId: 'a2', records: ['y', 'z'] }]);
  });
});

import { beforeAll, describe, expect, it } from 'vitest';
import { decodeBatch } from '../../src/domain/record-batch.js';
import { laneKeys, type CommitRecord } from '../../src/domain/stream.js';
import type { AuthorityStore, TransactionLeg } from '../../src/ports/authority.js';
import type { Ports } from '../../src/ports/index.js';
import type { ObjectStore } from '../../src/ports/objects.js';
import { LaneWriter } from '../../src/stream/append/lane-writer.js';
import { appendBatch } from '../../src/stream/append-batch.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { batchOf, expectLaneInvariant, newLane } from '../support/stream-fixture.js';

/**
 * The acknowledged path by request count (issue #11): the ports are wrapped and every call
 * is counted by kind. A LaneWriter carries its head from its last CAS, so each batch is
 * exactly one WAL PUT and one TransactWriteItems of two item writes — no GetItem, no query,
 * no object read or list. Per writer, not per batch: its first batch loads the head (one
 * GetItem) and claims the writer slot (one UpdateItem); close() releases it (one UpdateItem
 * at the version its last CAS left, no read).
 */
let stores: TestStores;
beforeAll(async () => {
  stores = await freshStores();
});

type Counts = Record<string, number>;

function counted(ports: Ports): { ports: Ports; counts: Counts; legs: TransactionLeg[][] } {
  const counts: Counts = {};
  const legs: TransactionLeg[][] = [];
  const bump = (kind: string) => (counts[kind] = (counts[kind] ?? 0) + 1);
  const authority: AuthorityStore = {
    describeBinding: () => ports.authority.describeBinding(),
    get: (key) => (bump('authority.get'), ports.authority.get(key)),
    getTogether: (keys) => (bump('authority.getTogether'), ports.authority.getTogether(keys)),
    query: (pk, prefix, options) => (bump('authority.query'), ports.authority.query(pk, prefix, options)),
    put: (cut, item, expect) => (bump('authority.put'), ports.authority.put(cut, item, expect)),
    update: (cut, key, expect, set) => (bump('authority.update'), ports.authority.update(cut, key, expect, set)),
    delete: (cut, key, expect) => (bump('authority.delete'), ports.authority.delete(cut, key, expect)),
    transact: (cut, l) => (bump('authority.transact'), legs.push(l), ports.authority.transact(cut, l)),
  };
  const objects: ObjectStore = {
    location: ports.objects.location,
    put: (cut, key, bytes, metadata) => (bump('objects.put'), ports.objects.put(cut, key, bytes, metadata)),
    copy: (cut, source, target, metadata) => (bump('objects.copy'), ports.objects.copy(cut, source, target, metadata)),
    head: (key) => (bump('objects.head'), ports.objects.head(key)),
    get: (key) => (bump('objects.get'), ports.objects.get(key)),
    delete: (cut, key) => (bump('objects.delete'), ports.objects.delete(cut, key)),
    deleteMany: (cut, keys) => (bump('objects.deleteMany'), ports.objects.deleteMany(cut, keys)),
    list: (prefix) => (bump('objects.list'), ports.objects.list(prefix)),
  };
  return { ports: { ...ports, authority, objects }, counts, legs };
}

const bytes = (rs: string[]) => rs.map((r) => new TextEncoder().encode(r));

describe('requests per acknowledged batch', () => {
  it('a LaneWriter: 1 PUT + 1 TransactWriteItems (2 item writes) + 0 GetItem per batch; per writer one head load, one slot claim and one release', async () => {
    const { lane, session } = await newLane(stores.ports, 'count');
    const meter = counted(stores.ports);
    const writer = new LaneWriter(meter.ports, lane, session);
    const acknowledged = [];
    for (let i = 0; i < 6; i++) {
      const attemptId = writer.nextAttemptId();
      const records = batchOf(attemptId, 1 + (i % 3));
      const outcome = await writer.append(bytes(records), attemptId);
      expect(outcome).toMatchObject({ status: 'KNOWN_COMMITTED' });
      acknowledged.push({ attemptId, records });
    }
    expect(meter.counts).toEqual({
      'authority.get': 1,
      'authority.update': 1,
      'objects.put': 6,
      'authority.transact': 6,
    });
    expect(await writer.close()).toEqual({ released: true, unsettled: [] });
    expect(meter.counts).toEqual({
      'authority.get': 1,
      'authority.update': 2,
      'objects.put': 6,
      'authority.transact': 6,
    });
    for (const legs of meter.legs) {
      expect(legs.map((l) => l.kind)).toEqual(['update', 'put']);
    }
    await expectLaneInvariant(stores.ports, lane, acknowledged);
  });

  it('pipelined (depth 4): WAL PUTs run ahead, CASes in order — still 1 PUT + 1 TWI per batch, contiguous ranges in call order', async () => {
    const { lane, session } = await newLane(stores.ports, 'pipe');
    const meter = counted(stores.ports);
    const writer = new LaneWriter(meter.ports, lane, session, { depth: 4 });
    const batches = Array.from({ length: 12 }, (_, i) => {
      const attemptId = writer.nextAttemptId();
      return { attemptId, records: batchOf(attemptId, 1 + (i % 4)) };
    });
    const outcomes = await Promise.all(batches.map((b) => writer.append(bytes(b.records), b.attemptId)));
    let next = 0;
    for (const [i, outcome] of outcomes.entries()) {
      expect(outcome).toMatchObject({ status: 'KNOWN_COMMITTED', attemptId: batches[i]!.attemptId, start: next });
      next = outcome.end!;
    }
    expect(await writer.close()).toEqual({ released: true, unsettled: [] });
    expect(meter.counts).toEqual({
      'authority.get': 1,
      'authority.update': 2,
      'objects.put': 12,
      'authority.transact': 12,
    });
    await expectLaneInvariant(stores.ports, lane, batches);
  });

  it('a pipeline break: the batches bound after one that did not commit are KNOWN_NOT_COMMITTED (spent, never re-bound); later batches bind to the reloaded end', async () => {
    const { lane, session } = await newLane(stores.ports, 'break');
    const writer = new LaneWriter(stores.ports, lane, session, { depth: 3 });
    const first = { attemptId: writer.nextAttemptId(), records: batchOf('first', 2) };
    expect(await writer.append(bytes(first.records), first.attemptId)).toMatchObject({
      status: 'KNOWN_COMMITTED',
      start: 0,
      end: 2,
    });
    // Every head CAS now fails for good: the first in flight is refused, the rest are bound behind it.
    stores.faults.arm('stream.append.head-cas:fail*');
    const batches = Array.from({ length: 3 }, (_, i) => ({
      attemptId: writer.nextAttemptId(),
      records: batchOf(`b${i}`, 2),
    }));
    const outcomes = await Promise.all(batches.map((b) => writer.append(bytes(b.records), b.attemptId)));
    stores.faults.disarm();
    expect(outcomes.map((o) => o.status)).not.toContain('KNOWN_COMMITTED');
    // Resolve whatever was left MAY_HAVE_COMMITTED, then the lane moves on from its committed end.
    const { resolveAppend } = await import('../../src/stream/resolve.js');
    for (const o of outcomes)
      if (o.status === 'MAY_HAVE_COMMITTED')
        expect((await resolveAppend({ ...lane, attemptId: o.attemptId }, stores.ports)).status).toBe(
          'KNOWN_NOT_COMMITTED',
        );
    const after = { attemptId: writer.nextAttemptId(), records: batchOf('after', 1) };
    expect(await writer.append(bytes(after.records), after.attemptId)).toMatchObject({
      status: 'KNOWN_COMMITTED',
      start: 2,
      end: 3,
    });
    // The spent batches stay spent: re-running one with its own records never commits it.
    for (const b of batches) {
      const rerun = await appendBatch(
        { ...lane, attemptId: b.attemptId, session, records: bytes(b.records) },
        stores.ports,
      );
      expect(rerun.status, b.attemptId).toBe('KNOWN_NOT_COMMITTED');
    }
    await expectLaneInvariant(stores.ports, lane, [first, after]);
    const commits = (await stores.ports.authority.query(laneKeys.pk(lane), 'commit#')) as unknown as CommitRecord[];
    expect(commits.map((c) => c.attemptId)).toEqual([first.attemptId, after.attemptId]);
    expect(decodeBatch((await stores.ports.objects.get(commits[1]!.walKey))!.bytes)).toHaveLength(1);
  });
});

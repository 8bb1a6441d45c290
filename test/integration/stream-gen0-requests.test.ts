import { beforeAll, describe, expect, it } from 'vitest';
import { RequestCounter } from '../../bench/support/port-requests.js';
import { laneKeys, rangeRootOf, type CommitRecord, type IndexEntry } from '../../src/domain/stream.js';
import { loadRecord } from '../../src/generation/load.js';
import { materializeGen0Batch } from '../../src/stream/append/gen0-batch.js';
import { LaneWriter } from '../../src/stream/append/lane-writer.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { batchOf, expectLaneInvariant, newLane, type Acknowledged } from '../support/stream-fixture.js';

/**
 * Generation 0 by request count (issue #11): the ports are wrapped and every call is
 * counted as AWS bills it. A range's generation 0 is a server-side CopyObject of its WAL
 * object — no GetObject of the WAL, no PutObject of its bytes — and the steps carry what
 * the previous one proved (the registered task, the prepared record) instead of reloading
 * it. Per range, on the happy path: 1 PutItem (task), 1 CopyObject (create-only: it is
 * also the look for an existing output), 1 TransactGetItems (task, record and head as one
 * snapshot) + 1 TransactWriteItems (PREPARED), 1 GetObject (full SHA-256 and metadata of the
 * target before COMMITTED) + 1 TransactWriteItems (COMMITTED), 1 PutItem (the index entry
 * naming the generation): 7; then its task cleanup (src/generation/cleanup-task.ts, after the
 * mark): 1 TransactGetItems (task, record, head and the protections, one snapshot), 1
 * HeadObject (the output's size, SHA-256 and task metadata) and 1 DeleteItem (the task): 10.
 * The run itself adds 3 GetItem (its mark; the head and the compaction mark, so it skips
 * ranges below the trim or already compacted), 1 Query (the ranges) and 1 PutItem (the mark),
 * and for the cleanup 1 GetItem (the mark), 1 Query (the ranges from its cursor) and 1
 * UpdateItem (the cursor): 8.
 * (Before: 16 per range — a GetObject of the output key, a GetObject of the WAL and a
 * PutObject of a byte-identical copy, the task reloaded by every step, record and head
 * reloaded by the commit, a second write of the index entry.)
 */
let stores: TestStores;
beforeAll(async () => {
  stores = await freshStores();
});

const bytes = (rs: string[]) => rs.map((r) => new TextEncoder().encode(r));
const RANGES = 4;

describe('requests per generation-0 range', () => {
  it(`a batched run over ${RANGES} ranges: CopyObject, no WAL GetObject, no PutObject; 10 requests per range (7 + the task cleanup) + 8 per run`, async () => {
    const { lane, session } = await newLane(stores.ports, 'gen0-count');
    const writer = new LaneWriter(stores.ports, lane, session);
    const acknowledged: Acknowledged[] = [];
    for (let i = 0; i < RANGES; i++) {
      const attemptId = writer.nextAttemptId();
      const records = batchOf(attemptId, 2 + i);
      expect(await writer.append(bytes(records), attemptId)).toMatchObject({ status: 'KNOWN_COMMITTED' });
      acknowledged.push({ attemptId, records });
    }
    const counter = new RequestCounter();
    const run = await materializeGen0Batch(lane, counter.wrap(stores.ports));
    expect(run.failed).toBeUndefined();
    expect(run.materialized).toHaveLength(RANGES);
    const counts = counter.snapshot();
    const total = Object.values(counts).reduce((n, c) => n + c, 0);
    console.log(
      `gen0 requests for ${RANGES} ranges: ${total} (${((total - 8) / RANGES).toFixed(2)} per range + 8 per run)`,
      counts,
    );
    expect(counts).toEqual({
      'dynamodb.GetItem': 4,
      'dynamodb.TransactGetItems': 2 * RANGES,
      'dynamodb.PutItem': 1 + 2 * RANGES,
      'dynamodb.Query': 2,
      'dynamodb.TransactWriteItems': 2 * RANGES,
      'dynamodb.UpdateItem': 1,
      'dynamodb.DeleteItem': RANGES,
      's3.CopyObject': RANGES,
      's3.GetObject': RANGES,
      's3.HeadObject': RANGES,
    });
    expect(run.cleanup).toEqual({ tasks: RANGES });
    // What the fewer requests wrote is the same: every range has its COMMITTED generation 0,
    // byte-identical to the WAL object, linked into its index entry.
    const commits = (await stores.ports.authority.query(laneKeys.pk(lane), 'commit#')) as unknown as CommitRecord[];
    for (const c of commits) {
      const record = await loadRecord(stores.ports, rangeRootOf(lane, c.start), 0);
      expect(record).toMatchObject({ state: 'COMMITTED', taskId: c.attemptId, sha256: c.walSha256, size: c.walSize });
      const entry = (await stores.ports.authority.get(laneKeys.index(lane, c.end))) as unknown as IndexEntry;
      expect(entry).toMatchObject({
        start: c.start,
        walKey: c.walKey,
        gen0Key: record!.objectKey,
        gen0Sha256: c.walSha256,
      });
      const copy = await stores.ports.objects.get(record!.objectKey);
      const wal = await stores.ports.objects.get(c.walKey);
      expect(Buffer.from(copy!.bytes).equals(Buffer.from(wal!.bytes))).toBe(true);
    }
    await expectLaneInvariant(stores.ports, lane, acknowledged);
  });
});

import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { walBindingOf } from '../../src/domain/stream-wal.js';
import { appendBatch } from '../../src/stream/append-batch.js';
import { walsOf } from '../../src/stream/append/attempt-evidence.js';
import { STREAM_CUT_POINTS } from '../../src/stream/cut-points.js';
import { createStream } from '../../src/stream/create-stream.js';
import { takeOverWithNewSession } from '../../src/stream/takeover.js';
import { freshStores, type TestStores } from '../support/emulators.js';

/**
 * Two executions of one append (a duplicate StartExecution, a zombie Lambda), found by the
 * fault scheduler (stream seeds 484, 1131, 1183): both pass the attempt's evidence check
 * before either writes, and the committed end moves in between, so they bind the same
 * batch to different starts. The WAL key is create-only (S3's If-None-Match, which the
 * local emulator now enforces too): the first binding stays, and the late execution must
 * adopt it — not end Stream.Rejected for an attempt that committed.
 */

let stores: TestStores;

beforeAll(async () => {
  stores = await freshStores();
});

const encode = (records: string[]) => records.map((r) => new TextEncoder().encode(r));

describe('a duplicate execution of one append, bound late', () => {
  it('adopts the binding the first WAL write fixed, and reports the one committed range', async () => {
    const lane = { stream: `dup-${randomUUID().slice(0, 8)}`, partition: 0 };
    await createStream({ stream: lane.stream, partitions: 1 }, stores.ports);
    const fence = await takeOverWithNewSession(lane, 'dup-test', stores.ports);
    const append = (attemptId: string, records: string[]) =>
      appendBatch({ ...lane, attemptId, session: fence, records: encode(records) }, stores.ports);

    // The late execution loads the head (committed end 0), then stalls at its WAL write.
    const held = stores.hold(STREAM_CUT_POINTS.wal);
    const late = append('a1', ['one']);
    await held.reached;
    // Meanwhile another attempt commits, and the duplicate execution of a1 binds to end 1 and commits.
    expect(await append('a0', ['zero'])).toMatchObject({ status: 'KNOWN_COMMITTED', start: 0, end: 1 });
    const first = await append('a1', ['one']);
    expect(first).toMatchObject({ status: 'KNOWN_COMMITTED', start: 1, end: 2 });
    held.release();

    expect(await late).toMatchObject({ status: 'KNOWN_COMMITTED', start: 1, end: 2 });
    // The committed WAL object still carries the binding it committed with.
    const [wal] = await walsOf(stores.ports, lane, 'a1');
    expect(wal).toMatchObject({ start: 1, recordCount: 1 });
    const object = await stores.ports.objects.head(wal!.walKey);
    expect(walBindingOf(object!.metadata)).toMatchObject({ start: 1 });
  });
});

import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/domain/digest.js';
import { laneKeys, type CommitRecord, type LaneRef } from '../../src/domain/stream.js';
import { runFlow, type FlowResult } from '../../src/local/flow-runner.js';
import type { Fence } from '../../src/domain/fence.js';
import type { Ports } from '../../src/ports/index.js';
import { appendBatch } from '../../src/stream/append-batch.js';
import { writeWal } from '../../src/stream/append/write-wal.js';
import { createStream } from '../../src/stream/create-stream.js';
import { STREAM_CUT_POINTS } from '../../src/stream/cut-points.js';
import { takeOverWithNewSession } from '../../src/stream/takeover.js';
import { readStream } from '../../src/stream/read.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { appendFlow, batchOf, expectLaneInvariant, newLane, resolveFlow, statusOf } from '../support/stream-fixture.js';

/**
 * Issue 8, stream log: a refused command mutates nothing, an attempt id names exactly one
 * batch on every path, and no read hands out a position past the committed end. Every
 * refusal is checked against a snapshot of the lane's authority items and its WAL objects.
 */
let stores: TestStores;
beforeAll(async () => {
  stores = await freshStores();
});

const PREFIXES = ['head', 'fence#', 'spent#', 'commit#', 'index#', 'quarantine#'];

/** Every authority item of the lane and every WAL object (key → SHA-256 of its bytes). */
async function snapshot(ports: Ports, lane: LaneRef) {
  const items = (await Promise.all(PREFIXES.map((p) => ports.authority.query(laneKeys.pk(lane), p)))).flat();
  const keys = (await ports.objects.list(`wal/${lane.stream}/`)).sort();
  const objects = await Promise.all(keys.map(async (key) => [key, sha256Hex((await ports.objects.get(key))!.bytes)]));
  return { items, objects };
}

/** The step error a Rejected flow caught (the CLI prints its code). */
function stepError(run: FlowResult): string | undefined {
  return (
    run.events.filter((e) => e.type === 'StateFailed' && e.error && e.error !== 'Stream.Rejected').pop()?.error ??
    run.error
  );
}

const records = (rs: string[]) => rs.map((r) => Buffer.from(r));
const b64 = (rs: string[]) => rs.map((r) => Buffer.from(r).toString('base64'));

describe('an attempt id names exactly one batch', () => {
  it('a committed attempt re-run with other records is refused, nothing written (not KNOWN_COMMITTED with the old batch)', async () => {
    const { lane, session } = await newLane(stores.ports, 'reuse-committed');
    expect(statusOf(await appendFlow(stores.ports, lane, session, 'a-1', ['one', 'two']))).toBe('KNOWN_COMMITTED');
    const before = await snapshot(stores.ports, lane);

    const run = await appendFlow(stores.ports, lane, session, 'a-1', ['three']);
    expect(run).toMatchObject({ status: 'FAILED', error: 'Stream.Rejected' });
    expect(stepError(run)).toBe('Stream.AttemptIdentityConflict');
    await expect(
      appendBatch({ ...lane, attemptId: 'a-1', session, records: records(['three']) }, stores.ports),
    ).rejects.toMatchObject({
      code: 'stream.attempt_identity_conflict',
    });
    expect(await snapshot(stores.ports, lane)).toEqual(before);
    // The same batch again is the same append.
    expect(await appendFlow(stores.ports, lane, session, 'a-1', ['one', 'two'])).toMatchObject({
      output: { status: 'KNOWN_COMMITTED', start: 0, end: 2 },
    });
  });

  it('a pending attempt (lane suspended) re-run with other records is refused, nothing written', async () => {
    const { lane, session } = await newLane(stores.ports, 'reuse-pending');
    stores.faults.arm(`${STREAM_CUT_POINTS.headCas}:lose-request*`);
    const unknown = await appendBatch({ ...lane, attemptId: 'a-1', session, records: records(['one']) }, stores.ports);
    stores.faults.disarm();
    expect(unknown.status).toBe('MAY_HAVE_COMMITTED');
    const before = await snapshot(stores.ports, lane);

    const run = await appendFlow(stores.ports, lane, session, 'a-1', ['other']);
    expect(stepError(run)).toBe('Stream.AttemptIdentityConflict');
    expect(await snapshot(stores.ports, lane)).toEqual(before);
  });

  it('after a crash following the WAL PUT (no intent yet), other records under the attempt are refused; the durable WAL object stays', async () => {
    const { lane, session } = await newLane(stores.ports, 'reuse-walonly');
    // WriteWal alone: the WAL PUT is durable, the worker died before RecordIntent.
    await writeWal({ ...lane, attemptId: 'a-1', session, records: b64(['one', 'two']) }, stores.ports);
    const before = await snapshot(stores.ports, lane);
    expect(before.objects).toHaveLength(1);

    const run = await appendFlow(stores.ports, lane, session, 'a-1', ['evil']);
    expect(run).toMatchObject({ status: 'FAILED', error: 'Stream.Rejected' });
    expect(stepError(run)).toBe('Stream.AttemptIdentityConflict');
    expect(await snapshot(stores.ports, lane)).toEqual(before);

    // Re-running the same attempt with its own records completes it.
    expect(await appendFlow(stores.ports, lane, session, 'a-1', ['one', 'two'])).toMatchObject({
      output: { status: 'KNOWN_COMMITTED', start: 0, end: 2 },
    });
    await expectLaneInvariant(stores.ports, lane, [{ attemptId: 'a-1', records: ['one', 'two'] }]);
  });

  it('racing appends of one attempt id with different records: one batch commits, the other is refused, no durable WAL object is ever overwritten', async () => {
    const { lane, session } = await newLane(stores.ports, 'reuse-race');
    const acknowledged = [];
    for (let round = 0; round < 4; round++) {
      const attemptId = `race-${round}`;
      const a = batchOf(`${attemptId}-a`, 2);
      const b = batchOf(`${attemptId}-b`, 3);
      const outcomes = await Promise.allSettled([
        appendBatch({ ...lane, attemptId, session, records: records(a) }, stores.ports),
        appendBatch({ ...lane, attemptId, session, records: records(b) }, stores.ports),
      ]);
      const committed = outcomes.flatMap((o, i) =>
        o.status === 'fulfilled' && o.value.status === 'KNOWN_COMMITTED' ? [i] : [],
      );
      const refused = outcomes.flatMap((o, i) =>
        o.status === 'rejected' && (o.reason as { code?: string }).code === 'stream.attempt_identity_conflict'
          ? [i]
          : [],
      );
      expect(committed, JSON.stringify(outcomes)).toHaveLength(1);
      expect(refused).toHaveLength(1);
      acknowledged.push({ attemptId, records: committed[0] === 0 ? a : b });
    }
    // Every committed range reads back exactly the batch its appender was told committed.
    await expectLaneInvariant(stores.ports, lane, acknowledged);
    const commits = (await stores.ports.authority.query(laneKeys.pk(lane), 'commit#')) as unknown as CommitRecord[];
    for (const c of commits) expect(c.walKey).toBe(`wal/${lane.stream}/0/${c.attemptId}/${c.walSha256}.wal`);
  });
});

describe('reads never hand out a position past the committed end', () => {
  it('from past the end is stream.offset_out_of_range; at the end is no records with next = end', async () => {
    const { lane, session } = await newLane(stores.ports, 'read-end');
    await appendFlow(stores.ports, lane, session, 'a-1', ['one', 'two', 'three']);
    await expect(readStream({ ...lane, from: 7 }, stores.ports)).rejects.toMatchObject({
      name: 'Stream.OffsetOutOfRange',
      code: 'stream.offset_out_of_range',
    });
    await expect(readStream({ ...lane, from: 4 }, stores.ports)).rejects.toMatchObject({
      code: 'stream.offset_out_of_range',
    });
    expect(await readStream({ ...lane, from: 3 }, stores.ports)).toMatchObject({
      records: [],
      next: 3,
      committedEnd: 3,
    });
  });
});

describe('refused stream flows mutate nothing', () => {
  it('resolve of a missing stream or partition is stream.lane_missing and writes no intent', async () => {
    const { lane } = await newLane(stores.ports, 'resolve-missing');
    for (const missing of [
      { stream: `nosuch-${randomUUID().slice(0, 6)}`, partition: 0 },
      { stream: lane.stream, partition: 5 },
    ]) {
      const run = await resolveFlow(stores.ports, missing, 'x');
      expect(run).toMatchObject({ status: 'FAILED' });
      expect(stepError(run)).toBe('Stream.LaneMissing');
      expect(await stores.ports.authority.get(laneKeys.spent(missing, 'x'))).toBeUndefined();
    }
  });

  it('an append with a session the lane never issued is refused: no spent marker, no WAL object', async () => {
    const { lane, session } = await newLane(stores.ports, 'forged');
    const before = await snapshot(stores.ports, lane);
    const forged: Fence[] = [
      { owner: 'mallory', session: 'forged-session-0001', epoch: session.epoch },
      { owner: session.owner, session: 'forged-session-0002', epoch: session.epoch + 5 },
    ];
    for (const [i, fence] of forged.entries()) {
      const run = await appendFlow(stores.ports, lane, fence, `f-${i}`, ['x']);
      expect(run).toMatchObject({ status: 'FAILED', error: 'Stream.Rejected' });
      expect(stepError(run)).toBe('Stream.UnknownSession');
    }
    expect(await snapshot(stores.ports, lane)).toEqual(before);
    // A lane never taken over issued no session at all.
    const fresh = { stream: `s-untaken-${randomUUID().slice(0, 6)}`, partition: 0 };
    await createStream({ stream: fresh.stream, partitions: 1 }, stores.ports);
    const untaken = await appendFlow(stores.ports, fresh, forged[0]!, 'f-x', ['x']);
    expect(stepError(untaken)).toBe('Stream.UnknownSession');
    expect(await stores.ports.authority.get(laneKeys.spent(fresh, 'f-x'))).toBeUndefined();
  });

  it('a forged session below the current epoch is refused too (the takeover records what each epoch issued); a genuine stale one is fenced', async () => {
    const { lane, session: stale } = await newLane(stores.ports, 'forged-below');
    await takeOverWithNewSession(lane, 'test-writer', stores.ports);
    const before = await snapshot(stores.ports, lane);
    for (const [i, fence] of [
      { ...stale, session: 'forged-session-0003' },
      { ...stale, owner: 'mallory' },
    ].entries()) {
      const run = await appendFlow(stores.ports, lane, fence, `fb-${i}`, ['x']);
      expect(stepError(run)).toBe('Stream.UnknownSession');
    }
    expect(await snapshot(stores.ports, lane)).toEqual(before);
    // The session epoch 1 really issued is stale, not forged: KNOWN_NOT_COMMITTED.
    expect(statusOf(await appendFlow(stores.ports, lane, stale, 'fb-stale', ['x']))).toBe('KNOWN_NOT_COMMITTED');
  });

  it('stream-takeover without owner or session is refused without a takeover; its output never carries the session id', async () => {
    const { lane, session } = await newLane(stores.ports, 'takeover-input');
    const before = await snapshot(stores.ports, lane);
    for (const input of [
      { ...lane },
      { ...lane, owner: 'ops' },
      { ...lane, session: randomUUID() },
      { ...lane, owner: 'ops', session: 'short' },
    ]) {
      const run = await runFlow('stream-takeover', input, { ports: stores.ports, retryIntervalMs: 0 });
      expect(run, JSON.stringify(input)).toMatchObject({ status: 'FAILED', error: 'Stream.Rejected' });
    }
    expect(await snapshot(stores.ports, lane)).toEqual(before);

    const minted = randomUUID();
    const run = await runFlow(
      'stream-takeover',
      { ...lane, owner: 'ops', session: minted },
      { ports: stores.ports, retryIntervalMs: 0 },
    );
    expect(run.output).toEqual({ ...lane, owner: 'ops', epoch: session.epoch + 1, committedEnd: 0 });
    expect(JSON.stringify(run.output)).not.toContain(minted);
  });
});

import { beforeAll, describe, expect, it } from 'vitest';
import { ATTEMPT_TIME_MARGIN_MS } from '../../src/domain/attempt-time.js';
import { laneKeys, type LaneHead, type LaneRef } from '../../src/domain/stream.js';
import { runFlow, type FlowResult } from '../../src/local/flow-runner.js';
import type { Fence } from '../../src/domain/fence.js';
import type { Ports } from '../../src/ports/index.js';
import { appendBatch } from '../../src/stream/append-batch.js';
import { LaneWriter } from '../../src/stream/append/lane-writer.js';
import { STREAM_CUT_POINTS } from '../../src/stream/cut-points.js';
import { resolveAppend } from '../../src/stream/resolve.js';
import { trimLane } from '../../src/stream/trim.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { appendFlow, batchOf, laneSnapshot, newLane, resolveFlow } from '../support/stream-fixture.js';
import { listAll, MovableClock } from '../faults/stream-gc-world.js';

/**
 * The attempt window on every append path (docs/stream-log.md "The stream log"; src/domain/attempt-time.ts):
 * a time-marked attempt id older than `now − window` is refused (Stream.AttemptExpired) and
 * one more than 15 minutes ahead (Stream.AttemptTimeFuture) — through the flow, appendBatch
 * and a LaneWriter alike — with nothing written; inside the window a re-run still answers
 * KNOWN_COMMITTED after GC collected its WAL object; `stream resolve` of an expired attempt
 * never spends it. Real DynamoDB Local and S3 emulator, a clock the test moves.
 */
let stores: TestStores;
beforeAll(async () => {
  stores = await freshStores();
});

const DAY = 86_400_000;
const WINDOW_MS = 7 * DAY;
const encode = (rs: string[]) => rs.map((r) => Buffer.from(r));

/** Ports on the test's stores with a clock the test moves. */
function movable(): { ports: Ports; clock: MovableClock } {
  const clock = new MovableClock();
  return { ports: { ...stores.ports, clock }, clock };
}

/** The step error a Rejected flow caught (what the CLI prints). */
function stepError(run: FlowResult): { error?: string; cause?: string } {
  const failed = run.events.filter((e) => e.type === 'StateFailed' && e.error && e.error !== 'Stream.Rejected').pop();
  return { error: failed?.error ?? run.error, cause: failed?.cause ?? run.cause };
}

/**
 * Every append path refuses the attempt with `name`, and nothing of the lane changes. A
 * LaneWriter re-runs only ids it minted itself (`writer`: the one that minted this one);
 * any other id a fresh writer refuses as not its own, before it loads or claims anything.
 */
async function expectRefusedEverywhere(
  ports: Ports,
  lane: LaneRef,
  fence: Fence,
  attemptId: string,
  records: string[],
  name: string,
  writer?: LaneWriter,
): Promise<void> {
  const before = await laneSnapshot(ports, lane);
  const run = await appendFlow(ports, lane, fence, attemptId, records);
  expect(run).toMatchObject({ status: 'FAILED', error: 'Stream.Rejected' });
  expect(stepError(run).error).toBe(name);
  await expect(
    appendBatch({ ...lane, attemptId, session: fence, records: encode(records) }, ports),
  ).rejects.toMatchObject({
    name,
  });
  if (writer) await expect(writer.append(encode(records), attemptId)).rejects.toMatchObject({ name });
  else
    await expect(new LaneWriter(ports, lane, fence).append(encode(records), attemptId)).rejects.toMatchObject({
      code: 'stream.invalid_attempt',
    });
  expect(await laneSnapshot(ports, lane)).toEqual(before);
}

describe("a time-marked attempt past its lane's attempt window", () => {
  it('re-run through the flow, appendBatch or a LaneWriter is stream.attempt_expired and writes nothing; an attempt inside the window is not', async () => {
    const { ports, clock } = movable();
    const { lane, session } = await newLane(ports, 'window-expired');
    const committed = `orders.t${clock.now().getTime()}-g0`;
    const records = batchOf('expired', 3);
    expect(await appendFlow(ports, lane, session, committed, records)).toMatchObject({
      output: { status: 'KNOWN_COMMITTED', start: 0, end: 3 },
    });
    const writer = new LaneWriter(ports, lane, session);
    const minted = writer.nextAttemptId();
    expect(minted).toMatch(
      new RegExp(`^w[0-9a-f]{8}\\.e${session.epoch}\\.t${clock.now().getTime().toString().slice(0, 8)}\\d{5}\\.1$`),
    );
    expect(await writer.append(encode(['w-1']), minted)).toMatchObject({ status: 'KNOWN_COMMITTED', start: 3, end: 4 });

    // At the window's end it is still the same append (its WAL object is there): KNOWN_COMMITTED.
    clock.advance(WINDOW_MS - 60_000);
    expect(
      await appendBatch({ ...lane, attemptId: committed, session, records: encode(records) }, ports),
    ).toMatchObject({ status: 'KNOWN_COMMITTED', start: 0, end: 3 });

    clock.advance(2 * 60_000);
    await expectRefusedEverywhere(ports, lane, session, committed, records, 'Stream.AttemptExpired');
    await expectRefusedEverywhere(ports, lane, session, minted, ['w-1'], 'Stream.AttemptExpired', writer);
    // Other records under it, or an expired id never used: refused the same way, before any evidence is read.
    await expectRefusedEverywhere(ports, lane, session, committed, ['other'], 'Stream.AttemptExpired');
    await expectRefusedEverywhere(
      ports,
      lane,
      session,
      `fresh.t${clock.now().getTime() - WINDOW_MS - 1}`,
      ['x'],
      'Stream.AttemptExpired',
    );
    // The refusal says where the records' fate is, and the window.
    const { cause } = stepError(await appendFlow(ports, lane, session, committed, records));
    expect(cause).toContain('attempt window of 7d');
    expect(cause).toContain('commit records');

    // Unmarked ids and fresh marked ones append as before (the writer releases its slot first).
    expect(await writer.close()).toMatchObject({ released: true });
    expect(await appendFlow(ports, lane, session, 'plain-1', ['p'])).toMatchObject({
      output: { status: 'KNOWN_COMMITTED', start: 4, end: 5 },
    });
    // (A new writer: the first one's carried head is stale since the flow appended.)
    expect(await new LaneWriter(ports, lane, session).append(encode(['w-2']))).toMatchObject({
      status: 'KNOWN_COMMITTED',
      start: 5,
      end: 6,
    });
  });

  it('a lane created with a shorter window refuses sooner; a mark more than 15 minutes ahead is stream.attempt_time_future on every path', async () => {
    const { ports, clock } = movable();
    const { lane, session } = await newLane(ports, 'window-short');
    await ports.authority.update(
      'test.seed',
      laneKeys.head(lane),
      { version: ((await ports.authority.get(laneKeys.head(lane))) as unknown as LaneHead).version },
      { attemptWindowSeconds: 3600 },
    );
    const now = clock.now().getTime();
    await expectRefusedEverywhere(ports, lane, session, `batch.t${now - 3_600_001}`, ['a'], 'Stream.AttemptExpired');
    expect(await appendFlow(ports, lane, session, `batch.t${now - 3_500_000}`, ['a'])).toMatchObject({
      output: { status: 'KNOWN_COMMITTED' },
    });

    await expectRefusedEverywhere(
      ports,
      lane,
      session,
      `ahead.t${now + ATTEMPT_TIME_MARGIN_MS + 60_000}`,
      ['b'],
      'Stream.AttemptTimeFuture',
    );
    expect(
      await appendFlow(ports, lane, session, `near.t${now + ATTEMPT_TIME_MARGIN_MS - 60_000}`, ['b']),
    ).toMatchObject({ output: { status: 'KNOWN_COMMITTED' } });
    // Resolve refuses a future mark too, nothing written.
    const before = await laneSnapshot(ports, lane);
    const resolve = await resolveFlow(ports, lane, `ahead.t${now + ATTEMPT_TIME_MARGIN_MS + 60_000}`);
    expect(stepError(resolve).error).toBe('Stream.AttemptTimeFuture');
    expect(await laneSnapshot(ports, lane)).toEqual(before);
  });
});

/** A committed marked attempt whose WAL object GC collected (trimmed): its collected record stands for it. */
async function collectedAttemptLane(label: string) {
  const { ports, clock } = movable();
  const { lane, session } = await newLane(ports, label);
  const attemptId = `load.t${clock.now().getTime()}`;
  const records = batchOf(label, 2);
  expect(await appendFlow(ports, lane, session, attemptId, records)).toMatchObject({
    output: { status: 'KNOWN_COMMITTED', start: 0, end: 2 },
  });
  expect(await appendFlow(ports, lane, session, 'next', ['n'])).toMatchObject({
    output: { status: 'KNOWN_COMMITTED', start: 2, end: 3 },
  });
  await trimLane({ ...lane, to: 2 }, ports);
  const gc = async () => {
    const run = await runFlow('stream-gc', { ...lane, grace: '10m' }, { ports, retryIntervalMs: 0 });
    expect(run.status, `${run.error}: ${run.cause}`).toBe('SUCCEEDED');
    return (run.output as { totals: { retired: { attempts: number } } }).totals;
  };
  await gc();
  expect((await listAll(ports, lane)).filter((k) => k.includes(`/${attemptId}/`))).toEqual([]);
  const collected = laneKeys.collected(lane, attemptId);
  expect(await ports.authority.get(collected)).toMatchObject({ attemptId, start: 0, end: 2 });
  return { ports, clock, lane, session, attemptId, records, gc, collected };
}

describe('after GC collected the WAL object of a marked attempt', () => {
  it('inside the window a re-run still answers KNOWN_COMMITTED with the same range and appends nothing; past it, re-runs are refused and resolve reports the record without spending', async () => {
    const { ports, clock, lane, session, attemptId, records } = await collectedAttemptLane('window-collected');
    clock.advance(6 * DAY);
    const head = await ports.authority.get(laneKeys.head(lane));
    expect(await appendFlow(ports, lane, session, attemptId, records)).toMatchObject({
      status: 'SUCCEEDED',
      output: { status: 'KNOWN_COMMITTED', start: 0, end: 2 },
    });
    expect(await appendBatch({ ...lane, attemptId, session, records: encode(records) }, ports)).toMatchObject({
      status: 'KNOWN_COMMITTED',
      start: 0,
      end: 2,
    });
    expect((await ports.authority.get(laneKeys.head(lane)))?.committedEnd).toBe(head!.committedEnd);
    expect(await resolveAppend({ ...lane, attemptId }, ports)).toMatchObject({
      status: 'KNOWN_COMMITTED',
      start: 0,
      end: 2,
    });

    clock.advance(DAY + 60_000);
    await expectRefusedEverywhere(ports, lane, session, attemptId, records, 'Stream.AttemptExpired');
    // Expired, its collected record still there: resolve reports what it proves and writes no spent marker.
    expect(await resolveFlow(ports, lane, attemptId)).toMatchObject({
      status: 'SUCCEEDED',
      output: { status: 'KNOWN_COMMITTED', start: 0, end: 2 },
    });
    expect(await ports.authority.get(laneKeys.spent(lane, attemptId))).toBeUndefined();
  });
});

describe("GC retention of a marked attempt's evidence", () => {
  it('keeps the collected record inside the window and the margin after it, then retires it; its re-runs and its resolve stay refused, nothing written', async () => {
    const { ports, clock, lane, session, attemptId, records, gc, collected } =
      await collectedAttemptLane('window-retired');
    for (const step of [WINDOW_MS - 60_000, 2 * 60_000, ATTEMPT_TIME_MARGIN_MS - 2 * 60_000]) {
      clock.advance(step);
      expect((await gc()).retired.attempts).toBe(0);
      expect(await ports.authority.get(collected)).toBeDefined();
    }
    clock.advance(2 * 60_000);
    expect((await gc()).retired.attempts).toBe(1);
    expect(await ports.authority.get(collected)).toBeUndefined();

    // Its evidence gone, every re-run is still refused, and resolve refuses: nothing written.
    await expectRefusedEverywhere(ports, lane, session, attemptId, records, 'Stream.AttemptExpired');
    const before = await laneSnapshot(ports, lane);
    await expect(resolveAppend({ ...lane, attemptId }, ports)).rejects.toMatchObject({
      name: 'Stream.AttemptExpired',
      code: 'stream.attempt_expired',
    });
    const resolved = await resolveFlow(ports, lane, attemptId);
    expect(resolved).toMatchObject({ status: 'FAILED', error: 'Stream.Rejected' });
    expect(stepError(resolved).error).toBe('Stream.AttemptExpired');
    expect(await laneSnapshot(ports, lane)).toEqual(before);
  });
});

describe('`stream resolve` of an expired attempt that holds the lane suspended', () => {
  it('lifts the suspension only once no clock within the margin accepts it, without a spent marker; its re-runs stay refused, the lane appends again', async () => {
    const { ports, clock } = movable();
    const { lane, session } = await newLane(ports, 'window-suspended');
    const attemptId = `held.t${clock.now().getTime()}`;
    stores.faults.arm(`${STREAM_CUT_POINTS.headCas}:lose-request*`);
    let unknown;
    try {
      unknown = await appendBatch({ ...lane, attemptId, session, records: encode(['h']) }, ports);
    } finally {
      stores.faults.disarm();
    }
    expect(unknown.status).toBe('MAY_HAVE_COMMITTED');
    expect(await ports.authority.get(laneKeys.head(lane))).toMatchObject({ suspendedBy: attemptId });

    clock.advance(WINDOW_MS + 60_000);
    const before = await laneSnapshot(ports, lane);
    await expect(resolveAppend({ ...lane, attemptId }, ports)).rejects.toMatchObject({
      name: 'Stream.AttemptExpired',
      message: expect.stringContaining('again after'),
    });
    expect(await laneSnapshot(ports, lane)).toEqual(before);

    clock.advance(ATTEMPT_TIME_MARGIN_MS);
    const resolved = await resolveFlow(ports, lane, attemptId);
    expect(resolved).toMatchObject({
      status: 'SUCCEEDED',
      output: { status: 'KNOWN_NOT_COMMITTED', unsuspended: true },
    });
    const head = (await ports.authority.get(laneKeys.head(lane))) as unknown as LaneHead;
    expect(head.suspendedBy).toBeUndefined();
    expect(head.committedEnd).toBe(0);
    expect(await ports.authority.get(laneKeys.spent(lane, attemptId))).toBeUndefined();
    await expectRefusedEverywhere(ports, lane, session, attemptId, ['h'], 'Stream.AttemptExpired');
    expect(await appendFlow(ports, lane, session, 'after', ['a'])).toMatchObject({
      output: { status: 'KNOWN_COMMITTED', start: 0, end: 1 },
    });
  });
});

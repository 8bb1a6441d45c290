import { beforeAll, describe, expect, it } from 'vitest';
import { laneKeys, type LaneHead, type LaneRef } from '../../src/domain/stream.js';
import type { Ports } from '../../src/ports/index.js';
import { LaneWriter } from '../../src/stream/append/lane-writer.js';
import { STREAM_CUT_POINTS } from '../../src/stream/cut-points.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { appendFlow, batchOf, expectLaneInvariant, newLane, resolveFlow, statusOf } from '../support/stream-fixture.js';

/**
 * The no-second-append rule does not rest on SuspendLane landing (docs/stream-log.md "The stream log"):
 * an append that reads the head itself suspends the lane for its own attempt before its
 * head CAS goes out (src/stream/append/claim-turn.ts), and the CAS lifts it when it
 * applies. An execution that ends between an unknown head outcome and SuspendLane
 * (retries exhausted, the Express time limit) leaves the lane suspended by the original
 * attempt: every new attempt is refused until that attempt is resolved.
 */
let stores: TestStores;
beforeAll(async () => {
  stores = await freshStores();
});

const bytes = (rs: string[]) => rs.map((r) => new TextEncoder().encode(r));
const headOf = async (ports: Ports, lane: LaneRef) =>
  (await ports.authority.get(laneKeys.head(lane))) as unknown as LaneHead;

describe('an append whose execution ends right after an unknown head outcome', () => {
  it('leaves the lane suspended by its attempt: a new attempt is refused (flow and LaneWriter alike) until `stream resolve` settles it, then appends work again', async () => {
    const { lane, session } = await newLane(stores.ports, 'unknown-killed');
    // Every head CAS request is lost, then SuspendLane crashes on every try (its retries
    // exhausted): the execution ends with the outcome unknown and SuspendLane never landed.
    // (The first hit of stream.append.suspend is the attempt's own claim before its CAS.)
    const injector = stores.faults.arm(
      `${STREAM_CUT_POINTS.headCas}:lose-request*,${STREAM_CUT_POINTS.suspend}:crash-before@2*`,
    );
    const a1 = await appendFlow(stores.ports, lane, session, 'a1', batchOf('a1', 3));
    stores.faults.disarm();
    expect(a1).toMatchObject({ status: 'FAILED', error: 'Cutpoint.WorkerCrashed' });
    expect(injector.fired.filter((f) => f.cutPoint === STREAM_CUT_POINTS.suspend).length).toBeGreaterThan(0);

    // A new attempt (the same records, a new id: the duplicate the rule forbids) is refused,
    // with the stable reason naming the suspension by the original attempt.
    const a2 = await appendFlow(stores.ports, lane, session, 'a2', batchOf('a1', 3));
    expect(a2.output).toMatchObject({ status: 'KNOWN_NOT_COMMITTED', reason: 'Stream.LaneSuspended' });
    expect((await headOf(stores.ports, lane)).suspendedBy).toBe('a1');
    const writer = new LaneWriter(stores.ports, lane, session);
    expect(await writer.append(bytes(batchOf('w', 1)))).toMatchObject({
      status: 'KNOWN_NOT_COMMITTED',
      reason: 'Stream.LaneSuspended',
    });
    expect((await headOf(stores.ports, lane)).committedEnd).toBe(0);

    // `cutpoint stream resolve` (the stream-resolve-append flow) settles the original attempt.
    const resolved = await resolveFlow(stores.ports, lane, 'a1');
    expect(resolved.output).toMatchObject({ status: 'KNOWN_NOT_COMMITTED', attemptId: 'a1', unsuspended: true });
    const a3 = await appendFlow(stores.ports, lane, session, 'a3', batchOf('a3', 2));
    expect(a3.output).toMatchObject({ status: 'KNOWN_COMMITTED', start: 0, end: 2 });
    const w = { attemptId: writer.nextAttemptId(), records: batchOf('w2', 1) };
    expect(await writer.append(bytes(w.records), w.attemptId)).toMatchObject({
      status: 'KNOWN_COMMITTED',
      start: 2,
      end: 3,
    });
    await expectLaneInvariant(stores.ports, lane, [{ attemptId: 'a3', records: batchOf('a3', 2) }, w]);
  });

  it('the attempt holds the lane while its head CAS is in flight, and its own CAS lifts the hold', async () => {
    const { lane, session } = await newLane(stores.ports, 'unknown-held');
    const held = stores.hold(STREAM_CUT_POINTS.headCas);
    const a1 = appendFlow(stores.ports, lane, session, 'a1', batchOf('a1', 2));
    await held.reached;
    expect(
      (await headOf(stores.ports, lane)).suspendedBy,
      'a head CAS went out on a lane its attempt does not hold',
    ).toBe('a1');
    held.release();
    expect(statusOf(await a1)).toBe('KNOWN_COMMITTED');
    expect(await headOf(stores.ports, lane)).toMatchObject({ committedEnd: 2, lastAttemptId: 'a1' });
    expect((await headOf(stores.ports, lane)).suspendedBy).toBeUndefined();
    await expectLaneInvariant(stores.ports, lane, [{ attemptId: 'a1', records: batchOf('a1', 2) }]);
  });

  it('a LaneWriter opened on a lane suspended by a MAY_HAVE_COMMITTED attempt appends nothing until it is resolved', async () => {
    const { lane, session } = await newLane(stores.ports, 'unknown-writer');
    stores.faults.arm(`${STREAM_CUT_POINTS.headCas}:lose-request*`);
    expect(statusOf(await appendFlow(stores.ports, lane, session, 'a1', batchOf('a1', 2)))).toBe('MAY_HAVE_COMMITTED');
    stores.faults.disarm();
    const writer = new LaneWriter(stores.ports, lane, session);
    expect(await writer.append(bytes(batchOf('w', 2)))).toMatchObject({
      status: 'KNOWN_NOT_COMMITTED',
      reason: 'Stream.LaneSuspended',
    });
    expect((await headOf(stores.ports, lane)).committedEnd).toBe(0);
    expect((await resolveFlow(stores.ports, lane, 'a1')).output).toMatchObject({
      status: 'KNOWN_NOT_COMMITTED',
      unsuspended: true,
    });
    const w = { attemptId: writer.nextAttemptId(), records: batchOf('w2', 2) };
    expect(await writer.append(bytes(w.records), w.attemptId)).toMatchObject({
      status: 'KNOWN_COMMITTED',
      start: 0,
      end: 2,
    });
    await expectLaneInvariant(stores.ports, lane, [w]);
  });
});

import { beforeAll, describe, expect, it } from 'vitest';
import type { FaultKind } from '../../src/domain/faults.js';
import { runFlow, type FlowResult } from '../../src/local/flow-runner.js';
import { laneKeys, type LaneRef } from '../../src/domain/stream.js';
import { LaneWriter } from '../../src/stream/append/lane-writer.js';
import { STREAM_CUT_POINTS } from '../../src/stream/cut-points.js';
import { takeOverWithNewSession } from '../../src/stream/takeover.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import {
  appendFlow,
  batchOf,
  expectLaneInvariant,
  newLane,
  resolveFlow,
  statusOf,
  type Acknowledged,
} from '../support/stream-fixture.js';
import { withKinds } from '../support/matrix-lane.js';

/**
 * The append fault matrix (docs/rules.md#append-cut-points): every row's cut point × every
 * fault kind, run through statemachines/stream-append.asl.json; then recovery (resolve the
 * original attempt if the lane was suspended, re-run an attempt whose execution failed);
 * then a clean append; then the lane invariant. Nothing is ever appended twice.
 */
let stores: TestStores;
beforeAll(async () => {
  stores = await freshStores();
});

/**
 * Each seed row and the cut point(s) where its effect happens. There is no intent item:
 * "WAL durable, before intent" and "Intent, before head CAS" are the same durable state
 * (the WAL object, bound by its metadata to one start offset and fence epoch) and both are
 * faults at stream.append.wal (crash-after, lose-response) or before the head CAS
 * (stream.append.head-cas crash-before). Generation 0 and the index are off the
 * acknowledged path (test/faults/stream-gen0.matrix.test.ts).
 */
const ROWS: Array<[row: string, spec: (kind: FaultKind) => string]> = [
  [
    'Before primary WAL I/O / WAL partial or uncertain / WAL durable, before head CAS',
    (k) => `${STREAM_CUT_POINTS.wal}:${k}`,
  ],
  ['Before head CAS / head CAS condition / head CAS unknown (re-issued)', (k) => `${STREAM_CUT_POINTS.headCas}:${k}`],
  [
    'Head CAS unknown for good, then the lane suspension',
    (k) => `${STREAM_CUT_POINTS.headCas}:lose-request*,${STREAM_CUT_POINTS.suspend}:${k}`,
  ],
];

const bytes = (rs: string[]) => rs.map((r) => new TextEncoder().encode(r));
const resolveWriterFlow = (lane: LaneRef, writerId: string): Promise<FlowResult> =>
  runFlow('stream-resolve-append', { ...lane, writerId }, { ports: stores.ports, retryIntervalMs: 0 });

const oneShot = withKinds(ROWS).map(([[row, spec], kind]) => [row, kind, spec(kind)] as const);
const persistent = withKinds(ROWS, 3).map(([[row, spec], kind]) => [row, kind, spec(kind)] as const);

/**
 * Runs one faulted append and everything an operator would do after it, returning the
 * batches that were acknowledged (KNOWN_COMMITTED).
 */
async function appendThenRecover(
  spec: string,
  label: string,
): Promise<{ acknowledged: Acknowledged[]; first: string | undefined; lane: { stream: string; partition: number } }> {
  const { lane, session } = await newLane(stores.ports, label);
  const acknowledged: Acknowledged[] = [];
  const a1 = { attemptId: 'a1', records: batchOf('a1', 3) };
  const injector = stores.faults.arm(spec);
  const first = await appendFlow(stores.ports, lane, session, a1.attemptId, a1.records);
  stores.faults.disarm();
  expect(injector.fired.length, `no fault fired for ${spec}`).toBeGreaterThan(0);

  let status = first.status === 'SUCCEEDED' ? statusOf(first) : 'FAILED';
  if (status === 'MAY_HAVE_COMMITTED') {
    // An unknown outcome is never permission for a second append: resolve the original.
    const resolved = await resolveFlow(stores.ports, lane, a1.attemptId);
    expect(resolved.status, `${resolved.error}: ${resolved.cause}`).toBe('SUCCEEDED');
    status = statusOf(resolved);
  } else if (status === 'FAILED') {
    // The execution failed: the outcome is unknown to the client, so the same attempt
    // is run again (never a new one) — it finishes or proves itself.
    const again = await appendFlow(stores.ports, lane, session, a1.attemptId, a1.records);
    status = statusOf(again);
  }
  expect(['KNOWN_COMMITTED', 'KNOWN_NOT_COMMITTED']).toContain(status);
  if (status === 'KNOWN_COMMITTED') acknowledged.push(a1);

  // The lane keeps working: a clean append lands right after.
  const a2 = { attemptId: 'a2', records: batchOf('a2', 2) };
  const next = await appendFlow(stores.ports, lane, session, a2.attemptId, a2.records);
  expect(next.output).toMatchObject({ status: 'KNOWN_COMMITTED', start: status === 'KNOWN_COMMITTED' ? 3 : 0 });
  acknowledged.push(a2);

  // Re-running the first attempt never appends it twice.
  const replay = await appendFlow(stores.ports, lane, session, a1.attemptId, a1.records);
  expect(statusOf(replay)).toBe(status === 'KNOWN_COMMITTED' ? 'KNOWN_COMMITTED' : 'KNOWN_NOT_COMMITTED');
  return { acknowledged, first: first.status === 'SUCCEEDED' ? statusOf(first) : 'FAILED', lane };
}

describe('one fault at each append cut point', () => {
  it.each(oneShot)('%s × %s (%s)', async (_row, kind, spec) => {
    const { acknowledged, first, lane } = await appendThenRecover(spec, kind);
    // What the append-outcomes table (docs/rules.md#append-outcomes) says each row ends as.
    if (spec.startsWith(`${STREAM_CUT_POINTS.headCas}:lose-request*`)) {
      expect(first).toBe('MAY_HAVE_COMMITTED');
      expect(acknowledged.map((a) => a.attemptId)).toEqual(['a2']);
    } else {
      expect(first).toBe('KNOWN_COMMITTED');
      expect(acknowledged.map((a) => a.attemptId)).toEqual(['a1', 'a2']);
    }
    await expectLaneInvariant(stores.ports, lane, acknowledged);
  });
});

describe('a fault that persists at each append cut point', () => {
  it.each(persistent)('%s × %s* (%s)', async (_row, kind, spec) => {
    const persistent = spec.replace(/:([a-z-]+)$/, (_m, k: string) => `:${k}${k === 'delay' ? '=5' : ''}*`);
    const { acknowledged, lane } = await appendThenRecover(persistent, `p-${kind}`);
    await expectLaneInvariant(stores.ports, lane, acknowledged);
  });
});

describe('Head CAS condition fails: a takeover between intent and head CAS', () => {
  it('the stale attempt is KNOWN_NOT_COMMITTED, its bytes in orphan grace, the new owner appends at its offset', async () => {
    const { lane, session } = await newLane(stores.ports, 'fenced');
    // The stale append is held at its head CAS until the takeover has happened (no timing involved).
    const held = stores.hold(STREAM_CUT_POINTS.headCas);
    const stale = appendFlow(stores.ports, lane, session, 'old-1', batchOf('old-1', 2));
    await held.reached;
    const fresh = await takeOverWithNewSession(lane, 'new-writer', stores.ports);
    held.release();
    const staleResult = await stale;
    expect(staleResult.output).toMatchObject({ status: 'KNOWN_NOT_COMMITTED', reason: 'Stream.Fenced' });
    const next = await appendFlow(stores.ports, lane, fresh, 'new-1', batchOf('new-1', 1));
    expect(next.output).toMatchObject({ status: 'KNOWN_COMMITTED', start: 0, end: 1 });
    await expectLaneInvariant(stores.ports, lane, [{ attemptId: 'new-1', records: batchOf('new-1', 1) }]);
  });
});

describe('faults while resolving a MAY_HAVE_COMMITTED append', () => {
  it.each(withKinds([STREAM_CUT_POINTS.resolveFence, STREAM_CUT_POINTS.unsuspend]))(
    '%s × %s → proven not committed, lane released',
    async (cutPoint, kind) => {
      const { lane, session } = await newLane(stores.ports, `r-${kind}`);
      stores.faults.arm(`${STREAM_CUT_POINTS.headCas}:lose-request*`);
      const first = await appendFlow(stores.ports, lane, session, 'a1', batchOf('a1', 2));
      expect(statusOf(first)).toBe('MAY_HAVE_COMMITTED');
      // While suspended, nothing else appends: not a new attempt, not the same one.
      stores.faults.disarm();
      expect((await appendFlow(stores.ports, lane, session, 'a9', batchOf('a9', 1))).output).toMatchObject({
        status: 'KNOWN_NOT_COMMITTED',
      });
      stores.faults.arm(`${cutPoint}:${kind}`);
      let resolved = await resolveFlow(stores.ports, lane, 'a1');
      stores.faults.disarm();
      if (resolved.status !== 'SUCCEEDED') resolved = await resolveFlow(stores.ports, lane, 'a1');
      expect(resolved.output).toMatchObject({ status: 'KNOWN_NOT_COMMITTED', attemptId: 'a1' });
      const next = await appendFlow(stores.ports, lane, session, 'a2', batchOf('a2', 2));
      expect(next.output).toMatchObject({ status: 'KNOWN_COMMITTED', start: 0 });
      await expectLaneInvariant(stores.ports, lane, [{ attemptId: 'a2', records: batchOf('a2', 2) }]);
    },
  );
});

describe('faults while resolving a LaneWriter that died holding its lane (stream resolve --writer)', () => {
  const cuts = [STREAM_CUT_POINTS.resolveFence, STREAM_CUT_POINTS.writerRelease];
  const once = withKinds(cuts).map(([cut, kind]) => [cut, kind, `${cut}:${kind}`] as const);
  // Persisting, a fault ends the execution with the slot still held: the same command again finishes it.
  const persisting = withKinds(cuts, 3, ['crash-before', 'fail', 'lose-request']).map(
    ([cut, kind]) => [cut, `${kind}*`, `${cut}:${kind}*`] as const,
  );
  it.each([...once, ...persisting])(
    '%s × %s → every attempt settled, the slot released; a re-run reports the same',
    async (_cut, kind, spec) => {
      const { lane, session } = await newLane(stores.ports, `rw-${kind}`);
      // b1 commits; b2's head CAS outcome stays unknown and SuspendLane keeps crashing: the writer gives up holding the slot.
      const dead = new LaneWriter(stores.ports, lane, session);
      const b1 = { attemptId: dead.nextAttemptId(), records: batchOf('b1', 2) };
      expect(await dead.append(bytes(b1.records), b1.attemptId)).toMatchObject({ status: 'KNOWN_COMMITTED' });
      const b2 = { attemptId: dead.nextAttemptId(), records: batchOf('b2', 1) };
      stores.faults.arm(`${STREAM_CUT_POINTS.headCas}:lose-request*,${STREAM_CUT_POINTS.suspend}:crash-before*`);
      await expect(dead.append(bytes(b2.records), b2.attemptId)).rejects.toMatchObject({
        name: 'Cutpoint.WorkerCrashed',
      });
      stores.faults.arm(spec);
      let resolved = await resolveWriterFlow(lane, dead.writerId);
      stores.faults.disarm();
      if (kind.endsWith('*')) expect(resolved.status, 'a fault on every try ends the execution').toBe('FAILED');
      if (resolved.status !== 'SUCCEEDED') {
        // An interrupted resolve leaves the slot held: the same command again finishes it.
        expect(
          (await stores.ports.authority.get(laneKeys.head(lane)))?.writer,
          `${resolved.error}: ${resolved.cause}`,
        ).toMatchObject({ id: dead.writerId });
        resolved = await resolveWriterFlow(lane, dead.writerId);
      }
      expect(resolved.status, `${resolved.error}: ${resolved.cause}`).toBe('SUCCEEDED');
      expect(resolved.output).toMatchObject({
        writerId: dead.writerId,
        released: true,
        attempts: [
          { attemptId: b1.attemptId, status: 'KNOWN_COMMITTED', start: 0, end: 2 },
          { attemptId: b2.attemptId, status: 'KNOWN_NOT_COMMITTED' },
        ],
      });
      expect((await resolveWriterFlow(lane, dead.writerId)).output).toEqual(resolved.output);
      const next = new LaneWriter(stores.ports, lane, session);
      const b3 = { attemptId: next.nextAttemptId(), records: b2.records };
      expect(await next.append(bytes(b3.records), b3.attemptId)).toMatchObject({
        status: 'KNOWN_COMMITTED',
        start: 2,
        end: 3,
      });
      expect(await next.close()).toEqual({ released: true, unsettled: [] });
      await expectLaneInvariant(stores.ports, lane, [b1, b3]);
    },
  );
});

describe('an attempt outlives its session', () => {
  it('re-running a pending attempt under a new owner session retires it and frees the lane: KNOWN_NOT_COMMITTED, never adopted', async () => {
    const { lane, session } = await newLane(stores.ports, 'outlived');
    // The worker keeps dying at the head CAS: the attempt is PENDING under the first
    // session and the lane is suspended by it (MAY_HAVE_COMMITTED).
    stores.faults.arm(`${STREAM_CUT_POINTS.headCas}:crash-before*`);
    expect(statusOf(await appendFlow(stores.ports, lane, session, 'a1', batchOf('a1', 2)))).toBe('MAY_HAVE_COMMITTED');
    stores.faults.disarm();
    const next = await takeOverWithNewSession(lane, 'restarted-producer', stores.ports);
    const rerun = await appendFlow(stores.ports, lane, next, 'a1', batchOf('a1', 2));
    expect(rerun.output).toMatchObject({ status: 'KNOWN_NOT_COMMITTED', reason: 'Stream.Fenced' });
    const fresh = await appendFlow(stores.ports, lane, next, 'a2', batchOf('a2', 2));
    expect(fresh.output).toMatchObject({ status: 'KNOWN_COMMITTED', start: 0 });
    await expectLaneInvariant(stores.ports, lane, [{ attemptId: 'a2', records: batchOf('a2', 2) }]);
  });
});

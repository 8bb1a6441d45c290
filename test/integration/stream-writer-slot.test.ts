import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { laneKeys, type AppendOutcome, type LaneHead, type LaneRef } from '../../src/domain/stream.js';
import { runFlow, type FlowResult } from '../../src/local/flow-runner.js';
import type { Fence } from '../../src/domain/fence.js';
import { LaneWriter } from '../../src/stream/append/lane-writer.js';
import { STREAM_CUT_POINTS } from '../../src/stream/cut-points.js';
import { readStream } from '../../src/stream/read.js';
import { resolveWriter as resolveWriterInProcess, type WriterResolution } from '../../src/stream/resolve-writer.js';
import { takeoverLane } from '../../src/stream/takeover.js';
import { dyingAfter } from '../support/dying-ports.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { interceptPorts } from '../support/intercept-ports.js';
import { appendFlow, batchOf, expectLaneInvariant, newLane, type Acknowledged } from '../support/stream-fixture.js';

/**
 * The writer slot (docs/stream-log.md "The stream log", src/stream/append/writer-slot.ts): a LaneWriter
 * does not suspend the lane before each lean head CAS, so it holds the lane from its first
 * head load until close(). A writer process that dies between an unknown head outcome and
 * SuspendLane leaves the lane held: every other append — a restarted producer's new writer
 * (same session, new writer id), the flow — is refused until `stream resolve --writer`
 * reports each attempt of the dead writer KNOWN_COMMITTED or spends it, and a late duplicate
 * of the lost CAS can never apply. Then the producer re-sends exactly what did not commit,
 * and every record is in the lane once.
 */
let stores: TestStores;
beforeAll(async () => {
  stores = await freshStores();
});

const bytes = (rs: string[]) => rs.map((r) => new TextEncoder().encode(r));
const headOf = async (lane: LaneRef) => (await stores.ports.authority.get(laneKeys.head(lane))) as unknown as LaneHead;
const walsOfWriter = (lane: LaneRef, writerId: string) =>
  stores.ports.objects.list(`wal/${lane.stream}/${lane.partition}/w${writerId}.`);
const resolveWriterFlow = (lane: LaneRef, writerId: string): Promise<FlowResult> =>
  runFlow('stream-resolve-append', { ...lane, writerId }, { ports: stores.ports, retryIntervalMs: 0 });

/** A batch under an id the writer minted. */
function batch(writer: LaneWriter, label: string, n: number): Acknowledged {
  return { attemptId: writer.nextAttemptId(), records: batchOf(label, n) };
}

/** Every committed record of the lane, in offset order, through the read path. */
async function readAll(lane: LaneRef): Promise<string[]> {
  const head = await headOf(lane);
  const seen: string[] = [];
  for (let from = head.trimOffset; from < head.committedEnd;) {
    const page = await readStream({ ...lane, from, maxRecords: 1000 }, stores.ports);
    seen.push(...page.records.map((r) => Buffer.from(r.data, 'base64').toString()));
    from = page.next;
  }
  return seen;
}

/** The refusal a held lane answers a LaneWriter with: nothing written, the writer and the command named. */
const heldBy = (lane: LaneRef, writerId: string) => ({
  status: 'KNOWN_NOT_COMMITTED',
  reason: 'Stream.LaneSuspended',
  detail: expect.stringContaining(
    `held by writer ${writerId} (a LaneWriter that has not closed); resolve it first: cutpoint stream resolve ${lane.stream} --partition ${lane.partition} --writer ${writerId}`,
  ),
});

/** `stream resolve --writer` through the stream-resolve-append flow: succeeded, the slot released. */
async function resolveWriter(lane: LaneRef, writerId: string): Promise<Map<string, AppendOutcome>> {
  const resolved = await resolveWriterFlow(lane, writerId);
  expect(resolved.status, `${resolved.error}: ${resolved.cause}`).toBe('SUCCEEDED');
  const report = resolved.output as WriterResolution;
  expect(report).toMatchObject({ ...lane, writerId, released: true });
  expect((await headOf(lane)).writer).toBeUndefined();
  return new Map(report.attempts.map((a) => [a.attemptId, a]));
}

/**
 * The restarted producer after the resolve: a batch the resolve proved committed is
 * acknowledged as it stands, every other one is appended again under a new attempt.
 */
async function resend(
  writer: LaneWriter,
  unacked: Acknowledged[],
  report: Map<string, AppendOutcome>,
): Promise<Acknowledged[]> {
  const acked: Acknowledged[] = [];
  for (const b of unacked) {
    if (report.get(b.attemptId)?.status === 'KNOWN_COMMITTED') {
      acked.push(b);
      continue;
    }
    const again = { attemptId: writer.nextAttemptId(), records: b.records };
    expect(await writer.append(bytes(again.records), again.attemptId)).toMatchObject({ status: 'KNOWN_COMMITTED' });
    acked.push(again);
  }
  return acked;
}

/** After recovery: the lane invariant, and the log is exactly the acknowledged records, each once, in order. */
async function expectExactlyOnce(lane: LaneRef, acked: Acknowledged[]): Promise<void> {
  await expectLaneInvariant(stores.ports, lane, acked);
  const log = await readAll(lane);
  expect(new Set(log).size, `a record is in the lane twice: ${JSON.stringify(log)}`).toBe(log.length);
  expect(log).toEqual(acked.flatMap((a) => a.records));
}

describe('a LaneWriter that dies with a head CAS outcome unknown, before SuspendLane', () => {
  it.each([
    ['lose-response', 'applied'],
    ['lose-request', 'not applied'],
  ] as const)(
    '%s (the lost CAS %s): the lane stays held until `stream resolve --writer`, which reports each attempt; then every record is in the lane once',
    async (kind, what) => {
      const { lane, session } = await newLane(stores.ports, `kill-${kind}`);
      // The writer's process dies right after sending its second head CAS: b2's (b3 and b4 are pipelined behind it).
      const dying = dyingAfter(stores.ports, STREAM_CUT_POINTS.headCas, 2);
      const w1 = new LaneWriter(dying.ports, lane, session, { depth: 3 });
      const b1 = batch(w1, 'b1', 2);
      expect(await w1.append(bytes(b1.records), b1.attemptId)).toMatchObject({
        status: 'KNOWN_COMMITTED',
        start: 0,
        end: 2,
      });
      const unacked = [batch(w1, 'b2', 3), batch(w1, 'b3', 1), batch(w1, 'b4', 2)];
      const injector = stores.faults.arm(`${STREAM_CUT_POINTS.headCas}:${kind}`);
      for (const b of unacked) void w1.append(bytes(b.records), b.attemptId); // never answered: the process is gone
      await dying.died;
      stores.faults.disarm();
      expect(injector.fired).toHaveLength(1);
      const held = await headOf(lane);
      expect(held).toMatchObject({ committedEnd: what === 'applied' ? 5 : 2, writer: { id: w1.writerId } });
      expect(held.suspendedBy, 'SuspendLane never ran').toBeUndefined();

      // The producer restarts on the same session: a new writer is refused before it writes anything, and so is the flow.
      const w2 = new LaneWriter(stores.ports, lane, session, { depth: 3 });
      expect(
        await w2.append(bytes(unacked[0]!.records)),
        "a new writer appended while the dead writer's CAS may have applied: a duplicate",
      ).toMatchObject(heldBy(lane, w1.writerId));
      expect(await walsOfWriter(lane, w2.writerId)).toEqual([]);
      expect((await appendFlow(stores.ports, lane, session, 'f1', unacked[0]!.records)).output).toMatchObject({
        status: 'KNOWN_NOT_COMMITTED',
        reason: 'Stream.LaneSuspended',
      });
      expect((await headOf(lane)).committedEnd).toBe(held.committedEnd);

      const report = await resolveWriter(lane, w1.writerId);
      expect(report.get(b1.attemptId)).toMatchObject({ status: 'KNOWN_COMMITTED', start: 0, end: 2 });
      expect(report.get(unacked[0]!.attemptId)).toMatchObject(
        what === 'applied' ? { status: 'KNOWN_COMMITTED', start: 2, end: 5 } : { status: 'KNOWN_NOT_COMMITTED' },
      );
      for (const b of unacked.slice(1))
        expect(report.get(b.attemptId)?.status ?? 'KNOWN_NOT_COMMITTED', b.attemptId).toBe('KNOWN_NOT_COMMITTED');
      // The lost CAS request delivered late (a duplicate of it): the head moved on, it can never apply.
      expect(await stores.ports.authority.transact(STREAM_CUT_POINTS.headCas, dying.lastLegs())).toMatchObject({
        status: 'CONFLICT',
      });
      // A second resolve (an operator's re-run) reports the same and writes nothing.
      const settled = await headOf(lane);
      expect([...(await resolveWriter(lane, w1.writerId)).values()]).toEqual([...report.values()]);
      expect(await headOf(lane)).toEqual(settled);

      const acked = [b1, ...(await resend(w2, unacked, report))];
      expect(await w2.close()).toEqual({ released: true, unsettled: [] });
      const f2 = { attemptId: 'f2', records: batchOf('f2', 1) };
      expect((await appendFlow(stores.ports, lane, session, f2.attemptId, f2.records)).output).toMatchObject({
        status: 'KNOWN_COMMITTED',
      });
      await expectExactlyOnce(lane, [...acked, f2]);
    },
  );

  it('SuspendLane crashing after the unknown outcome: close() keeps the slot (naming the unsettled attempt), resolve spends it', async () => {
    const { lane, session } = await newLane(stores.ports, 'kill-suspend');
    const w1 = new LaneWriter(stores.ports, lane, session);
    const b1 = batch(w1, 'b1', 2);
    stores.faults.arm(`${STREAM_CUT_POINTS.headCas}:lose-request*,${STREAM_CUT_POINTS.suspend}:crash-before*`);
    await expect(w1.append(bytes(b1.records), b1.attemptId)).rejects.toMatchObject({ name: 'Cutpoint.WorkerCrashed' });
    stores.faults.disarm();
    expect(await w1.close()).toEqual({ released: false, unsettled: [b1.attemptId] });
    expect(await headOf(lane)).toMatchObject({ committedEnd: 0, writer: { id: w1.writerId } });
    await expect(w1.append(bytes(['late']))).rejects.toMatchObject({ code: 'stream.writer_closed' });

    const w2 = new LaneWriter(stores.ports, lane, session);
    expect(await w2.append(bytes(b1.records))).toMatchObject(heldBy(lane, w1.writerId));
    const report = await resolveWriter(lane, w1.writerId);
    expect([...report.values()]).toEqual([
      expect.objectContaining({ attemptId: b1.attemptId, status: 'KNOWN_NOT_COMMITTED' }),
    ]);
    const acked = await resend(w2, [b1], report);
    expect(await w2.close()).toEqual({ released: true, unsettled: [] });
    await expectExactlyOnce(lane, acked);
  });
});

describe('a resolve racing the writer it resolves', () => {
  it('the writer, still alive, sends a head CAS after the resolve listed its attempts, and dies: the CAS cannot apply (the resolve marked the slot first), its records are sent again once', async () => {
    const { lane, session } = await newLane(stores.ports, 'slot-race');
    const dying = dyingAfter(stores.ports, STREAM_CUT_POINTS.headCas, 2);
    const w1 = new LaneWriter(dying.ports, lane, session);
    const b1 = batch(w1, 'b1', 2);
    expect(await w1.append(bytes(b1.records), b1.attemptId)).toMatchObject({ status: 'KNOWN_COMMITTED' });
    // The operator's resolve lists the writer's WAL objects, then waits until b2's head CAS went out.
    let listed!: () => void;
    const hasListed = new Promise<void>((resolve) => (listed = resolve));
    const racing = interceptPorts(stores.ports, {
      objects: {
        list: async (prefix) => {
          const keys = await stores.ports.objects.list(prefix);
          if (prefix.endsWith(`/w${w1.writerId}.`)) {
            listed();
            await dying.died;
          }
          return keys;
        },
      },
    });
    const resolving = resolveWriterInProcess({ ...lane, writerId: w1.writerId }, racing);
    await hasListed;
    const b2 = batch(w1, 'b2', 3);
    stores.faults.arm(`${STREAM_CUT_POINTS.headCas}:lose-response`);
    void w1.append(bytes(b2.records), b2.attemptId);
    await dying.died;
    stores.faults.disarm();
    const report = new Map((await resolving).attempts.map((a) => [a.attemptId, a]));
    expect(report.get(b1.attemptId)).toMatchObject({ status: 'KNOWN_COMMITTED' });
    expect(report.has(b2.attemptId), 'b2 was written after the listing').toBe(false);
    const w2 = new LaneWriter(stores.ports, lane, session);
    const acked = [b1, ...(await resend(w2, [b2], report))];
    expect(await w2.close()).toEqual({ released: true, unsettled: [] });
    await expectExactlyOnce(lane, acked);
  });
});

describe('what a resolve of a long-running writer costs', () => {
  it('per committed attempt one object HEAD and one GetItem (no spend); per resolve one LIST, three head reads, the mark and the release', async () => {
    const { lane, session } = await newLane(stores.ports, 'slot-cost');
    const w1 = new LaneWriter(stores.ports, lane, session, { depth: 4 });
    const batches = Array.from({ length: 30 }, (_, i) => batch(w1, `c${i}`, 1 + (i % 3)));
    for (const outcome of await Promise.all(batches.map((b) => w1.append(bytes(b.records), b.attemptId))))
      expect(outcome.status).toBe('KNOWN_COMMITTED');
    // Never closed: the process is gone.
    const counts: Record<string, number> = {};
    const count = <T>(kind: string, call: () => Promise<T>): Promise<T> => (
      (counts[kind] = (counts[kind] ?? 0) + 1),
      call()
    );
    const a = stores.ports.authority;
    const o = stores.ports.objects;
    const counted = interceptPorts(stores.ports, {
      authority: {
        get: (key) => count('authority.get', () => a.get(key)),
        query: (...args) => count('authority.query', () => a.query(...args)),
        update: (...args) => count('authority.update', () => a.update(...args)),
        transact: (...args) => count('authority.transact', () => a.transact(...args)),
      },
      objects: {
        list: (prefix) => count('objects.list', () => o.list(prefix)),
        head: (key) => count('objects.head', () => o.head(key)),
      },
    });
    const report = await resolveWriterInProcess({ ...lane, writerId: w1.writerId }, counted);
    expect(report.attempts.map((x) => [x.attemptId, x.status])).toEqual(
      batches.map((b) => [b.attemptId, 'KNOWN_COMMITTED']),
    );
    expect(counts).toEqual({ 'authority.get': 3 + 30, 'authority.update': 2, 'objects.list': 1, 'objects.head': 30 });
    await expectExactlyOnce(lane, batches);
  });
});

describe('the writer slot on the happy path and around a takeover', () => {
  it('a clean close releases the slot: the next writer and the flow append without any resolve', async () => {
    const { lane, session } = await newLane(stores.ports, 'slot-close');
    const w1 = new LaneWriter(stores.ports, lane, session);
    const acked = [batch(w1, 'b1', 2), batch(w1, 'b2', 1)];
    for (const b of acked)
      expect(await w1.append(bytes(b.records), b.attemptId)).toMatchObject({ status: 'KNOWN_COMMITTED' });
    expect((await headOf(lane)).writer).toMatchObject({ id: w1.writerId, epoch: session.epoch });
    // While it is held, the flow is refused (and spends only its own attempt id).
    expect((await appendFlow(stores.ports, lane, session, 'f0', batchOf('f0', 1))).output).toMatchObject({
      status: 'KNOWN_NOT_COMMITTED',
      reason: 'Stream.LaneSuspended',
    });
    expect(await w1.close()).toEqual({ released: true, unsettled: [] });
    expect((await headOf(lane)).writer).toBeUndefined();

    const w2 = new LaneWriter(stores.ports, lane, session);
    const b3 = batch(w2, 'b3', 2);
    expect(await w2.append(bytes(b3.records), b3.attemptId)).toMatchObject({
      status: 'KNOWN_COMMITTED',
      start: 3,
      end: 5,
    });
    expect(await w2.close()).toEqual({ released: true, unsettled: [] });
    const f1 = { attemptId: 'f1', records: batchOf('f1', 1) };
    expect((await appendFlow(stores.ports, lane, session, f1.attemptId, f1.records)).output).toMatchObject({
      status: 'KNOWN_COMMITTED',
      start: 5,
    });
    await expectExactlyOnce(lane, [...acked, b3, f1]);
  });

  it('a takeover keeps the slot of the writer it fences: the new session appends only after `stream resolve --writer`', async () => {
    const { lane, session } = await newLane(stores.ports, 'slot-takeover');
    const w1 = new LaneWriter(stores.ports, lane, session);
    const b1 = batch(w1, 'b1', 2);
    expect(await w1.append(bytes(b1.records), b1.attemptId)).toMatchObject({ status: 'KNOWN_COMMITTED' });
    // The producer restarts elsewhere and takes the lane over; w1 is never closed. The takeover names the slot it leaves.
    const restarted = randomUUID();
    const taken = await takeoverLane({ ...lane, owner: 'restarted', session: restarted }, stores.ports);
    expect(taken).toMatchObject({ epoch: 2, writer: w1.writerId });
    const next: Fence = { owner: 'restarted', session: restarted, epoch: taken.epoch };
    expect(await headOf(lane)).toMatchObject({ writer: { id: w1.writerId }, fence: next });
    const w2 = new LaneWriter(stores.ports, lane, next);
    expect(await w2.append(bytes(['x']))).toMatchObject(heldBy(lane, w1.writerId));
    // The fenced writer, still alive, appends nothing either.
    expect(await w1.append(bytes(['zombie']))).toMatchObject({ status: 'KNOWN_NOT_COMMITTED' });

    const report = await resolveWriter(lane, w1.writerId);
    expect(report.get(b1.attemptId)).toMatchObject({ status: 'KNOWN_COMMITTED', start: 0, end: 2 });
    const b2 = batch(w2, 'b2', 1);
    expect(await w2.append(bytes(b2.records), b2.attemptId)).toMatchObject({
      status: 'KNOWN_COMMITTED',
      start: 2,
      end: 3,
    });
    expect(await w2.close()).toEqual({ released: true, unsettled: [] });
    // The fenced writer's close leaves another writer's slot alone.
    expect(await w1.close()).toEqual({ released: true, unsettled: [] });
    await expectExactlyOnce(lane, [b1, b2]);
  });

  it('an attempt id the writer did not mint is refused before anything is written; a bad writer id is refused by resolve', async () => {
    const { lane, session } = await newLane(stores.ports, 'slot-ids');
    const before = await headOf(lane);
    const w1 = new LaneWriter(stores.ports, lane, session);
    await expect(w1.append(bytes(['x']), 'caller-1')).rejects.toMatchObject({ code: 'stream.invalid_attempt' });
    for (const input of [
      { ...lane, writerId: 'W1' },
      { ...lane, writerId: 'abcd1234', attemptId: 'a1' },
    ]) {
      const run = await runFlow('stream-resolve-append', input, { ports: stores.ports, retryIntervalMs: 0 });
      expect(run, JSON.stringify(input)).toMatchObject({ status: 'FAILED', error: 'Stream.Rejected' });
      expect(run.cause).toMatch(/stream\.invalid_(writer|resolve)|writer must be|exactly one of/);
    }
    expect(await headOf(lane), 'nothing was written').toEqual(before);
  });
});

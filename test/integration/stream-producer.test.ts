import { beforeAll, describe, expect, it } from 'vitest';
import { FAULT_KINDS } from '../../src/domain/faults.js';
import { laneKeys, type LaneHead, type LaneRef } from '../../src/domain/stream.js';
import type { Ports } from '../../src/ports/index.js';
import { STREAM_CUT_POINTS } from '../../src/stream/cut-points.js';
import { GroupProducer, type GroupReport } from '../../src/stream/producer/group-producer.js';
import type { MemberOutcome } from '../../src/stream/producer/member-outcome.js';
import { pipelinedProducer } from '../../src/stream/producer/pipelined-producer.js';
import { readStream } from '../../src/stream/read.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { newLane, resolveFlow } from '../support/stream-fixture.js';

/**
 * The group-commit producer on the real emulators (DynamoDB Local, the S3 emulator):
 * concurrent appenders grouped into single appends, every acked record readable exactly
 * once where its ack says; a fault at the head CAS of a group gives every member the same
 * interpretation, and after resolve each member is in the log once or not at all.
 */
let stores: TestStores;
beforeAll(async () => {
  stores = await freshStores();
});

interface Sent {
  appender: number;
  records: string[];
  outcome?: MemberOutcome;
  error?: unknown;
}

const enc = (s: string) => new TextEncoder().encode(s);

/** `k` appenders, each appending `batches` batches one after another (awaiting each ack). */
async function appenders(
  producer: GroupProducer,
  k: number,
  batches: number,
  size: (appender: number, batch: number) => number,
): Promise<Sent[]> {
  const sent: Sent[] = [];
  await Promise.all(
    Array.from({ length: k }, async (_, a) => {
      for (let b = 0; b < batches; b++) {
        const item: Sent = { appender: a, records: Array.from({ length: size(a, b) }, (_, i) => `a${a}/b${b}/r${i}`) };
        sent.push(item);
        try {
          item.outcome = await producer.append(item.records.map(enc));
        } catch (error) {
          item.error = error;
        }
      }
    }),
  );
  return sent;
}

const headOf = async (ports: Ports, lane: LaneRef) =>
  (await ports.authority.get(laneKeys.head(lane))) as unknown as LaneHead;

/** Every committed record of the lane, in offset order, through the read path. */
async function readAll(ports: Ports, lane: LaneRef): Promise<string[]> {
  const head = (await ports.authority.get(laneKeys.head(lane))) as unknown as LaneHead;
  const seen: string[] = [];
  for (let from = head.trimOffset; from < head.committedEnd;) {
    const page = await readStream({ ...lane, from, maxRecords: 1000 }, ports);
    seen.push(...page.records.map((r) => Buffer.from(r.data, 'base64').toString()));
    from = page.next;
  }
  expect(head.suspendedBy, 'lane left suspended').toBeUndefined();
  return seen;
}

describe('group-commit producer', () => {
  it('k = 4 concurrent appenders: fewer appends than batches, every acked record readable exactly once at its range, no gaps', async () => {
    const { lane, session } = await newLane(stores.ports, 'producer-k4');
    const groups: GroupReport[] = [];
    const producer = new GroupProducer(lane, session, stores.ports, {
      lingerMs: 20,
      maxRecords: 64,
      onGroup: (g) => groups.push(g),
    });
    const sent = await appenders(producer, 4, 5, (a, b) => 1 + ((a + b) % 4));
    await producer.close();

    expect(
      sent.every((s) => s.outcome?.status === 'KNOWN_COMMITTED'),
      JSON.stringify(sent.filter((s) => s.outcome?.status !== 'KNOWN_COMMITTED')),
    ).toBe(true);
    expect(groups.length, 'concurrent batches were grouped').toBeLessThan(sent.length);
    expect(groups.some((g) => g.members > 1)).toBe(true);
    const log = await readAll(stores.ports, lane);
    // Acked ranges tile [0, end) exactly, and each holds its batch's records in order.
    const ranges = sent.map((s) => [s.outcome!.start!, s.outcome!.end!] as const).sort((x, y) => x[0] - y[0]);
    let at = 0;
    for (const [start, end] of ranges) {
      expect(start).toBe(at);
      at = end;
    }
    expect(at).toBe(log.length);
    for (const s of sent) expect(log.slice(s.outcome!.start, s.outcome!.end)).toEqual(s.records);
    // Per appender, acks come back in the order it appended.
    for (let a = 0; a < 4; a++) {
      const starts = sent.filter((s) => s.appender === a).map((s) => s.outcome!.start!);
      expect(starts).toEqual([...starts].sort((x, y) => x - y));
    }
    expect(new Set(log).size).toBe(log.length);
  });

  // Each kind once at the group's head CAS, and a fail on every retry (the append throws).
  const specs = [...FAULT_KINDS.map((kind) => [kind, `${kind}@2`]), ['fail on every retry', 'fail@2*']];
  it.each(specs)(
    'a %s at the head CAS of a group of 3: every member gets the same interpretation; after resolve each is in the log once or not at all',
    async (label, fault) => {
      const { lane, session } = await newLane(stores.ports, `producer-${label.replace(/ /g, '-')}`);
      const groups: GroupReport[] = [];
      // Group 0: one batch alone; the fault then hits the second group's head CAS, a group
      // of the three batches that arrived while the first was in flight.
      const producer = new GroupProducer(lane, session, stores.ports, { lingerMs: 0, onGroup: (g) => groups.push(g) });
      const injector = stores.faults.arm(`${STREAM_CUT_POINTS.headCas}:${fault}`);
      let sent: Sent[];
      try {
        const first = producer.append([enc('first')]);
        sent = await appenders(producer, 3, 1, (a) => a + 1);
        await first;
        await producer.close();
      } finally {
        stores.faults.disarm();
      }
      expect(injector.fired.length, `no fault fired for ${fault}`).toBeGreaterThan(0);
      const group = groups.find((g) => g.sequence === 1);
      expect(group?.members).toBe(3);
      // One interpretation for the whole group: the same status (and attempt), or the same error.
      const outcomes = sent.map((s) =>
        s.error ? { error: s.error } : { status: s.outcome!.status, attemptId: s.outcome!.attemptId },
      );
      expect(
        outcomes.every((o) => JSON.stringify(o) === JSON.stringify(outcomes[0])),
        JSON.stringify(outcomes),
      ).toBe(true);
      if (sent[0]!.error) expect(sent.every((s) => s.error === sent[0]!.error)).toBe(true);

      let committed = group?.outcome === 'KNOWN_COMMITTED';
      if (group?.outcome !== 'KNOWN_COMMITTED' && group?.outcome !== 'KNOWN_NOT_COMMITTED') {
        // MAY_HAVE_COMMITTED, or an append that threw: only the group's own attempt settles it.
        const resolved = await resolveFlow(stores.ports, lane, group!.attemptId);
        expect(resolved.status, `${resolved.error}: ${resolved.cause}`).toBe('SUCCEEDED');
        committed = (resolved.output as { status: string }).status === 'KNOWN_COMMITTED';
      }
      const log = await readAll(stores.ports, lane);
      expect(log[0]).toBe('first');
      const members = [...sent].sort((x, y) => (x.outcome?.start ?? 0) - (y.outcome?.start ?? 0));
      for (const s of members) {
        const at = log.indexOf(s.records[0]!);
        if (!committed) expect(at, `${s.records[0]} committed though its group did not`).toBe(-1);
        else expect(log.slice(at, at + s.records.length)).toEqual(s.records);
        for (const r of s.records) expect(log.filter((x) => x === r).length).toBeLessThanOrEqual(1);
      }
      expect(log.length).toBe(committed ? 1 + 6 : 1);
    },
  );
});

describe('pipelined producer (group commit over the LaneWriter)', () => {
  /** Acked ranges tile [0, end) of the log, each holding its batch's records in order. */
  function expectTiled(sent: Sent[], log: string[]): void {
    const committed = sent.filter((s) => s.outcome?.status === 'KNOWN_COMMITTED');
    let at = 0;
    for (const s of [...committed].sort((x, y) => x.outcome!.start! - y.outcome!.start!)) {
      expect(s.outcome!.start).toBe(at);
      expect(log.slice(s.outcome!.start, s.outcome!.end)).toEqual(s.records);
      at = s.outcome!.end!;
    }
    expect(at).toBe(log.length);
    expect(new Set(log).size).toBe(log.length);
  }

  it('8 appenders, 4 groups in flight: every record acked exactly once, in order, each group under its own minted attempt', async () => {
    const { lane, session } = await newLane(stores.ports, 'producer-pipelined');
    const groups: GroupReport[] = [];
    const producer = pipelinedProducer(lane, session, stores.ports, {
      depth: 4,
      lingerMs: 1,
      maxRecords: 6,
      onGroup: (g) => groups.push(g),
    });
    const sent = await appenders(producer, 8, 5, (a, b) => 1 + ((a * 3 + b) % 3));
    expect(await headOf(stores.ports, lane)).toMatchObject({ writer: { id: producer.writerId } });
    await producer.close();
    // close() closed the LaneWriter: its writer slot is released.
    expect((await headOf(stores.ports, lane)).writer).toBeUndefined();
    expect(
      sent.every((s) => s.outcome?.status === 'KNOWN_COMMITTED'),
      JSON.stringify(sent.find((s) => s.outcome?.status !== 'KNOWN_COMMITTED')),
    ).toBe(true);
    expect(groups.length).toBeLessThan(sent.length);
    expect(new Set(groups.map((g) => g.attemptId)).size, 'each group its own minted attempt').toBe(groups.length);
    expectTiled(sent, await readAll(stores.ports, lane));
  });

  it('a head CAS that fails for good mid-pipeline: groups bound after it are KNOWN_NOT_COMMITTED, never moved to another offset', async () => {
    const { lane, session } = await newLane(stores.ports, 'producer-pipelined-fail');
    const groups: GroupReport[] = [];
    const producer = pipelinedProducer(lane, session, stores.ports, {
      depth: 4,
      lingerMs: 0,
      maxRecords: 2,
      onGroup: (g) => groups.push(g),
    });
    const injector = stores.faults.arm(`${STREAM_CUT_POINTS.headCas}:fail@3*`);
    let sent: Sent[];
    try {
      sent = await appenders(producer, 6, 2, () => 1);
      await producer.close();
    } finally {
      stores.faults.disarm();
    }
    expect(injector.fired.length).toBeGreaterThan(0);
    const failed = groups.filter((g) => g.outcome !== 'KNOWN_COMMITTED');
    expect(failed.length, 'the failed group and the ones bound after it').toBeGreaterThan(0);
    // The group whose CAS kept failing may have suspended the lane (MAY_HAVE_COMMITTED): its own attempt resolves it.
    const settled = new Map<string, string>();
    for (const g of failed.filter((x) => x.outcome === 'MAY_HAVE_COMMITTED')) {
      const resolved = await resolveFlow(stores.ports, lane, g.attemptId);
      expect(resolved.status, `${resolved.error}: ${resolved.cause}`).toBe('SUCCEEDED');
      settled.set(g.attemptId, (resolved.output as { status: string }).status);
    }
    expect(
      failed.filter((g) => g.outcome === 'KNOWN_NOT_COMMITTED').length,
      'groups bound behind the failed one are spent',
    ).toBeGreaterThan(0);
    // Every group ended with an outcome (none threw): close() released the writer slot.
    expect((await headOf(stores.ports, lane)).writer).toBeUndefined();
    const log = await readAll(stores.ports, lane);
    for (const s of sent.filter((x) => x.outcome?.status !== 'KNOWN_COMMITTED')) {
      expect(s.error, 'a definite failure is an outcome, not a throw').toBeUndefined();
      const status = settled.get(s.outcome!.attemptId ?? '') ?? s.outcome!.status;
      expect(status).toBe('KNOWN_NOT_COMMITTED');
      for (const r of s.records) expect(log).not.toContain(r);
    }
    expectTiled(sent, log);
  });
});

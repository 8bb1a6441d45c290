import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { ATTEMPT_TIME_MARGIN_MS } from '../../src/domain/attempt-time.js';
import { laneKeys, walKeyOf, type LaneRef } from '../../src/domain/stream.js';
import { runFlow, type FlowResult } from '../../src/local/flow-runner.js';
import type { Ports } from '../../src/ports/index.js';
import type { TransactionLeg } from '../../src/ports/authority.js';
import { appendBatch } from '../../src/stream/append-batch.js';
import { LaneWriter } from '../../src/stream/append/lane-writer.js';
import { attemptsWithObjects } from '../../src/stream/gc/attempt-retention.js';
import { gcKeys } from '../../src/stream/gc/model.js';
import { trimLane } from '../../src/stream/trim.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { newLane } from '../support/stream-fixture.js';
import { listAll, MovableClock } from '../faults/stream-gc-world.js';

/**
 * GC retires the evidence of time-marked attempts (docs/stream-log.md "The stream log", GC retention;
 * src/stream/gc/attempt-retention.ts): a lane whose GC collected the WAL objects of 10,000
 * committed attempts (their collected records, written here in transactions of 100 as the
 * earlier runs left them — the lane's commit records, kept for good, are not what retention
 * reads) and of 100 spent ones, beside real appends GC collects through the flow. One GC run
 * past window + margin leaves the lane's GC-owned items to what its objects and unmarked
 * attempts need: the roots of the objects still in the bucket, the evidence of the attempt
 * whose WAL prefix still holds an object, and the unmarked attempts' records, kept for good.
 */
let stores: TestStores;
beforeAll(async () => {
  stores = await freshStores();
});

const ATTEMPTS = 10_000;
const SPENT = 100;
const UNMARKED = 100;
const WINDOW_MS = 7 * 86_400_000;

async function gcRun(lane: LaneRef, ports: Ports): Promise<FlowResult> {
  let run = await runFlow('stream-gc', { ...lane, grace: '10m' }, { ports, retryIntervalMs: 0 });
  while (run.status === 'SUCCEEDED' && (run.output as { done?: boolean }).done === false) {
    run = await runFlow('stream-gc', (run.output as { next: unknown }).next, { ports, retryIntervalMs: 0 });
  }
  expect(run.status, `${run.error}: ${run.cause}`).toBe('SUCCEEDED');
  return run;
}

/** What earlier GC runs left: a collected record (or spent marker) per attempt, its WAL object gone; written 100 to a transaction, 4 at once. */
async function seedEvidence(
  ports: Ports,
  lane: LaneRef,
  kind: 'collected' | 'spent',
  ids: string[],
  at: string,
): Promise<void> {
  const legs: TransactionLeg[] = ids.map((attemptId, i) => {
    const walKey = walKeyOf(lane, attemptId, 'e'.repeat(64));
    const common = {
      stream: lane.stream,
      partition: lane.partition,
      attemptId,
      walKey,
      walSha256: 'e'.repeat(64),
      walSize: 64,
      recordCount: 1,
    };
    const item =
      kind === 'collected'
        ? {
            ...laneKeys.collected(lane, attemptId),
            ...common,
            fenceEpoch: 1,
            start: 1000 + i,
            end: 1001 + i,
            collectedAt: at,
          }
        : { ...laneKeys.spent(lane, attemptId), ...common, reason: 'seeded', spentAt: at, orphanSince: at };
    return { kind: 'put', item, expect: 'absent' };
  });
  const chunks = Array.from({ length: Math.ceil(legs.length / 100) }, (_, i) => legs.slice(i * 100, i * 100 + 100));
  for (let next = 0; next < chunks.length; next += 4) {
    await Promise.all(
      chunks
        .slice(next, next + 4)
        .map(async (chunk) =>
          expect((await ports.authority.transact('test.seed.evidence', chunk)).status).toBe('APPLIED'),
        ),
    );
  }
}

async function gcOwned(
  ports: Ports,
  lane: LaneRef,
): Promise<{ roots: number; leases: number; collected: string[]; spent: string[] }> {
  const [roots, leases, collected, spent] = await Promise.all([
    ports.authority.query(gcKeys.pk(lane), 'root#'),
    ports.authority.query(gcKeys.pk(lane), 'lease#'),
    ports.authority.query(laneKeys.pk(lane), 'collected#'),
    ports.authority.query(laneKeys.pk(lane), 'spent#'),
  ]);
  const ids = (items: typeof collected, prefix: string) => items.map((i) => i.sk.slice(prefix.length)).sort();
  return {
    roots: roots.length,
    leases: leases.length,
    collected: ids(collected, 'collected#'),
    spent: ids(spent, 'spent#'),
  };
}

describe('GC retention of attempt evidence', () => {
  it(
    `retires the evidence of ${ATTEMPTS} marked collected attempts past window + margin; unmarked ones and one whose WAL prefix holds an object stay`,
    { timeout: 300_000 },
    async () => {
      const clock = new MovableClock();
      const ports: Ports = { ...stores.ports, clock };
      const { lane, session } = await newLane(ports, 'attempt-retention');
      const started = performance.now();

      // Real appends by the owner's writer (minted, time-marked ids): the first three trimmed and collected by GC.
      const writer = new LaneWriter(ports, lane, session);
      const appended: string[] = [];
      for (let i = 0; i < 5; i++) {
        const attemptId = writer.nextAttemptId();
        expect(await writer.append([Buffer.from(`r${i}`)], attemptId)).toMatchObject({
          status: 'KNOWN_COMMITTED',
          start: i,
        });
        appended.push(attemptId);
      }
      await trimLane({ ...lane, to: 3 }, ports);
      await gcRun(lane, ports);
      expect((await gcOwned(ports, lane)).collected).toEqual(appended.slice(0, 3).sort());

      // What earlier runs left: marked attempts' records, their WAL objects gone; unmarked ones.
      const mark = `t${clock.now().getTime()}`;
      const marked = Array.from({ length: ATTEMPTS }, (_, i) => `wa11ce000.e1.${mark}.${i}`);
      const spent = Array.from({ length: SPENT }, (_, i) => `wa11ce000.e1.${mark}.s${i}`);
      const unmarked = Array.from({ length: UNMARKED }, (_, i) => `legacy-${i}`);
      const at = clock.now().toISOString();
      await seedEvidence(ports, lane, 'collected', [...marked, ...unmarked], at);
      await seedEvidence(ports, lane, 'spent', spent, at);
      // A marked attempt whose WAL prefix still holds an object (one GC cannot judge: no binding, MAY_COMMIT).
      const held = `held.${mark}`;
      const bytes = Buffer.from('unjudged');
      const heldKey = walKeyOf(lane, held, createHash('sha256').update(bytes).digest('hex'));
      expect((await ports.objects.put('test.seed.wal', heldKey, bytes, {})).status).toBe('APPLIED');
      await seedEvidence(ports, lane, 'collected', [held], at);
      const seeded = performance.now();

      clock.advance(WINDOW_MS + ATTEMPT_TIME_MARGIN_MS + 60_000);
      const t = performance.now();
      const metered = stores.meter.snapshot();
      const run = await gcRun(lane, ports);
      const requests = Object.fromEntries(
        Object.entries(stores.meter.snapshot()).map(([k, v]) => [k, v - (metered[k] ?? 0)]),
      );
      const gcMs = performance.now() - t;
      const totals = (run.output as { totals: { retired: { roots: number; leases: number; attempts: number } } })
        .totals;
      expect(totals.retired).toEqual({ roots: 3, leases: 0, attempts: 3 + ATTEMPTS + SPENT });
      // One conditional delete per retired item; the attempts' WAL prefixes checked by a listing per page, not a LIST each.
      expect(requests['dynamodb.DeleteItem']).toBe(3 + 3 + ATTEMPTS + SPENT);
      expect(requests['s3.ListObjectsV2']).toBeLessThan(3 * Math.ceil((ATTEMPTS + SPENT + UNMARKED) / 100));

      // Left: the roots of the objects still in the bucket (two live ranges, the unjudged object),
      // the evidence of the attempt whose prefix holds an object, and the unmarked attempts' records.
      const objects = await listAll(ports, lane);
      expect(objects.sort()).toEqual(
        [...appended.slice(3).map((id) => objects.find((k) => k.includes(`/${id}/`)) ?? id), heldKey].sort(),
      );
      expect(await gcOwned(ports, lane)).toEqual({
        roots: objects.length,
        leases: 0,
        collected: [held, ...unmarked].sort(),
        spent: [],
      });

      // A retired attempt's re-run is refused by its window, never appended again.
      const head = await ports.authority.get(laneKeys.head(lane));
      await expect(
        appendBatch({ ...lane, attemptId: marked[42]!, session, records: [Buffer.from('again')] }, ports),
      ).rejects.toMatchObject({ code: 'stream.attempt_expired' });
      expect(await ports.authority.get(laneKeys.head(lane))).toEqual(head);
      console.log(
        `attempt evidence retention at ${ATTEMPTS} attempts: seeded in ${Math.round(seeded - started)} ms; GC run ${Math.round(gcMs)} ms (${requests['dynamodb.DeleteItem']} DeleteItem, ${requests['s3.ListObjectsV2']} LIST)`,
      );
    },
  );
});

describe('which attempts still hold WAL objects', () => {
  it("one listing across the page's range answers for the attempts it passes, a LIST each for the rest; ids that prefix each other are told apart", async () => {
    const { lane } = await newLane(stores.ports, 'attempt-objects');
    const put = async (attemptId: string, n = 1) => {
      for (let i = 0; i < n; i++) {
        const bytes = Buffer.from(`${attemptId}/${i}`);
        expect(
          (
            await stores.ports.objects.put(
              'test.seed.wal',
              walKeyOf(lane, attemptId, createHash('sha256').update(bytes).digest('hex')),
              bytes,
              {},
            )
          ).status,
        ).toBe('APPLIED');
      }
    };
    // Candidates a1, a1.x, a10, b, c, z; objects under a1.x, a10 (two), c — and under other attempts between them.
    await Promise.all([
      put('a1.x'),
      put('a10', 2),
      put('c'),
      put('a2'),
      put('y'),
      ...Array.from({ length: 150 }, (_, i) => put(`bb-${String(i).padStart(3, '0')}`)),
    ]);
    const candidates = ['z', 'a1', 'b', 'a10', 'c', 'a1.x'];
    const lists = { page: 0, each: 0 };
    const counted = (withPages: boolean): Ports => ({
      ...stores.ports,
      objects: {
        ...stores.ports.objects,
        list: (prefix) => (lists.each++, stores.ports.objects.list(prefix)),
        ...(withPages
          ? {
              listPage: (prefix: string, options: { startAfter?: string; limit: number }) => (
                lists.page++,
                stores.ports.objects.listPage!(prefix, options)
              ),
            }
          : { listPage: undefined }),
      },
    });
    const held = ['a1.x', 'a10', 'c'];
    // The whole range in a few pages: no LIST per attempt.
    expect([...(await attemptsWithObjects(counted(true), lane, candidates))].sort()).toEqual(held);
    expect(lists).toEqual({ page: 2, each: 0 });
    // A range longer than the listing may read (100 keys): the attempts beyond where it stopped get a LIST each (c, z).
    Object.assign(lists, { page: 0, each: 0 });
    expect([...(await attemptsWithObjects(counted(true), lane, candidates, 100))].sort()).toEqual(held);
    expect(lists).toEqual({ page: 1, each: 2 });
    // A store without paged listing: a LIST each.
    Object.assign(lists, { page: 0, each: 0 });
    expect([...(await attemptsWithObjects(counted(false), lane, candidates))].sort()).toEqual(held);
    expect(lists).toEqual({ page: 0, each: 6 });
  });
});

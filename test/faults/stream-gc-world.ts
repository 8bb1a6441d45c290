import { createHash } from 'node:crypto';
import { expect } from 'vitest';
import { encodeBatch } from '../../src/domain/record-batch.js';
import { laneKeys, walKeyOf, walMetadataOf, type CommitRecord, type LaneRef } from '../../src/domain/stream.js';
import { LEASE_TTL_MS, pinForRead } from '../../src/stream/gc/leases.js';
import { runFlow, type FlowResult } from '../../src/local/flow-runner.js';
import type { Clock } from '../../src/ports/clock.js';
import type { Ports } from '../../src/ports/index.js';
import type { AuthorityStore } from '../../src/ports/authority.js';
import type { ObjectStore } from '../../src/ports/objects.js';
import { GC_CUT_POINTS } from '../../src/stream/gc/cut-points.js';
import { STREAM_CUT_POINTS } from '../../src/stream/cut-points.js';
import { gcKeys, lanePrefixes, type LifecycleRoot } from '../../src/stream/gc/model.js';
import { readStream } from '../../src/stream/read.js';
import { materializeGen0Batch } from '../../src/stream/append/gen0-batch.js';
import { indexEntryOf, loadHead } from '../../src/stream/lane-store.js';
import { spendAttempt } from '../../src/stream/spend-attempt.js';
import { trimLane } from '../../src/stream/trim.js';
import { interceptPorts } from '../support/intercept-ports.js';
import { appendFlow, batchOf, newLane } from '../support/stream-fixture.js';

/**
 * A lane for GC tests on the real stores: committed ranges (WAL objects and generation 0),
 * a trim below some of them, and orphans (WAL bytes of attempts proven not committed).
 * The ports it hands out count the DELETEs that applied (the object was there before and
 * gone after) per key, and run on a clock the test can move (a clock is not a store).
 */
export interface GcWorld {
  lane: LaneRef;
  ports: Ports;
  clock: MovableClock;
  /** Applied DELETEs per object key. */
  deletes: Map<string, number>;
  live: string[];
  trimmed: string[];
  orphans: string[];
  /** The records readable from the trim on, in order. */
  readable: string[];
  /** The trim offset the records are read from (3 unless the world says otherwise). */
  readFrom?: number;
}

export class MovableClock implements Clock {
  offsetMs = 0;
  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }
  advance(ms: number): void {
    this.offsetMs += ms;
  }
}

/**
 * Ports whose object DELETEs are counted per key when they applied (the object was there
 * before and gone after). DELETEs of one key that overlap (a zombie GC invocation and the
 * retry of its Task) remove one object: the group counts once. With `retiredLives`, the
 * lives (epochs) of every lifecycle root GC retired are counted per object key too, so a
 * key's lives stay countable after its root is gone (src/stream/gc/retention.ts).
 */
export function countingPorts(
  base: Ports,
  clock: Clock,
  deletes: Map<string, number>,
  retiredLives?: Map<string, number>,
): Ports {
  const inner = base.objects;
  const inFlight = new Map<string, { running: number; counted: boolean }>();
  const objects: ObjectStore = {
    location: inner.location,
    put: (...a) => inner.put(...a),
    copy: (...a) => inner.copy(...a),
    head: (k) => inner.head(k),
    get: (k, cut) => inner.get(k, cut),
    list: (p) => inner.list(p),
    deleteMany: (...a) => inner.deleteMany(...a),
    listPage: (p, o) => inner.listPage!(p, o),
    delete: async (cut, key) => {
      const group = inFlight.get(key) ?? { running: 0, counted: false };
      group.running++;
      inFlight.set(key, group);
      let before;
      try {
        before = await inner.head(key);
        return await inner.delete(cut, key);
      } finally {
        if (before && !group.counted && !(await inner.head(key))) {
          group.counted = true;
          deletes.set(key, (deletes.get(key) ?? 0) + 1);
        }
        if (--group.running === 0) inFlight.delete(key);
      }
    },
  };
  const authority = retiredLives
    ? interceptPorts(base, { authority: { delete: countingRetirements(base.authority, retiredLives) } }).authority
    : base.authority;
  return { authority, objects, clock };
}

/** An authority DELETE that adds the epoch of each lifecycle root a GC retirement removed (it was there before, gone after). */
function countingRetirements(inner: AuthorityStore, lives: Map<string, number>): AuthorityStore['delete'] {
  return async (cut, key, expect_) => {
    const root =
      cut === GC_CUT_POINTS.retention && key.sk.startsWith('root#')
        ? ((await inner.get(key)) as unknown as LifecycleRoot | undefined)
        : undefined;
    try {
      return await inner.delete(cut, key, expect_);
    } finally {
      if (root && root.version === expect_.version && !(await inner.get(key)))
        lives.set(root.objectKey, (lives.get(root.objectKey) ?? 0) + root.epoch);
    }
  };
}

/** WAL bytes of an attempt that never committed, bound to the committed end and spent (marker + head bump). */
export async function putOrphan(ports: Ports, lane: LaneRef, attemptId: string, n = 1): Promise<string[]> {
  const keys: string[] = [];
  const head = await loadHead(ports, lane);
  const binding = { fenceEpoch: head.fence?.epoch ?? 0, start: head.committedEnd };
  for (let i = 0; i < n; i++) {
    const bytes = encodeBatch([Buffer.from(`${attemptId}/${i}`)]);
    const sha = createHash('sha256').update(bytes).digest('hex');
    const key = walKeyOf(lane, attemptId, sha);
    const put = await ports.objects.put(
      'stream.append.wal',
      key,
      bytes,
      walMetadataOf(lane, attemptId, sha, 1, binding),
    );
    expect(put.status).toBe('APPLIED');
    keys.push(key);
  }
  expect((await spendAttempt(ports, lane, attemptId, 'test orphan', STREAM_CUT_POINTS.retire)).status).toBe('SPENT');
  return keys;
}

export async function gcWorld(base: Ports, label: string): Promise<GcWorld> {
  const clock = new MovableClock();
  const deletes = new Map<string, number>();
  const ports = countingPorts(base, clock, deletes);
  const { lane, session } = await newLane(ports, label);
  const batches = [batchOf('a1', 3), batchOf('a2', 2), batchOf('a3', 2)];
  for (const [i, records] of batches.entries()) {
    const run = await appendFlow(ports, lane, session, `a${i + 1}`, records);
    expect((run.output as { status?: string }).status).toBe('KNOWN_COMMITTED');
  }
  // Generation 0 of each range, off the ack path: GC must tell its objects live or trimmed too.
  expect((await materializeGen0Batch(lane, ports)).materialized).toHaveLength(batches.length);
  await trimLane({ ...lane, to: 3 }, ports);
  const orphans = [...(await putOrphan(ports, lane, 'dead-1')), ...(await putOrphan(ports, lane, 'dead-2'))];
  const commits = (await ports.authority.query(laneKeys.pk(lane), 'commit#')) as unknown as CommitRecord[];
  await crashedReader(ports, lane, clock);
  const all = await listAll(ports, lane);
  const trimmedStart = (key: string) => /\/r0000000000000000\//.test(key) || key === commits[0]!.walKey;
  const committed = all.filter((k) => !orphans.includes(k));
  return {
    lane,
    ports,
    clock,
    deletes,
    live: committed.filter((k) => !trimmedStart(k)),
    trimmed: committed.filter(trimmedStart),
    orphans,
    readable: batches.slice(1).flat(),
  };
}

/**
 * A reader that pinned the lane's last committed range and crashed: its leases are never
 * released, and the clock moves past their expiry. They hold nothing off; GC retires them.
 */
export async function crashedReader(ports: Ports, lane: LaneRef, clock: MovableClock): Promise<void> {
  const commits = (await ports.authority.query(laneKeys.pk(lane), 'commit#')) as unknown as CommitRecord[];
  const last = commits.at(-1)!;
  expect((await pinForRead(ports, lane, indexEntryOf(last), last.start)).leases.length).toBeGreaterThan(0);
  clock.advance(LEASE_TTL_MS + 1000);
}

export async function listAll(ports: Ports, lane: LaneRef): Promise<string[]> {
  return (await Promise.all(lanePrefixes(lane).map((p) => ports.objects.list(p)))).flat();
}

export function gcFlow(
  world: Pick<GcWorld, 'lane' | 'ports'>,
  options: { grace?: string; dryRun?: boolean } = {},
): Promise<FlowResult> {
  return runFlow(
    'stream-gc',
    { ...world.lane, grace: options.grace ?? '10m', ...(options.dryRun ? { dryRun: true } : {}) },
    { ports: world.ports, retryIntervalMs: 0 },
  );
}

export async function rootOf(world: Pick<GcWorld, 'lane' | 'ports'>, key: string): Promise<LifecycleRoot | undefined> {
  return (await world.ports.authority.get(gcKeys.root(world.lane, key))) as unknown as LifecycleRoot | undefined;
}

/** Every record from the trim on, read through the read path (pins included). */
export async function readAll(world: GcWorld): Promise<string[]> {
  const seen: string[] = [];
  for (let from = world.readFrom ?? 3; ;) {
    const page = await readStream({ ...world.lane, from, maxRecords: 1000 }, world.ports);
    seen.push(...page.records.map((r) => Buffer.from(r.data, 'base64').toString()));
    if (page.next >= page.committedEnd) return seen;
    from = page.next;
  }
}

/**
 * The GC invariant: no live byte deleted (every live object present, the lane reads back
 * exactly), no deleted byte readable (gone from the bucket, its root DELETED or retired,
 * offsets below the trim refused), every orphan past grace and every trimmed object
 * deleted exactly once.
 */
export async function expectGcInvariant(world: GcWorld): Promise<void> {
  const present = new Set(await listAll(world.ports, world.lane));
  for (const key of world.live) {
    expect(present.has(key), `live ${key} deleted`).toBe(true);
    expect(world.deletes.get(key) ?? 0, `live ${key} deleted`).toBe(0);
  }
  for (const key of [...world.trimmed, ...world.orphans]) {
    expect(present.has(key), `${key} not collected`).toBe(false);
    expect(world.deletes.get(key), `${key} deleted ${world.deletes.get(key) ?? 0} times`).toBe(1);
    // DELETED, or already retired one grace after its delete (src/stream/gc/retention.ts).
    const root = await rootOf(world, key);
    if (root) expect(root.state, `root of collected ${key}`).toBe('DELETED');
  }
  expect(await readAll(world)).toEqual(world.readable);
  await expect(readStream({ ...world.lane, from: 0 }, world.ports)).rejects.toMatchObject({
    name: 'Stream.OffsetTrimmed',
  });
}

import { beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { encodeBatch } from '../../src/domain/record-batch.js';
import { walKeyOf, walMetadataOf } from '../../src/domain/stream.js';
import { fateContext, fateOf } from '../../src/stream/gc/liveness.js';
import { loadHead } from '../../src/stream/lane-store.js';
import { takeOverWithNewSession } from '../../src/stream/takeover.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { newLane } from '../support/stream-fixture.js';
import { expectGcInvariant, gcFlow, gcWorld, listAll, rootOf } from '../faults/stream-gc-world.js';

/**
 * Stream GC on the local state-machine runner (statemachines/stream-gc.asl.json) over
 * DynamoDB Local and the S3 emulator: orphan grace enforced, trimmed bytes collected
 * without grace, live bytes never touched, a late object gets a new root and grace.
 */
let stores: TestStores;
beforeAll(async () => {
  stores = await freshStores();
});

const MINUTE = 60_000;

describe('stream GC flow', () => {
  it('collects trimmed objects at once, keeps an orphan inside its grace, and collects it exactly once after', async () => {
    const world = await gcWorld(stores.ports, 'gc-grace');
    const first = await gcFlow(world);
    expect(first.status, `${first.error}: ${first.cause}`).toBe('SUCCEEDED');
    // Trimmed: gone at once. Orphans: first seen now, inside their 10 minutes.
    const after1 = new Set(await listAll(world.ports, world.lane));
    for (const key of world.trimmed) expect(after1.has(key), key).toBe(false);
    for (const key of world.orphans) {
      expect(after1.has(key), `orphan ${key} deleted inside its grace`).toBe(true);
      const root = await rootOf(world, key);
      expect(root).toMatchObject({ state: 'ACTIVE', epoch: 1, fate: 'DEAD' });
      expect(Date.parse(root!.graceDeadline!) - Date.parse(root!.firstSeen)).toBe(10 * MINUTE);
    }
    expect(first.output).toMatchObject({
      totals: { inGrace: 2, deleted: world.trimmed.length, finalized: world.trimmed.length },
    });

    // Nine minutes on: still inside the grace.
    world.clock.advance(9 * MINUTE);
    expect((await gcFlow(world)).status).toBe('SUCCEEDED');
    for (const key of world.orphans) expect((await rootOf(world, key))?.state).toBe('ACTIVE');

    // Past first seen + grace: collected, once.
    world.clock.advance(2 * MINUTE);
    const third = await gcFlow(world);
    expect(third.output).toMatchObject({ totals: { marked: 2, sealed: 2, deleted: 2, finalized: 2 } });
    const root = await rootOf(world, world.orphans[0]!);
    expect(root).toMatchObject({
      state: 'DELETED',
      epoch: 1,
      policyDigest: (third.output as { policyDigest: string }).policyDigest,
    });
    expect(root?.journal).toMatchObject({ objectKey: world.orphans[0], epoch: 1, absent: false });
    expect(root?.journal?.sha256).toMatch(/^[0-9a-f]{64}$/);
    // A fresh run finds nothing more to do, and deletes nothing twice.
    const again = await gcFlow(world);
    expect(again.output).toMatchObject({ totals: { marked: 0, deleted: 0 } });
    await expectGcInvariant(world);
  });

  it('a dry run reports what it would collect and writes nothing', async () => {
    const world = await gcWorld(stores.ports, 'gc-dry');
    const run = await gcFlow(world, { grace: '0s', dryRun: true });
    expect(run.status).toBe('SUCCEEDED');
    expect([...(run.output as { wouldMark: string[] }).wouldMark].sort()).toEqual(
      [...world.trimmed, ...world.orphans].sort(),
    );
    for (const key of [...world.live, ...world.trimmed, ...world.orphans])
      expect(await rootOf(world, key)).toBeUndefined();
    expect(world.deletes.size).toBe(0);
  });

  it('a late object under a DELETED key gets a new lifecycle root (epoch + 1) and a fresh orphan grace', async () => {
    const world = await gcWorld(stores.ports, 'gc-late');
    const key = world.orphans[0]!;
    const bytes = (await stores.ports.objects.get(key))!;
    expect((await gcFlow(world, { grace: '0s' })).status).toBe('SUCCEEDED');
    const deleted = await rootOf(world, key);
    expect(deleted).toMatchObject({ state: 'DELETED', epoch: 1 });
    // The same key written again, late (the spent attempt's delayed PUT of its own bytes).
    expect((await world.ports.objects.put('stream.append.wal', key, bytes.bytes, bytes.metadata)).status).toBe(
      'APPLIED',
    );
    world.clock.advance(MINUTE);
    const run = await gcFlow(world, { grace: '10m' });
    expect(run.output).toMatchObject({ totals: { lateObjects: 1 } });
    const renewed = await rootOf(world, key);
    expect(renewed).toMatchObject({ state: 'ACTIVE', epoch: 2, fate: 'DEAD' });
    expect(renewed?.journal ?? undefined).toBeUndefined();
    expect(Date.parse(renewed!.firstSeen)).toBeGreaterThan(Date.parse(deleted!.deletedAt!));
    expect((await listAll(world.ports, world.lane)).includes(key), 'the late object survives its fresh grace').toBe(
      true,
    );
    world.clock.advance(11 * MINUTE);
    await gcFlow(world, { grace: '10m' });
    expect(await rootOf(world, key)).toMatchObject({ state: 'DELETED', epoch: 2 });
    expect(world.deletes.get(key)).toBe(2); // once per lifecycle epoch
  });

  it('refuses a bad grace before anything is written', async () => {
    const world = await gcWorld(stores.ports, 'gc-bad');
    const run = await gcFlow(world, { grace: '10 minutes' });
    expect(run).toMatchObject({ status: 'FAILED', error: 'Stream.GcRefused' });
    expect(run.cause).toContain('grace must be a duration');
    for (const key of world.orphans) expect(await rootOf(world, key)).toBeUndefined();
  });

  it('without an intent (the lean append): DEAD only when fenced by a later epoch and no commit names it', async () => {
    const { lane } = await newLane(stores.ports, 'gc-fenced');
    await takeOverWithNewSession(lane, 'second-writer', stores.ports); // head epoch 2
    const put = async (attemptId: string, epoch: number) => {
      const bytes = encodeBatch([Buffer.from(attemptId)]);
      const sha = createHash('sha256').update(bytes).digest('hex');
      const key = walKeyOf(lane, attemptId, sha);
      await stores.ports.objects.put(
        'stream.append.wal',
        key,
        bytes,
        walMetadataOf(lane, attemptId, sha, 1, { fenceEpoch: epoch, start: 0 }),
      );
      return key;
    };
    const ctx = fateContext(stores.ports, lane, await loadHead(stores.ports, lane));
    expect(await fateOf(ctx, await put('stale', 1))).toBe('DEAD');
    expect(await fateOf(ctx, await put('current', 2))).toBe('MAY_COMMIT');
    const bytes = encodeBatch([Buffer.from('bare')]);
    const bare = walKeyOf(lane, 'bare', createHash('sha256').update(bytes).digest('hex'));
    await stores.ports.objects.put('stream.append.wal', bare, bytes, { sha256: 'x' });
    expect(await fateOf(ctx, bare), 'no fence metadata: uncertain is live').toBe('MAY_COMMIT');
    expect(await fateOf(ctx, `wal/${lane.stream}/0/not a key`)).toBe('MAY_COMMIT');
  });
});

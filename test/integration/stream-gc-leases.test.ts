import { beforeAll, describe, expect, it } from 'vitest';
import { laneKeys, type IndexEntry } from '../../src/domain/stream.js';
import { readVerified } from '../../src/objects/exact-object.js';
import { LEASE_TTL_MS, listLeases, pinForRead, releasePin } from '../../src/stream/gc/leases.js';
import { gcKeys } from '../../src/stream/gc/model.js';
import { readStream } from '../../src/stream/read.js';
import { compactLane } from '../../src/stream/compaction/compact-lane.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { interceptPorts } from '../support/intercept-ports.js';
import { gcFlow, gcWorld, listAll, readAll, rootOf, type GcWorld } from '../faults/stream-gc-world.js';

/**
 * Reader leases (docs/rules.md#reader-leases: a reader racing GC pins and revalidates before
 * reading; a MARKED root accepts no new lease; leases established before the mark drain).
 * A lease never released (a crashed reader) holds nothing off once expired: GC retires it
 * by a conditional delete at the version it judged; a reader that outlived its lease
 * revalidates it and fails clearly (Stream.LeaseExpired) instead of losing its copy.
 */
let stores: TestStores;
beforeAll(async () => {
  stores = await freshStores();
});

/** The index entry of the trimmed range [0, 3): a reader that started before the trim reads it. */
async function trimmedEntry(world: GcWorld): Promise<IndexEntry> {
  const entry = (await world.ports.authority.get(laneKeys.index(world.lane, 3))) as unknown as IndexEntry;
  expect(entry).toMatchObject({ start: 0, end: 3 });
  expect(entry.gen0Key).toBeTruthy();
  return entry;
}

describe('reader leases and GC', () => {
  it('a reader holding a lease across a MARK: deletion waits until the lease is released', async () => {
    const world = await gcWorld(stores.ports, 'lease-drain');
    const entry = await trimmedEntry(world);
    // A reader that pinned the range before GC ran (it read from 0 before the trim).
    const pin = await pinForRead(world.ports, world.lane, entry, 3);
    expect(pin.leases.map((l) => l.objectKey).sort()).toEqual([entry.gen0Key, entry.walKey].sort());

    const run = await gcFlow(world, { grace: '0s' });
    expect(run.status).toBe('SUCCEEDED');
    // Marked, not deleted: the leased bytes are still there and verify.
    for (const key of [entry.walKey, entry.gen0Key!]) {
      expect(world.deletes.get(key) ?? 0, `leased ${key} was deleted while its lease was held`).toBe(0);
      expect((await rootOf(world, key))?.state, `root of leased ${key}`).toBe('MARKED');
    }
    expect(run.output).toMatchObject({ totals: { waitingOnLeases: 2 } });
    expect((await readVerified(world.ports.objects, entry.walKey, entry.walSha256)).bytes.byteLength).toBeGreaterThan(
      0,
    );
    // A MARKED root accepts no new lease: a new reader of that range revalidates and gets a stable error.
    await expect(pinForRead(world.ports, world.lane, entry, 0)).rejects.toMatchObject({ name: 'Stream.OffsetTrimmed' });
    await expect(pinForRead(world.ports, world.lane, entry, 3)).rejects.toMatchObject({
      name: 'Stream.ObjectReclaimed',
      code: 'stream.object_reclaimed',
    });
    // Orphans without leases went meanwhile.
    for (const key of world.orphans) expect(world.deletes.get(key)).toBe(1);

    await releasePin(world.ports, world.lane, pin);
    const after = await gcFlow(world, { grace: '0s' });
    expect(after.output).toMatchObject({ totals: { waitingOnLeases: 0, deleted: 2 } });
    for (const key of [entry.walKey, entry.gen0Key!]) {
      expect((await rootOf(world, key))?.state).toBe('DELETED');
      expect(world.deletes.get(key)).toBe(1);
    }
  });

  it('a lease never released drains by expiry', async () => {
    const world = await gcWorld(stores.ports, 'lease-expiry');
    const entry = await trimmedEntry(world);
    await pinForRead(world.ports, world.lane, entry, 3);
    expect((await gcFlow(world, { grace: '0s' })).output).toMatchObject({ totals: { waitingOnLeases: 2 } });
    world.clock.advance(LEASE_TTL_MS + 1000);
    expect((await gcFlow(world, { grace: '0s' })).output).toMatchObject({ totals: { waitingOnLeases: 0, deleted: 2 } });
    expect((await listAll(world.ports, world.lane)).includes(entry.walKey)).toBe(false);
  });

  it('more than a page of leases from crashed readers: expired, they are retired by conditional deletes and hold the delete off no longer', async () => {
    const world = await gcWorld(stores.ports, 'lease-crashed');
    const entry = await trimmedEntry(world);
    // 101 readers pinned the trimmed range and crashed: 202 leases, never released.
    for (let i = 0; i < 101; i++) await pinForRead(world.ports, world.lane, entry, 3);
    const before = await listLeases(world.ports, world.lane);
    expect(before.filter((l) => l.objectKey === entry.walKey)).toHaveLength(101);
    world.clock.advance(LEASE_TTL_MS + 1000);

    const first = await gcFlow(world, { grace: '0s' });
    expect(first.status, `${first.error}: ${first.cause}`).toBe('SUCCEEDED');
    // Every expired lease of the lane is retired (those of the two copies and the world's crashed reader's).
    expect(first.output).toMatchObject({ totals: { retired: { leases: before.length } } });
    expect(await listLeases(world.ports, world.lane)).toEqual([]);
    const second = await gcFlow(world, { grace: '0s' });
    expect(second.output).toMatchObject({ totals: { waitingOnLeases: 0 } });
    for (const key of [entry.walKey, entry.gen0Key!])
      expect(world.deletes.get(key), `${key} held off by expired leases`).toBe(1);
  });

  it('an expired lease is retired only at the version GC judged: a lease renewed meanwhile stays', async () => {
    const world = await gcWorld(stores.ports, 'lease-fenced');
    const entry = await trimmedEntry(world);
    const pin = await pinForRead(world.ports, world.lane, entry, 3);
    world.clock.advance(LEASE_TTL_MS + 1000);
    // The reader renews its lease between GC's read of it and GC's delete: the delete's version no longer matches.
    const lease = gcKeys.lease(world.lane, entry.walKey, pin.leases[0]!.leaseId);
    const renewing = interceptPorts(world.ports, {
      authority: {
        delete: async (cut, key, expect_) => {
          if (key.sk === lease.sk) {
            const expiresAt = new Date(world.clock.now().getTime() + LEASE_TTL_MS).toISOString();
            await world.ports.authority.update('test.lease.renew', key, expect_, { expiresAt });
          }
          return world.ports.authority.delete(cut, key, expect_);
        },
      },
    });
    const run = await gcFlow({ lane: world.lane, ports: renewing }, { grace: '0s' });
    expect(run.status, `${run.error}: ${run.cause}`).toBe('SUCCEEDED');
    expect(await world.ports.authority.get(lease)).toMatchObject({ version: 2 });
    expect(world.deletes.get(entry.walKey) ?? 0, 'deleted under a live lease').toBe(0);
  });

  it('a reader stalled past its lease fails its read with Stream.LeaseExpired: the collected copies are never quarantined or skipped', async () => {
    const world = await gcWorld(stores.ports, 'lease-stalled');
    const entry = (await world.ports.authority.get(laneKeys.index(world.lane, 5))) as unknown as IndexEntry;
    // The reader pins [3, 5) (no compaction covers it yet) and stalls inside its first GET.
    const held = stores.hold('stream.read.provider');
    const reading = readStream({ ...world.lane, from: 3, maxRecords: 2 }, world.ports);
    await held.reached;
    // Meanwhile a compaction supersedes the range's copies, the lease runs out and GC collects them.
    expect(await compactLane(world.lane, world.ports)).toMatchObject({ compacted: { start: 3, end: 7 } });
    world.clock.advance(LEASE_TTL_MS + 1000);
    const run = await gcFlow(world, { grace: '0s' });
    expect(run.output).toMatchObject({ totals: { waitingOnLeases: 0 } });
    for (const key of [entry.walKey, entry.gen0Key!]) expect(world.deletes.get(key)).toBe(1);
    held.release();
    await expect(reading).rejects.toMatchObject({ name: 'Stream.LeaseExpired', code: 'stream.lease_expired' });
    expect(
      await world.ports.authority.query(laneKeys.pk(world.lane), 'quarantine#'),
      'a collected copy was quarantined as bad',
    ).toEqual([]);
    // Read again: the compaction serves the range.
    expect((await readStream({ ...world.lane, from: 3, maxRecords: 2 }, world.ports)).records).toHaveLength(2);
  });

  it('reads pin and release every copy they read; a lost pin response is resolved by reload', async () => {
    const world = await gcWorld(stores.ports, 'lease-read');
    await gcFlow(world, { grace: '0s' }); // roots exist now: pins check their versions
    stores.faults.arm('stream.read.pin:lose-response,stream.read.release:lose-request');
    expect(await readAll(world)).toEqual(world.readable);
    stores.faults.disarm();
    // The lost release leaves its leases to expire; every other read released its own.
    const leases = await listLeases(world.ports, world.lane);
    expect(leases.length).toBeGreaterThan(0);
    world.clock.advance(LEASE_TTL_MS + 1000);
    expect((await listLeases(world.ports, world.lane)).every((l) => l.expired)).toBe(true);
    const before = leases.length;
    expect(await readAll(world)).toEqual(world.readable);
    expect((await listLeases(world.ports, world.lane)).length, 'a clean read leaves no lease behind').toBe(before);
  });

  it('a read of a range whose copies are collected never returns deleted bytes', async () => {
    const world = await gcWorld(stores.ports, 'lease-race');
    await gcFlow(world, { grace: '0s' });
    // The trimmed range is gone; a read there is refused by the trim, never served or skipped.
    await expect(readStream({ ...world.lane, from: 0 }, world.ports)).rejects.toMatchObject({
      name: 'Stream.OffsetTrimmed',
    });
    expect(await readAll(world)).toEqual(world.readable);
  });
});

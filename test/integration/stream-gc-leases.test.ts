import { beforeAll, describe, expect, it } from 'vitest';
import { laneKeys, type IndexEntry } from '../../src/domain/stream.js';
import { readVerified } from '../../src/objects/exact-object.js';
import { LEASE_TTL_MS, listLeases, pinForRead, releasePin } from '../../src/stream/gc/leases.js';
import { readStream } from '../../src/stream/read.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { gcFlow, gcWorld, listAll, readAll, rootOf, type GcWorld } from '../faults/stream-gc-world.js';

/**
 * Reader leases (seed 002, "Read failures": a reader racing GC pins and revalidates before
 * reading; a MARKED root accepts no new lease; leases established before the mark drain).
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
    expect((await readVerified(world.ports.objects, entry.walKey, entry.walSha256)).bytes.byteLength).toBeGreaterThan(0);
    // A MARKED root accepts no new lease: a new reader of that range revalidates and gets a stable error.
    await expect(pinForRead(world.ports, world.lane, entry, 0)).rejects.toMatchObject({ name: 'Stream.OffsetTrimmed' });
    await expect(pinForRead(world.ports, world.lane, entry, 3)).rejects.toMatchObject({ name: 'Stream.ObjectReclaimed', code: 'stream.object_reclaimed' });
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
    await expect(readStream({ ...world.lane, from: 0 }, world.ports)).rejects.toMatchObject({ name: 'Stream.OffsetTrimmed' });
    expect(await readAll(world)).toEqual(world.readable);
  });
});

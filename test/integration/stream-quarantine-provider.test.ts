import { beforeAll, describe, expect, it } from 'vitest';
import { readStream, type ReadResult } from '../../src/stream/read.js';
import { PROVIDER_ATTEMPTS } from '../../src/stream/read/candidates.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { quarantineCount, readAllOf, readWorld, withOffsets, type ReadWorld } from '../faults/stream-read-world.js';

/**
 * Seed 002, "Read failures": a provider failure (the object store not answering a GET) gets
 * bounded retries before same-view fallback and is never a verdict on the bytes — nothing
 * is quarantined. Against DynamoDB Local and the S3 emulator; faults at stream.read.provider
 * (gen0 is the first GET of a range, the WAL object the fallback).
 */
let stores: TestStores;
let w: ReadWorld;
beforeAll(async () => {
  stores = await freshStores();
  w = await readWorld(stores, 'provider', [3]);
}, 120_000);

async function readUnder(spec: string, lane = w.lane) {
  const injector = stores.faults.arm(spec);
  try {
    const result: { value?: ReadResult; error?: Error } = await readAllOf(stores, lane).then(
      (value) => ({ value }),
      (error: Error) => ({ error }),
    );
    return { ...result, fired: injector.fired, hits: injector.hitCounts()['stream.read.provider'] ?? 0 };
  } finally {
    stores.faults.disarm();
  }
}

describe('provider failures at stream.read.provider', () => {
  it('fail@1 on gen0: served from gen0 after one retry, no fallback, nothing quarantined', async () => {
    const r = await readUnder('stream.read.provider:fail@1');
    expect(r.error).toBeUndefined();
    expect(r.value!.records).toEqual(withOffsets(w.expected));
    expect(r.value!.quarantined).toEqual([]);
    expect(r.fired).toHaveLength(1);
    expect(r.hits, 'gen0 twice, the WAL copy never').toBe(2);
    expect(await quarantineCount(stores, w.lane)).toBe(0);
  });

  it('a persistent failure of gen0: served from the WAL copy after the bounded retries, nothing quarantined', async () => {
    const r = await readUnder(`stream.read.provider:fail@1*${PROVIDER_ATTEMPTS}`);
    expect(r.error).toBeUndefined();
    expect(r.value!.records).toEqual(withOffsets(w.expected));
    expect(r.value!.quarantined).toEqual([]);
    expect(r.hits, 'gen0 PROVIDER_ATTEMPTS times, then the WAL copy once').toBe(PROVIDER_ATTEMPTS + 1);
    expect(await quarantineCount(stores, w.lane)).toBe(0);
  });

  it('every GET fails, nothing read yet: a stable transient error, never a skip, nothing quarantined', async () => {
    const r = await readUnder('stream.read.provider:fail*');
    expect(r.value).toBeUndefined();
    expect(r.error).toMatchObject({ name: 'Stream.ProviderUnavailable', code: 'stream.read_provider_unavailable' });
    expect(r.hits, 'bounded: PROVIDER_ATTEMPTS per copy').toBe(2 * PROVIDER_ATTEMPTS);
    expect(await quarantineCount(stores, w.lane)).toBe(0);
    // Not a verdict: the next read, without the fault, serves gen0 as before.
    const after = await readStream({ ...w.lane, from: 0 }, stores.ports);
    expect(after.records).toEqual(withOffsets(w.expected));
    expect(after.quarantined).toEqual([]);
  });

  it('a later range whose copies all fail: the records before it, `next` at its start; the next read retries exactly there', async () => {
    const two = await readWorld(stores, 'provider-later', [3, 2]);
    // Hit 1 is [0,3)'s gen0 GET; from hit 2 on every GET ([3,5)'s gen0, then its WAL copy) fails.
    const r = await readUnder('stream.read.provider:fail@2*', two.lane);
    expect(r.error).toBeUndefined();
    expect(r.value!.records, 'the range read before the failure, nothing past it').toEqual(
      withOffsets(two.expected).slice(0, 3),
    );
    expect(r.value!.next, "the failed range's start: never skipped").toBe(3);
    expect(r.value!.committedEnd).toBe(5);
    expect(r.value!.quarantined).toEqual([]);
    expect(r.hits, '[0,3) once, then PROVIDER_ATTEMPTS per copy of [3,5)').toBe(1 + 2 * PROVIDER_ATTEMPTS);
    expect(await quarantineCount(stores, two.lane)).toBe(0);
    // The consumer's next read starts at `next`; the provider answers again, so it reads the rest.
    const again = await readStream({ ...two.lane, from: r.value!.next }, stores.ports);
    expect(again.records).toEqual(withOffsets(two.expected).slice(3));
    expect(again.next).toBe(5);
  });

  it('a failure at the first range of a page: the error leaves as before, even when the read starts mid-lane', async () => {
    const two = await readWorld(stores, 'provider-first', [3, 2]);
    const injector = stores.faults.arm('stream.read.provider:fail*');
    try {
      await expect(readStream({ ...two.lane, from: 3 }, stores.ports)).rejects.toMatchObject({
        code: 'stream.read_provider_unavailable',
      });
    } finally {
      stores.faults.disarm();
    }
    expect(injector.hitCounts()['stream.read.provider']).toBe(2 * PROVIDER_ATTEMPTS);
  });
});

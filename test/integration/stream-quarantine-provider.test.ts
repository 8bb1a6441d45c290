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

async function readUnder(spec: string) {
  const injector = stores.faults.arm(spec);
  try {
    const result: { value?: ReadResult; error?: Error } = await readAllOf(stores, w.lane).then(
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

  it('every GET fails: a stable transient error, never a skip or a partial page, nothing quarantined', async () => {
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
});

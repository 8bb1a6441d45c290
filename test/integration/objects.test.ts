import { beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/domain/digest.js';
import { probeExact, putExact, readVerified } from '../../src/objects/exact-object.js';
import { freshStores, type TestStores } from '../support/emulators.js';

/** Object generations against the S3 emulator: identity keys, SHA-256 in metadata, verified reads. */
let stores: TestStores;
beforeAll(async () => {
  stores = await freshStores();
});

const bytesOf = (s: string) => new TextEncoder().encode(s);
const meta = (bytes: Uint8Array, id: string) => ({ sha256: sha256Hex(bytes), 'task-id': id });

describe('exact objects', () => {
  it('a lost PUT response is resolved by reading the exact key back: REUSED, written once', async () => {
    const bytes = bytesOf('payload-1');
    stores.faults.arm('test.object.put:lose-response');
    const result = await putExact(stores.ports.objects, 'test.object.put', 'gen/a', bytes, meta(bytes, 't1'));
    stores.faults.disarm();
    expect(result).toMatchObject({ status: 'REUSED', sha256: sha256Hex(bytes), size: bytes.byteLength });
    expect((await readVerified(stores.ports.objects, 'gen/a', sha256Hex(bytes))).metadata['task-id']).toBe('t1');
  });

  it('a PUT that never landed (crash before) is written by the next attempt', async () => {
    const bytes = bytesOf('payload-2');
    stores.faults.arm('test.object.put:crash-before');
    await expect(putExact(stores.ports.objects, 'test.object.put', 'gen/b', bytes, meta(bytes, 't1'))).rejects.toMatchObject({
      name: 'Cutpoint.WorkerCrashed',
    });
    stores.faults.disarm();
    expect(await stores.ports.objects.head('gen/b')).toBeUndefined();
    const result = await putExact(stores.ports.objects, 'test.object.put', 'gen/b', bytes, meta(bytes, 't1'));
    expect(result.status).toBe('WRITTEN');
  });

  it('someone else\'s bytes under the key are a conflict, never a match', async () => {
    // The emulator does not enforce If-None-Match (real S3 answers 412, which putExact
    // resolves with this same probe); the identity comparison is what decides.
    const mine = bytesOf('mine');
    const theirs = bytesOf('theirs');
    await stores.ports.objects.put('test.object.put', 'gen/c', theirs, meta(theirs, 't2'));
    expect(await probeExact(stores.ports.objects, 'gen/c', meta(mine, 't1'))).toBe('CONFLICT');
    // Same checksum claimed, other task: still not ours.
    expect(await probeExact(stores.ports.objects, 'gen/c', meta(theirs, 't1'))).toBe('CONFLICT');
    expect(await probeExact(stores.ports.objects, 'gen/c', meta(theirs, 't2'))).toBe('MATCH');
    expect(await probeExact(stores.ports.objects, 'gen/none', meta(theirs, 't2'))).toBe('ABSENT');
  });

  it('every read is verified: corrupted bytes and missing objects are errors, never data', async () => {
    const good = bytesOf('good bytes');
    await stores.ports.objects.put('test.object.put', 'gen/d', bytesOf('evil bytes'), meta(good, 't1'));
    await expect(readVerified(stores.ports.objects, 'gen/d', sha256Hex(good))).rejects.toMatchObject({
      name: 'Cutpoint.ChecksumMismatch',
    });
    await expect(readVerified(stores.ports.objects, 'gen/missing', sha256Hex(good))).rejects.toMatchObject({
      name: 'Cutpoint.ObjectMissing',
    });
  });
});

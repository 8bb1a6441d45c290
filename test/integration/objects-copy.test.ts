import { beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/domain/digest.js';
import { copyExact, readVerified } from '../../src/objects/exact-object.js';
import { freshStores, type TestStores } from '../support/emulators.js';

/**
 * Server-side copies against the S3 emulator (CopyObject): the bytes never pass through the
 * caller, the target gets the caller's metadata (not the source's), and a lost answer or a
 * taken key is resolved by reading the exact target back — as for a PUT.
 */
let stores: TestStores;
beforeAll(async () => {
  stores = await freshStores();
});

const bytesOf = (s: string) => new TextEncoder().encode(s);
const CUT = 'test.object.copy';

async function source(
  key: string,
  text: string,
): Promise<{ key: string; size: number; sha256: string; bytes: Uint8Array }> {
  const bytes = bytesOf(text);
  const sha256 = sha256Hex(bytes);
  expect(
    (await stores.ports.objects.put('test.source.put', key, bytes, { sha256, 'task-id': 'the-writer' })).status,
  ).toBe('APPLIED');
  return { key, size: bytes.byteLength, sha256, bytes };
}

describe('copyExact', () => {
  it('one CopyObject: identical bytes under the target, the metadata replaced, no byte read or written by the caller', async () => {
    // A key that needs encoding in x-amz-copy-source (space, plus, equals, non-ASCII).
    const src = await source('wal/a b+c=d/ü-1.bin', 'records of range one');
    const before = stores.meter.snapshot();
    const result = await copyExact(stores.ports.objects, CUT, src, 'gen/copy-1', {
      sha256: src.sha256,
      'task-id': 'copier',
    });
    const after = stores.meter.snapshot();
    expect(result).toEqual({ status: 'WRITTEN', key: 'gen/copy-1', sha256: src.sha256, size: src.size });
    const delta = Object.fromEntries(
      Object.entries(after)
        .map(([k, n]) => [k, n - (before[k] ?? 0)])
        .filter(([, n]) => n !== 0),
    );
    expect(delta).toEqual({ 's3.CopyObject': 1 });
    const copy = await readVerified(stores.ports.objects, 'gen/copy-1', src.sha256);
    expect(Buffer.from(copy.bytes).equals(Buffer.from(src.bytes))).toBe(true);
    expect(copy.metadata).toEqual({ sha256: src.sha256, 'task-id': 'copier' });
  });

  it('a lost CopyObject response is resolved by reading the exact target back: REUSED', async () => {
    const src = await source('wal/lost-response', 'records of range two');
    stores.faults.arm(`${CUT}:lose-response`);
    const result = await copyExact(stores.ports.objects, CUT, src, 'gen/copy-2', {
      sha256: src.sha256,
      'task-id': 'copier',
    });
    stores.faults.disarm();
    expect(result.status).toBe('REUSED');
    expect((await readVerified(stores.ports.objects, 'gen/copy-2', src.sha256)).metadata['task-id']).toBe('copier');
  });

  it('a copy that never landed (lost request) is copied again by the next try', async () => {
    const src = await source('wal/lost-request', 'records of range three');
    stores.faults.arm(`${CUT}:lose-request`);
    const result = await copyExact(stores.ports.objects, CUT, src, 'gen/copy-3', {
      sha256: src.sha256,
      'task-id': 'copier',
    });
    stores.faults.disarm();
    expect(result.status).toBe('WRITTEN');
    await readVerified(stores.ports.objects, 'gen/copy-3', src.sha256);
  });

  it("someone else's object under the target is an identity conflict, never a match, and stays untouched", async () => {
    const src = await source('wal/conflict', 'records of range four');
    const other = bytesOf('another writer');
    await stores.ports.objects.put('test.object.put', 'gen/copy-4', other, {
      sha256: sha256Hex(other),
      'task-id': 'someone-else',
    });
    // The copy's answer is lost before it lands (had it landed, If-None-Match would refuse
    // the taken key with 412): the exact reload of the target decides.
    stores.faults.arm(`${CUT}:lose-request*`);
    await expect(
      copyExact(stores.ports.objects, CUT, src, 'gen/copy-4', { sha256: src.sha256, 'task-id': 'copier' }),
    ).rejects.toMatchObject({
      name: 'Cutpoint.IdentityConflict',
    });
    stores.faults.disarm();
    expect((await readVerified(stores.ports.objects, 'gen/copy-4', sha256Hex(other))).metadata['task-id']).toBe(
      'someone-else',
    );
  });

  it('a missing source is ObjectMissing and nothing appears under the target', async () => {
    await expect(
      copyExact(stores.ports.objects, CUT, { key: 'wal/never-written', size: 3 }, 'gen/copy-5', {
        sha256: sha256Hex('abc'),
        'task-id': 'copier',
      }),
    ).rejects.toMatchObject({
      name: 'Cutpoint.ObjectMissing',
    });
    expect(await stores.ports.objects.head('gen/copy-5')).toBeUndefined();
  });
});

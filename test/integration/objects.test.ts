import { beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/domain/digest.js';
import { objectClaimKey, putOperatorObject } from '../../src/objects/claimed-put.js';
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
    await expect(
      putExact(stores.ports.objects, 'test.object.put', 'gen/b', bytes, meta(bytes, 't1')),
    ).rejects.toMatchObject({
      name: 'Cutpoint.WorkerCrashed',
    });
    stores.faults.disarm();
    expect(await stores.ports.objects.head('gen/b')).toBeUndefined();
    const result = await putExact(stores.ports.objects, 'test.object.put', 'gen/b', bytes, meta(bytes, 't1'));
    expect(result.status).toBe('WRITTEN');
  });

  it("someone else's bytes under the key are a conflict, never a match", async () => {
    // A taken key is refused (412, If-None-Match) and putExact resolves it with this same
    // probe: the identity comparison is what decides.
    const mine = bytesOf('mine');
    const theirs = bytesOf('theirs');
    await stores.ports.objects.put('test.object.put', 'gen/c', theirs, meta(theirs, 't2'));
    expect(await probeExact(stores.ports.objects, 'gen/c', meta(mine, 't1'))).toBe('CONFLICT');
    // Same checksum claimed, other task: still not ours.
    expect(await probeExact(stores.ports.objects, 'gen/c', meta(theirs, 't1'))).toBe('CONFLICT');
    expect(await probeExact(stores.ports.objects, 'gen/c', meta(theirs, 't2'))).toBe('MATCH');
    expect(await probeExact(stores.ports.objects, 'gen/none', meta(theirs, 't2'))).toBe('ABSENT');
  });

  it('writes are create-only, as on S3: a taken key is EXISTS and keeps its bytes; of racing creates exactly one applies', async () => {
    const first = bytesOf('first');
    expect((await stores.ports.objects.put('test.object.put', 'gen/once', first, meta(first, 't1'))).status).toBe(
      'APPLIED',
    );
    const late = bytesOf('late');
    expect((await stores.ports.objects.put('test.object.put', 'gen/once', late, meta(late, 't2'))).status).toBe(
      'EXISTS',
    );
    const copied = await stores.ports.objects.copy('test.object.copy', 'gen/once', 'gen/once', meta(first, 't3'));
    expect(copied.status).toBe('EXISTS');
    const stored = await stores.ports.objects.get('gen/once');
    expect([sha256Hex(stored!.bytes), stored!.metadata['task-id']]).toEqual([sha256Hex(first), 't1']);
    for (let round = 0; round < 5; round++) {
      const racers = ['x', 'y', 'z'].map((c) => bytesOf(`${c}-${round}`));
      const outcomes = await Promise.all(
        racers.map((b, i) => stores.ports.objects.put('test.object.put', `gen/race-${round}`, b, meta(b, `r${i}`))),
      );
      expect(
        outcomes.filter((o) => o.status === 'APPLIED'),
        JSON.stringify(outcomes),
      ).toHaveLength(1);
      expect(outcomes.every((o) => o.status === 'APPLIED' || o.status === 'EXISTS')).toBe(true);
    }
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

describe('operator object writes (cutpoint object put): a key holds one content forever', () => {
  const claimOf = (key: string) => stores.ports.authority.get(objectClaimKey(key));

  it('other bytes under an existing key are objects.identity_conflict and nothing is written; the same bytes are REUSED', async () => {
    const first = bytesOf('first');
    expect(await putOperatorObject(stores.ports, 'ops/a', first)).toMatchObject({
      status: 'WRITTEN',
      sha256: sha256Hex(first),
    });
    const claim = await claimOf('ops/a');
    await expect(putOperatorObject(stores.ports, 'ops/a', bytesOf('second'))).rejects.toMatchObject({
      code: 'objects.identity_conflict',
    });
    expect(sha256Hex((await stores.ports.objects.get('ops/a'))!.bytes)).toBe(sha256Hex(first));
    expect(await claimOf('ops/a')).toEqual(claim);
    expect(await putOperatorObject(stores.ports, 'ops/a', first)).toMatchObject({ status: 'REUSED' });
  });

  it('an object written before claims existed is compared too: other bytes conflict and leave no claim', async () => {
    const theirs = bytesOf('unclaimed');
    await stores.ports.objects.put('test.object.put', 'ops/b', theirs, { sha256: sha256Hex(theirs) });
    await expect(putOperatorObject(stores.ports, 'ops/b', bytesOf('mine'))).rejects.toMatchObject({
      code: 'objects.identity_conflict',
    });
    expect(await claimOf('ops/b')).toBeUndefined();
    expect(sha256Hex((await stores.ports.objects.get('ops/b'))!.bytes)).toBe(sha256Hex(theirs));
  });

  it('racing writers of different bytes: exactly one wins the claim, the other writes nothing', async () => {
    for (let round = 0; round < 5; round++) {
      const key = `ops/race-${round}`;
      const contents = ['x', 'y', 'z'].map((c) => bytesOf(`${c}-${round}`));
      const outcomes = await Promise.allSettled(contents.map((bytes) => putOperatorObject(stores.ports, key, bytes)));
      const won = outcomes.flatMap((o, i) => (o.status === 'fulfilled' ? [i] : []));
      expect(won, JSON.stringify(outcomes)).toHaveLength(1);
      for (const o of outcomes)
        if (o.status === 'rejected') expect(o.reason).toMatchObject({ code: 'objects.identity_conflict' });
      const stored = sha256Hex((await stores.ports.objects.get(key))!.bytes);
      expect(stored).toBe(sha256Hex(contents[won[0]!]!));
      expect((await claimOf(key))?.sha256).toBe(stored);
    }
  });

  it('keys under the system roots (WAL, generations, delivery) are objects.reserved_key, nothing written', async () => {
    for (const key of [
      'wal/s/0/a-1/x.wal',
      'generations/stream/s/p0/g0000000000/a.bin',
      'delivery/daily/inv-x/evidence.json',
    ]) {
      await expect(putOperatorObject(stores.ports, key, bytesOf('x'))).rejects.toMatchObject({
        code: 'objects.reserved_key',
      });
      expect(await stores.ports.objects.head(key)).toBeUndefined();
      expect(await claimOf(key)).toBeUndefined();
    }
  });
});

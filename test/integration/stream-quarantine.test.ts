import { beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/domain/digest.js';
import { laneKeys } from '../../src/domain/stream.js';
import { listQuarantine, releaseQuarantine } from '../../src/stream/read/quarantine-release.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import {
  overwrite,
  quarantineItemOf,
  readAllOf,
  readWorld,
  withOffsets,
  type ReadWorld,
} from '../faults/stream-read-world.js';

/**
 * Quarantine is not forever (docs/rules.md#quarantine; issue #11): a quarantined copy
 * re-verified by exact identity — the authority evidence's key, SHA-256 and size, the
 * bytes' hash and record count — is released; a still-bad or forged copy is refused and
 * the item stays. DynamoDB Local and the S3 emulator.
 */
let stores: TestStores;
beforeAll(async () => {
  stores = await freshStores();
}, 120_000);

/** A lane whose gen0 copy of [0,3) was found corrupt by a read (and quarantined); returns the good bytes. */
async function quarantinedGen0(label: string): Promise<{ w: ReadWorld; good: Uint8Array }> {
  const w = await readWorld(stores, label, [3]);
  const good = await overwrite(stores, w.first.gen0Key!);
  const read = await readAllOf(stores, w.lane);
  expect(read.records, 'the WAL copy serves').toEqual(withOffsets(w.expected));
  expect(read.quarantined).toEqual([{ key: w.first.gen0Key, reason: 'checksum_mismatch' }]);
  const item = await quarantineItemOf(stores, w.lane, w.first.gen0Key!);
  expect(item).toMatchObject({
    objectKey: w.first.gen0Key,
    expectedSha256: w.first.gen0Sha256,
    copy: 'gen0',
    start: 0,
    end: 3,
    reason: 'checksum_mismatch',
  });
  return { w, good };
}

describe('quarantine release', () => {
  it('restored exact bytes: released by exact identity, and the next read serves gen0 again', async () => {
    const { w, good } = await quarantinedGen0('release');
    const listed = await listQuarantine(w.lane, stores.ports);
    expect(listed.items).toEqual([
      expect.objectContaining({ key: w.first.gen0Key, reason: 'checksum_mismatch', at: expect.any(String) }),
    ]);

    await overwrite(stores, w.first.gen0Key!, good);
    const released = await releaseQuarantine({ ...w.lane, objectKey: w.first.gen0Key }, stores.ports);
    expect(released).toMatchObject({
      objectKey: w.first.gen0Key,
      copy: 'gen0',
      start: 0,
      end: 3,
      sha256: w.first.gen0Sha256,
      released: true,
    });
    expect(await quarantineItemOf(stores, w.lane, w.first.gen0Key!)).toBeUndefined();
    expect((await listQuarantine(w.lane, stores.ports)).items).toEqual([]);

    // gen0 serves again: with the WAL copy now bad, only gen0 can have served the exact
    // records (and the WAL copy, never read, is not quarantined).
    await overwrite(stores, w.first.walKey);
    const read = await readAllOf(stores, w.lane);
    expect(read.records).toEqual(withOffsets(w.expected));
    expect(read.quarantined).toEqual([]);
  });

  it('a still-bad copy is refused (stream.quarantine_still_bad) and the item stays as it was', async () => {
    const { w } = await quarantinedGen0('still-bad');
    const before = await quarantineItemOf(stores, w.lane, w.first.gen0Key!);
    await expect(releaseQuarantine({ ...w.lane, objectKey: w.first.gen0Key }, stores.ports)).rejects.toMatchObject({
      name: 'Stream.QuarantineStillBad',
      code: 'stream.quarantine_still_bad',
    });
    expect(await quarantineItemOf(stores, w.lane, w.first.gen0Key!)).toEqual(before);
    // A copy that is missing is still bad too.
    expect((await stores.ports.objects.delete('test.object.delete', w.first.gen0Key!)).status).toBe('APPLIED');
    await expect(releaseQuarantine({ ...w.lane, objectKey: w.first.gen0Key }, stores.ports)).rejects.toMatchObject({
      code: 'stream.quarantine_still_bad',
    });
    expect(await quarantineItemOf(stores, w.lane, w.first.gen0Key!)).toEqual(before);
  });

  it('a forged release — bytes that hash to the item but are not the evidence identity — is refused and the item stays', async () => {
    const { w } = await quarantinedGen0('forged');
    const key = laneKeys.quarantine(w.lane, w.first.gen0Key!);
    const evil = new TextEncoder().encode('not the committed generation');
    await overwrite(stores, w.first.gen0Key!, evil);
    const item = (await stores.ports.authority.get(key))!;
    const forged = await stores.ports.authority.update(
      'test.quarantine.forge',
      key,
      { version: item.version },
      { expectedSha256: sha256Hex(evil) },
    );
    expect(forged.status).toBe('APPLIED');
    await expect(releaseQuarantine({ ...w.lane, objectKey: w.first.gen0Key }, stores.ports)).rejects.toMatchObject({
      name: 'Stream.QuarantineIdentityMismatch',
      code: 'stream.quarantine_identity_mismatch',
    });
    expect(await quarantineItemOf(stores, w.lane, w.first.gen0Key!)).toMatchObject({
      version: item.version + 1,
      expectedSha256: sha256Hex(evil),
    });

    // An item for a key the evidence does not name (with bytes that hash right under it) is refused too.
    const other = 'stream/forged/gen0-copy';
    expect((await stores.ports.objects.put('test.object.put', other, evil, { sha256: sha256Hex(evil) })).status).toBe(
      'APPLIED',
    );
    const fake = {
      ...laneKeys.quarantine(w.lane, other),
      objectKey: other,
      expectedSha256: sha256Hex(evil),
      copy: 'gen0',
      start: 0,
      end: 3,
      reason: 'missing',
      at: 'x',
    };
    expect((await stores.ports.authority.put('test.quarantine.forge', fake, 'absent')).status).toBe('APPLIED');
    await expect(releaseQuarantine({ ...w.lane, objectKey: other }, stores.ports)).rejects.toMatchObject({
      code: 'stream.quarantine_identity_mismatch',
    });
    expect(await quarantineItemOf(stores, w.lane, other)).toBeDefined();
  });

  it('validates before reading anything; an unknown key is stream.quarantine_not_found', async () => {
    const w = await readWorld(stores, 'notfound', [1]);
    await expect(releaseQuarantine({ ...w.lane, objectKey: '' }, stores.ports)).rejects.toMatchObject({
      code: 'stream.invalid_object_key',
    });
    await expect(releaseQuarantine({ ...w.lane, objectKey: w.first.walKey }, stores.ports)).rejects.toMatchObject({
      name: 'Stream.QuarantineNotFound',
      code: 'stream.quarantine_not_found',
    });
  });

  it('a lost answer of the release delete is resolved by reloading the exact item', async () => {
    const { w, good } = await quarantinedGen0('lost');
    await overwrite(stores, w.first.gen0Key!, good);
    const injector = stores.faults.arm('stream.read.quarantine-release:lose-response');
    try {
      await expect(releaseQuarantine({ ...w.lane, objectKey: w.first.gen0Key }, stores.ports)).resolves.toMatchObject({
        released: true,
      });
    } finally {
      stores.faults.disarm();
    }
    expect(injector.fired).toHaveLength(1);
    expect(await quarantineItemOf(stores, w.lane, w.first.gen0Key!)).toBeUndefined();
  });
});

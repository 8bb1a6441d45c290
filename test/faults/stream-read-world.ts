import { expect } from 'vitest';
import { sha256Hex } from '../../src/domain/digest.js';
import { laneKeys, type IndexEntry, type LaneRef } from '../../src/domain/stream.js';
import { appendBatch } from '../../src/stream/append-batch.js';
import { materializeGen0Batch } from '../../src/stream/append/gen0-batch.js';
import { readStream, type ReadResult } from '../../src/stream/read.js';
import type { QuarantineItem } from '../../src/stream/read/quarantine.js';
import type { TestStores } from '../support/emulators.js';
import { newLane } from '../support/stream-fixture.js';
import { replaceObject } from '../support/replace-object.js';

/**
 * A lane for the read-failure tests (quarantine, release, provider failures): committed
 * ranges through the real append path, generation 0 materialized, both copies known.
 */
export interface ReadWorld {
  lane: LaneRef;
  /** Every committed record, base64, by offset. */
  expected: string[];
  /** The first range's index entry (gen0 and WAL copies). */
  first: IndexEntry;
}

export const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

export async function readWorld(stores: TestStores, label: string, sizes: number[] = [3, 2]): Promise<ReadWorld> {
  const { lane, session } = await newLane(stores.ports, label);
  const expected: string[] = [];
  for (const [i, size] of sizes.entries()) {
    const records = Array.from({ length: size }, (_, j) => new TextEncoder().encode(`${label}-b${i}-r${j}`));
    const outcome = await appendBatch({ ...lane, attemptId: `${label}-a${i}`, session, records }, stores.ports);
    expect(outcome).toMatchObject({ status: 'KNOWN_COMMITTED' });
    expected.push(...records.map(b64));
  }
  const gen0 = await materializeGen0Batch(lane, stores.ports);
  expect(gen0.materialized).toHaveLength(sizes.length);
  const first = (await stores.ports.authority.get(laneKeys.index(lane, sizes[0]!))) as unknown as IndexEntry;
  expect(first.gen0Key, 'the first range names its generation 0').toBeDefined();
  return { lane, expected, first };
}

export async function readAllOf(stores: TestStores, lane: LaneRef): Promise<ReadResult> {
  return readStream({ ...lane, from: 0, maxRecords: 10_000 }, stores.ports);
}

export const withOffsets = (expected: string[]) => expected.map((data, offset) => ({ offset, data }));

/**
 * Replaces an object's bytes, keeping its metadata (a corrupted object; see replaceObject).
 * Returns the bytes it replaced.
 */
export async function overwrite(
  stores: TestStores,
  key: string,
  bytes: Uint8Array = new TextEncoder().encode('CPWAL1\n\0\0\0\x01X'),
): Promise<Uint8Array> {
  const before = await stores.ports.objects.get(key);
  expect(before, `${key} exists before the test overwrites it`).toBeDefined();
  expect(await replaceObject(stores.ports.objects, key, bytes, before!.metadata)).toBe('APPLIED');
  expect(sha256Hex((await stores.ports.objects.get(key))!.bytes)).toBe(sha256Hex(bytes));
  return before!.bytes;
}

export async function quarantineItemOf(
  stores: TestStores,
  lane: LaneRef,
  objectKey: string,
): Promise<QuarantineItem | undefined> {
  return (await stores.ports.authority.get(laneKeys.quarantine(lane, objectKey))) as QuarantineItem | undefined;
}

export async function quarantineCount(stores: TestStores, lane: LaneRef): Promise<number> {
  return (await stores.ports.authority.query(laneKeys.pk(lane), 'quarantine#')).length;
}

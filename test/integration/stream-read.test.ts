import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/domain/digest.js';
import { FAULT_KINDS } from '../../src/domain/faults.js';
import { laneKeys, type IndexEntry, type LaneRef } from '../../src/domain/stream.js';
import type { ItemKey } from '../../src/ports/authority.js';
import { appendBatch } from '../../src/stream/append-batch.js';
import { materializeGen0Batch } from '../../src/stream/append/gen0-batch.js';
import { createStream } from '../../src/stream/create-stream.js';
import { readStream, type ReadResult } from '../../src/stream/read.js';
import { takeOverWithNewSession } from '../../src/stream/takeover.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { overwrite } from '../faults/stream-read-world.js';

/**
 * The stream read path against real DynamoDB Local and the S3 emulator
 * (docs/rules.md#reads-never-skip): exact bytes by offset, index repair from commit records, verified reads
 * with quarantine by exact identity and same-view fallback, never EOF and never a skip.
 */
let stores: TestStores;
beforeAll(async () => {
  stores = await freshStores();
});

interface Fixture {
  lane: LaneRef;
  ranges: Array<{ start: number; end: number; attemptId: string }>;
  /** Every committed record, base64, indexed by offset. */
  expected: string[];
}

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

/** Distinct bytes per record, binary and empty ones included. */
function recordsOf(batch: number, size: number): Uint8Array[] {
  return Array.from({ length: size }, (_, j) =>
    batch === 1 && j === 0
      ? new Uint8Array(0)
      : new Uint8Array([batch, j, 0, 255, 10, ...new TextEncoder().encode(`b${batch}-r${j}`)]),
  );
}

/** A lane built through the real append path, one committed range per batch, then its generation-0 run. */
async function laneWith(label: string, sizes: number[]): Promise<Fixture> {
  const stream = `read-${label}-${randomUUID().slice(0, 6)}`;
  await createStream({ stream, partitions: 1 }, stores.ports);
  const lane = { stream, partition: 0 };
  const fence = await takeOverWithNewSession(lane, 'read-test', stores.ports);
  const fixture: Fixture = { lane, ranges: [], expected: [] };
  for (const [i, size] of sizes.entries()) {
    const records = recordsOf(i, size);
    const attemptId = `${label}-a${i}`;
    const outcome = await appendBatch({ ...lane, attemptId, session: fence, records }, stores.ports);
    expect(outcome).toMatchObject({ status: 'KNOWN_COMMITTED' });
    expect(outcome.pendingRepairs).toBeUndefined();
    fixture.ranges.push({ start: outcome.start!, end: outcome.end!, attemptId });
    fixture.expected.push(...records.map(b64));
  }
  // Generation 0 is materialized off the acknowledged path, batched: one run for the lane.
  const gen0 = await materializeGen0Batch(lane, stores.ports);
  expect(gen0.materialized).toHaveLength(sizes.length);
  return fixture;
}

const SIZES = [3, 1, 4, 2, 5]; // ranges [0,3) [3,4) [4,8) [8,10) [10,15)

async function read(lane: LaneRef, from: number, maxRecords?: number): Promise<ReadResult> {
  return readStream({ ...lane, from, ...(maxRecords === undefined ? {} : { maxRecords }) }, stores.ports);
}

/** Reads [from, end) page by page and returns every record. */
async function readAll(lane: LaneRef, from = 0, maxRecords = 10_000): Promise<ReadResult['records']> {
  const records: ReadResult['records'] = [];
  for (let next = from; ;) {
    const page = await read(lane, next, maxRecords);
    records.push(...page.records);
    if (page.next >= page.committedEnd) return records;
    expect(page.next, 'a page that returns nothing below the end would loop').toBeGreaterThan(next);
    next = page.next;
  }
}

const withOffsets = (expected: string[], from = 0) =>
  expected.slice(from).map((data, i) => ({ offset: from + i, data }));

async function indexEntry(lane: LaneRef, end: number): Promise<(IndexEntry & { version: number }) | undefined> {
  return (await stores.ports.authority.get(laneKeys.index(lane, end))) as
    (IndexEntry & { version: number }) | undefined;
}

async function deleteItem(key: ItemKey): Promise<void> {
  const item = await stores.ports.authority.get(key);
  expect(item, `${key.sk} exists before the test deletes it`).toBeDefined();
  const outcome = await stores.ports.authority.delete('test.authority.delete', key, { version: item!.version });
  expect(outcome.status).toBe('APPLIED');
}

/** Corrupts an object: other bytes under its key and metadata. */
async function corrupt(key: string): Promise<void> {
  const replaced = await overwrite(stores, key);
  expect(sha256Hex((await stores.ports.objects.get(key))!.bytes)).not.toBe(sha256Hex(replaced));
}

async function quarantineItem(lane: LaneRef, objectKey: string) {
  return stores.ports.authority.get(laneKeys.quarantine(lane, objectKey));
}

describe('reading committed ranges', () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await laneWith('plain', SIZES);
  });

  it('returns every committed record with its offset and exact bytes, across all ranges', async () => {
    const result = await read(f.lane, 0, 10_000);
    expect(f.ranges.map((r) => [r.start, r.end])).toEqual([
      [0, 3],
      [3, 4],
      [4, 8],
      [8, 10],
      [10, 15],
    ]);
    expect(result).toMatchObject({
      ...f.lane,
      from: 0,
      next: 15,
      committedEnd: 15,
      trimOffset: 0,
      repairs: [],
      quarantined: [],
    });
    expect(result.records).toEqual(withOffsets(f.expected));
    expect(result.records[3]!.data).toBe(''); // the empty record is a record, not a gap
  });

  it('reads from the middle of a range, and maxRecords pages cut across range boundaries', async () => {
    const middle = await read(f.lane, 5, 4);
    expect(middle.records).toEqual(withOffsets(f.expected, 5).slice(0, 4)); // 5..7 from [4,8), 8 from [8,10)
    expect(middle.next).toBe(9);

    for (const pageSize of [1, 2, 3, 7]) {
      expect(await readAll(f.lane, 0, pageSize), `pages of ${pageSize}`).toEqual(withOffsets(f.expected));
    }
    const last = await read(f.lane, 14, 5);
    expect(last).toMatchObject({ next: 15, records: withOffsets(f.expected, 14) });
  });

  it('defaults to 100 records per read', async () => {
    const big = await laneWith('default', [60, 60]);
    const first = await read(big.lane, 0);
    expect(first.records).toHaveLength(100);
    expect(first.next).toBe(100);
    expect((await read(big.lane, 100)).records).toEqual(withOffsets(big.expected, 100));
  });

  it('the committed end is the end, not an error: no records and next = from; past it is refused, never a position beyond the end', async () => {
    expect(await read(f.lane, 15)).toMatchObject({ next: 15, committedEnd: 15, records: [] });
    await expect(read(f.lane, 16)).rejects.toMatchObject({
      name: 'Stream.OffsetOutOfRange',
      code: 'stream.offset_out_of_range',
    });
    await expect(read(f.lane, 99)).rejects.toMatchObject({ code: 'stream.offset_out_of_range' });
  });

  it('refuses bad input and unknown lanes before reading anything', async () => {
    for (const maxRecords of [0, 10_001, 1.5, '5']) {
      await expect(readStream({ ...f.lane, from: 0, maxRecords }, stores.ports)).rejects.toMatchObject({
        code: 'stream.invalid_max_records',
      });
    }
    await expect(readStream({ ...f.lane, from: -1 }, stores.ports)).rejects.toMatchObject({
      code: 'stream.invalid_offset',
    });
    await expect(readStream({ ...f.lane }, stores.ports)).rejects.toMatchObject({ code: 'stream.invalid_offset' });
    await expect(readStream({ stream: 'Bad Name', partition: 0, from: 0 }, stores.ports)).rejects.toMatchObject({
      code: 'stream.invalid_stream',
    });
    await expect(readStream({ stream: 'no-such-stream', partition: 0, from: 0 }, stores.ports)).rejects.toMatchObject({
      name: 'Stream.LaneMissing',
    });
  });
});

describe('index repair from commit records', () => {
  it('deleted index entries (first, middle and last) are repaired, with their generation-0 link, never read as EOF', async () => {
    const f = await laneWith('repair', SIZES);
    const before = await Promise.all(f.ranges.map((r) => indexEntry(f.lane, r.end)));
    expect(before.every((e) => e?.gen0Key && e.gen0Sha256)).toBe(true);
    // [0,3) first, [3,4) and [4,8) adjacent (one gap of two ranges), [10,15) last.
    for (const r of [f.ranges[0]!, f.ranges[1]!, f.ranges[2]!, f.ranges[4]!])
      await deleteItem(laneKeys.index(f.lane, r.end));

    const result = await read(f.lane, 0, 10_000);
    expect(result.records).toEqual(withOffsets(f.expected));
    expect(result.next).toBe(15);
    expect(result.repairs).toEqual([
      { kind: 'index', start: 0, end: 3 },
      { kind: 'index', start: 3, end: 4 },
      { kind: 'index', start: 4, end: 8 },
      { kind: 'index', start: 10, end: 15 },
    ]);
    const after = await Promise.all(f.ranges.map((r) => indexEntry(f.lane, r.end)));
    for (const [i, entry] of after.entries()) {
      const { start, end, walKey, walSha256, gen0Key, gen0Sha256 } = before[i]!;
      expect(entry, `index entry of range ${i}`).toMatchObject({ start, end, walKey, walSha256, gen0Key, gen0Sha256 });
    }

    // Repaired once: the next read walks the index without repairs.
    expect((await read(f.lane, 0, 10_000)).repairs).toEqual([]);
  });

  it('a missing entry read from the middle of its range is repaired too', async () => {
    const f = await laneWith('repair-mid', [4, 4]);
    await deleteItem(laneKeys.index(f.lane, 8));
    const result = await read(f.lane, 6, 10);
    expect(result).toMatchObject({
      records: withOffsets(f.expected, 6),
      repairs: [{ kind: 'index', start: 4, end: 8 }],
      next: 8,
    });
  });

  it('an offset below the committed end with no commit record is Stream.ChainBroken, never EOF or a skip', async () => {
    const f = await laneWith('broken', [2, 2, 2]);
    await deleteItem(laneKeys.index(f.lane, 4));
    await deleteItem(laneKeys.commit(f.lane, 4));
    await expect(read(f.lane, 0, 100)).rejects.toMatchObject({
      name: 'Stream.ChainBroken',
      code: 'stream.chain_broken',
    });
    await expect(read(f.lane, 3, 100)).rejects.toMatchObject({ name: 'Stream.ChainBroken' });
    // The ranges around it stay readable when asked for explicitly.
    expect((await read(f.lane, 0, 2)).records).toEqual(withOffsets(f.expected).slice(0, 2));
    expect((await read(f.lane, 4, 100)).records).toEqual(withOffsets(f.expected, 4));
  });
});

describe('verified reads: quarantine by exact identity, same-view fallback', () => {
  it('a corrupted generation 0 is quarantined and the WAL object serves the read; later reads do not try it again', async () => {
    const f = await laneWith('bad-gen0', SIZES);
    const entry = (await indexEntry(f.lane, f.ranges[2]!.end))!;
    await corrupt(entry.gen0Key!);

    const result = await read(f.lane, 0, 10_000);
    expect(result.records).toEqual(withOffsets(f.expected));
    expect(result.quarantined).toEqual([{ key: entry.gen0Key, reason: 'checksum_mismatch' }]);
    expect(await quarantineItem(f.lane, entry.gen0Key!)).toMatchObject({
      objectKey: entry.gen0Key,
      expectedSha256: entry.gen0Sha256,
      reason: 'checksum_mismatch',
      start: 4,
      end: 8,
    });

    // The quarantined copy is skipped before any GET: one GET per range read.
    const gets = stores.meter.snapshot()['s3.GetObject'] ?? 0;
    const again = await read(f.lane, 4, 4);
    expect(again.records).toEqual(withOffsets(f.expected, 4).slice(0, 4));
    expect(again.quarantined).toEqual([{ key: entry.gen0Key, reason: 'checksum_mismatch' }]);
    expect((stores.meter.snapshot()['s3.GetObject'] ?? 0) - gets).toBe(1);
  });

  it('a missing generation 0 is quarantined as missing and the WAL object serves', async () => {
    const f = await laneWith('gone-gen0', [2, 3]);
    const entry = (await indexEntry(f.lane, 5))!;
    expect((await stores.ports.objects.delete('test.object.delete', entry.gen0Key!)).status).toBe('APPLIED');
    const result = await read(f.lane, 0, 100);
    expect(result.records).toEqual(withOffsets(f.expected));
    expect(result.quarantined).toEqual([{ key: entry.gen0Key, reason: 'missing' }]);
  });

  it('a corrupted WAL object behind a healthy generation 0 is not read at all', async () => {
    const f = await laneWith('bad-wal-hidden', [2, 3]);
    const entry = (await indexEntry(f.lane, 5))!;
    await corrupt(entry.walKey);
    const result = await read(f.lane, 0, 100);
    expect(result).toMatchObject({ records: withOffsets(f.expected), quarantined: [] });
    expect(await quarantineItem(f.lane, entry.walKey)).toBeUndefined();
  });

  it('a corrupted WAL object is quarantined and its materialized generation 0 serves the read, found from commit evidence', async () => {
    const f = await laneWith('bad-wal', [2, 3, 2]);
    const key = laneKeys.index(f.lane, 5);
    const entry = (await indexEntry(f.lane, 5))!;
    // The generation committed but its link step failed (materialize-gen0's linkGeneration
    // leaves the entry without its second copy): the entry names only the WAL object.
    const unlinked = await stores.ports.authority.update(
      'test.index.unlink',
      key,
      { version: entry.version },
      { gen0Key: undefined, gen0Sha256: undefined },
    );
    expect(unlinked.status).toBe('APPLIED');
    await corrupt(entry.walKey);

    const result = await read(f.lane, 0, 100);
    expect(result.records).toEqual(withOffsets(f.expected));
    expect(result.quarantined).toEqual([{ key: entry.walKey, reason: 'checksum_mismatch' }]);
    expect(await quarantineItem(f.lane, entry.walKey)).toMatchObject({
      objectKey: entry.walKey,
      expectedSha256: entry.walSha256,
      copy: 'wal',
    });
    // And again, with the WAL object skipped by its quarantine.
    expect((await read(f.lane, 2, 100)).records).toEqual(withOffsets(f.expected, 2));
  });

  it('a deleted index entry and a corrupted WAL object: the repaired entry names generation 0, which serves', async () => {
    const f = await laneWith('bad-wal-repair', [2, 3]);
    const entry = (await indexEntry(f.lane, 5))!;
    await deleteItem(laneKeys.index(f.lane, 5));
    await corrupt(entry.walKey);
    const result = await read(f.lane, 0, 100);
    expect(result).toMatchObject({
      records: withOffsets(f.expected),
      repairs: [{ kind: 'index', start: 2, end: 5 }],
      quarantined: [],
    });
  });

  it('both copies bad: Stream.RangeUnreadable, and no record past the bad range is ever returned', async () => {
    const f = await laneWith('both-bad', SIZES);
    const bad = f.ranges[2]!; // [4,8)
    const entry = (await indexEntry(f.lane, bad.end))!;
    await corrupt(entry.gen0Key!);
    expect((await stores.ports.objects.delete('test.object.delete', entry.walKey)).status).toBe('APPLIED');

    // Records before the bad range stand; `next` stops at its start.
    const head = await read(f.lane, 0, 10_000);
    expect(head.records).toEqual(withOffsets(f.expected).slice(0, 4));
    expect(head.next).toBe(4);
    expect(head.quarantined).toEqual([
      { key: entry.gen0Key, reason: 'checksum_mismatch' },
      { key: entry.walKey, reason: 'missing' },
    ]);

    // Reading on from there is the error, every time: never a skip to offset 8.
    for (const from of [4, 6]) {
      await expect(read(f.lane, from, 10_000)).rejects.toMatchObject({
        name: 'Stream.RangeUnreadable',
        code: 'stream.range_unreadable',
      });
    }
    const pages: ReadResult['records'] = [];
    let next = 0;
    await expect(
      (async () => {
        for (;;) {
          const page = await read(f.lane, next, 3);
          pages.push(...page.records);
          next = page.next;
        }
      })(),
    ).rejects.toMatchObject({ name: 'Stream.RangeUnreadable' });
    expect(pages.map((r) => r.offset)).toEqual([0, 1, 2, 3]);
    // Only a caller that asks for an offset past the range gets what follows it.
    expect((await read(f.lane, 8, 10_000)).records).toEqual(withOffsets(f.expected, 8));
  });
});

/** Crashes and definite failures fail the read; lost responses, lost requests and delays are resolved inside it. */
function expectFirstRead(kind: string, first: unknown, expected: string[]): void {
  if (['crash-before', 'crash-after', 'fail'].includes(kind)) {
    expect(first).toMatchObject({ name: kind === 'fail' ? 'Cutpoint.EffectFailed' : 'Cutpoint.WorkerCrashed' });
  } else {
    expect((first as ReadResult).records).toEqual(withOffsets(expected));
  }
}

describe('faults at the read cut points: a read after the fault clears returns exactly the committed data', () => {
  it.each(FAULT_KINDS.map((k) => [k]))('stream.read.index-repair: %s', async (kind) => {
    const f = await laneWith(`fr-${kind}`, [2, 3, 1]);
    await deleteItem(laneKeys.index(f.lane, 5));
    const armed = stores.faults.arm(`stream.read.index-repair:${kind}`);
    const first = await read(f.lane, 0, 100).catch((error: unknown) => error);
    stores.faults.disarm();
    expect(armed.hitCounts()['stream.read.index-repair']).toBeGreaterThanOrEqual(1);
    expectFirstRead(kind, first, f.expected);

    const after = await read(f.lane, 0, 100);
    expect(after.records).toEqual(withOffsets(f.expected));
    expect(await indexEntry(f.lane, 5)).toMatchObject({ start: 2, end: 5 });
    expect((await read(f.lane, 0, 100)).repairs).toEqual([]);
  });

  it.each(FAULT_KINDS.map((k) => [k]))('stream.read.quarantine: %s', async (kind) => {
    const f = await laneWith(`fq-${kind}`, [2, 3, 1]);
    const entry = (await indexEntry(f.lane, 5))!;
    await corrupt(entry.gen0Key!);
    const armed = stores.faults.arm(`stream.read.quarantine:${kind}`);
    const first = await read(f.lane, 0, 100).catch((error: unknown) => error);
    stores.faults.disarm();
    expect(armed.hitCounts()['stream.read.quarantine']).toBeGreaterThanOrEqual(1);
    expectFirstRead(kind, first, f.expected);

    const after = await read(f.lane, 0, 100);
    expect(after.records).toEqual(withOffsets(f.expected));
    expect(after.quarantined).toEqual([{ key: entry.gen0Key, reason: 'checksum_mismatch' }]);
    expect(await quarantineItem(f.lane, entry.gen0Key!)).toMatchObject({
      objectKey: entry.gen0Key,
      expectedSha256: entry.gen0Sha256,
    });
  });
});

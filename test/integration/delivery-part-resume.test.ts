import { beforeAll, describe, expect, it } from 'vitest';
import { encodeChunk } from '../../src/delivery/chunk-codec.js';
import { deliveryKeys } from '../../src/delivery/journal/keys.js';
import { resumePositionOf } from '../../src/delivery/parts/resume.js';
import { sha256Hex } from '../../src/domain/digest.js';
import { chunkObjectKeyOf } from '../../src/domain/delivery/identifiers.js';
import {
  batchDigestOf,
  RECEIPTS_PER_BATCH,
  type ChunkReceiptFact,
  type PartHead,
} from '../../src/domain/delivery/part-receipts.js';
import { chunkSeqOf } from '../../src/domain/delivery/parts.js';
import { encodeObject } from '../../src/objects/object-encoding.js';
import type { TargetRow } from '../../src/domain/delivery/target-types.js';
import { newInvocationId } from '../support/delivery-world.js';
import { freshStores, type TestStores } from '../support/emulators.js';

/**
 * Where a part resumes when its last chunk is one tie group (src/delivery/parts/resume.ts):
 * the part's earlier chunks are read back through its journaled receipts, against real
 * DynamoDB Local and S3 items. A duplicate of the part's invocation (its Task retried while
 * the first Lambda still ran) may have journaled more batches after this head was read.
 */
let stores: TestStores;
beforeAll(async () => {
  stores = await freshStores();
});

const columns = ['t', 'k', 'v'];
const order = { timeColumn: 't', keyColumns: ['k'] };
const ROWS_PER_CHUNK = 3;

/**
 * `chunks` chunk objects of part 0, every row tied on one order key, and their receipt
 * batches (16 a batch). Chunk `i` is stored as `format(i)` says: gzip under `.jsonl.gz`
 * as the part step writes it, or `plain` JSONL under `.jsonl` as it did before compression.
 */
async function tiedPart(
  chunks: number,
  format: (i: number) => 'gzip' | 'plain' = () => 'gzip',
): Promise<{ invocationId: string; receipts: ChunkReceiptFact[] }> {
  const invocationId = newInvocationId();
  const receipts: ChunkReceiptFact[] = [];
  for (let i = 0; i < chunks; i++) {
    const rows: TargetRow[] = Array.from({ length: ROWS_PER_CHUNK }, (_, r) => ({
      t: '2026-11-02T00:00:00.000Z',
      k: 7,
      v: `${i}.${r}`,
    }));
    const bytes = encodeChunk(rows, columns);
    const seq = chunkSeqOf(0, i);
    const sha256 = sha256Hex(bytes);
    const gzip = format(i) === 'gzip';
    const key = gzip
      ? chunkObjectKeyOf('daily', invocationId, seq)
      : chunkObjectKeyOf('daily', invocationId, seq).replace(/\.gz$/, '');
    const stored = gzip ? await encodeObject(bytes, 'gzip') : bytes;
    const metadata: Record<string, string> = gzip ? { sha256, encoding: 'gzip' } : { sha256 };
    expect((await stores.ports.objects.put('test.chunk.put', key, stored, metadata)).status).toBe('APPLIED');
    receipts.push({ seq, rows: ROWS_PER_CHUNK, bytes: bytes.byteLength, sha256, key });
  }
  for (let b = 0; b * RECEIPTS_PER_BATCH < chunks; b++) {
    const batch = {
      part: 0,
      batch: b,
      eof: (b + 1) * RECEIPTS_PER_BATCH >= chunks,
      receipts: receipts.slice(b * RECEIPTS_PER_BATCH, (b + 1) * RECEIPTS_PER_BATCH),
    };
    const item = {
      ...deliveryKeys.batch(invocationId, 0, b),
      invocationId,
      ...batch,
      digest: batchDigestOf(batch),
      at: '2026-11-02T00:00:00.000Z',
    };
    expect((await stores.ports.authority.put('test.batch.put', item, 'absent')).status).toBe('APPLIED');
  }
  return { invocationId, receipts };
}

const headAt = (invocationId: string, receipts: ChunkReceiptFact[], chunks: number) => {
  const last = receipts[chunks - 1]!;
  return {
    invocationId,
    part: 0,
    chunks,
    eof: false,
    last: { seq: last.seq, key: last.key, sha256: last.sha256 },
  } as PartHead & { last: NonNullable<PartHead['last']> };
};

describe('a part resuming inside a tie group', () => {
  it("reads back exactly the head's own chunks, also when a duplicate journaled another batch after the head was read", async () => {
    const { invocationId, receipts } = await tiedPart(RECEIPTS_PER_BATCH + 4);
    // The head as the retry read it: the first batch's 16 chunks. The listing finds 20.
    const position = await resumePositionOf(stores.ports, headAt(invocationId, receipts, RECEIPTS_PER_BATCH), order);
    expect(position).toEqual({
      lastKey: ['2026-11-02T00:00:00.000Z', 7],
      rowsAtLastKey: RECEIPTS_PER_BATCH * ROWS_PER_CHUNK,
      nextSeq: chunkSeqOf(0, RECEIPTS_PER_BATCH),
    });
  });

  it('chunks written before compression (plain `.jsonl`) resume, alone or beside gzip chunks of the same part', async () => {
    const expected = {
      lastKey: ['2026-11-02T00:00:00.000Z', 7],
      rowsAtLastKey: RECEIPTS_PER_BATCH * ROWS_PER_CHUNK,
      nextSeq: chunkSeqOf(0, RECEIPTS_PER_BATCH),
    };
    const old = await tiedPart(RECEIPTS_PER_BATCH, () => 'plain');
    expect(old.receipts.every((r) => r.key.endsWith('.jsonl'))).toBe(true);
    expect(
      await resumePositionOf(stores.ports, headAt(old.invocationId, old.receipts, RECEIPTS_PER_BATCH), order),
    ).toEqual(expected);
    // A part retried across the change: its first chunks plain, the later ones gzip.
    const mixed = await tiedPart(RECEIPTS_PER_BATCH, (i) => (i < 5 ? 'plain' : 'gzip'));
    expect(
      await resumePositionOf(stores.ports, headAt(mixed.invocationId, mixed.receipts, RECEIPTS_PER_BATCH), order),
    ).toEqual(expected);
  });

  it('a chunk whose object is gone is Delivery.EvidenceExpired naming the invocation; one with other bytes stays a checksum mismatch', async () => {
    const { invocationId, receipts } = await tiedPart(4);
    const head = headAt(invocationId, receipts, 4);
    const gone = receipts[1]!;
    expect((await stores.ports.objects.delete('test.chunk.expire', gone.key)).status).toBe('APPLIED');
    await expect(resumePositionOf(stores.ports, head, order)).rejects.toMatchObject({
      name: 'Delivery.EvidenceExpired',
      code: 'delivery.chunk_expired',
      message: expect.stringContaining(`invocation ${invocationId}: chunk object ${gone.key}`),
    });
    // The same chunk back with other content under the same sha256 metadata: not expired, corrupt.
    const other = encodeChunk([{ t: '2026-11-02T00:00:00.000Z', k: 7, v: 'other' }], columns);
    const metadata = { sha256: gone.sha256, encoding: 'gzip' };
    await stores.ports.objects.put('test.chunk.put', gone.key, await encodeObject(other, 'gzip'), metadata);
    await expect(resumePositionOf(stores.ports, head, order)).rejects.toMatchObject({
      name: 'Cutpoint.ChecksumMismatch',
      code: 'objects.checksum_mismatch',
    });
  });

  it('a head its receipts do not bear out is an inconsistent journal', async () => {
    const { invocationId, receipts } = await tiedPart(RECEIPTS_PER_BATCH);
    const forged = headAt(invocationId, receipts, RECEIPTS_PER_BATCH);
    // More chunks than were ever journaled.
    await expect(
      resumePositionOf(stores.ports, { ...forged, chunks: RECEIPTS_PER_BATCH + 1 }, order),
    ).rejects.toMatchObject({ code: 'delivery.recovery_journal_inconsistent' });
    // A last chunk that is not the last of its own receipts.
    const other = receipts[RECEIPTS_PER_BATCH - 2]!;
    await expect(
      resumePositionOf(
        stores.ports,
        { ...forged, last: { seq: forged.last.seq, key: other.key, sha256: other.sha256 } },
        order,
      ),
    ).rejects.toMatchObject({ code: 'delivery.recovery_journal_inconsistent' });
  });
});

import { describe, expect, it } from 'vitest';
import {
  emptyPartHead,
  nextPartHead,
  partProblems,
  partsDigest,
  RECEIPTS_PER_BATCH,
  type ChunkReceiptFact,
  type ReceiptBatch,
} from '../../src/domain/delivery/part-receipts.js';
import {
  bucketsOf,
  chunkSeqOf,
  MAX_CHUNKS_PER_PART,
  partOfSeq,
  planParts,
  seqRangeOf,
  validatePlanParts,
} from '../../src/domain/delivery/parts.js';

const WINDOW = { start: '2026-11-01T00:00:00.000Z', end: '2026-11-02T00:00:00.000Z' };
const INV = 'inv-aaaaaaaaaaaaaaaaaaaaaaaaaa';
const hex = (n: number) => n.toString(16).padStart(64, '0');

describe('parts: the window split', () => {
  it('cuts the window into equal buckets that tile it exactly, the last ending at the window end', () => {
    const buckets = bucketsOf(WINDOW, 7);
    expect(buckets).toHaveLength(7);
    expect(buckets[0]?.start).toBe(WINDOW.start);
    expect(buckets.at(-1)?.end).toBe(WINDOW.end);
    for (let i = 1; i < buckets.length; i++) expect(buckets[i]?.start).toBe(buckets[i - 1]?.end);
    // A window shorter than the bucket count in ms gets one bucket per ms.
    expect(bucketsOf({ start: WINDOW.start, end: '2026-11-01T00:00:00.003Z' }, 1024)).toHaveLength(3);
  });

  it('merges contiguous buckets up to part_rows; a bucket over it stays one part; deterministic', () => {
    const buckets = bucketsOf(WINDOW, 6);
    const counts = buckets.map((b, i) => ({ ...b, rows: [3, 4, 0, 10, 2, 2][i] as number }));
    const parts = planParts(counts, 7);
    expect(parts.map((p) => p.plannedRows)).toEqual([7, 10, 4]);
    expect(parts.map((p) => p.part)).toEqual([0, 1, 2]);
    expect(parts[0]?.start).toBe(WINDOW.start);
    expect(parts.at(-1)?.end).toBe(WINDOW.end);
    expect(planParts(counts, 7)).toEqual(parts);
    expect(validatePlanParts(JSON.parse(JSON.stringify(parts)), WINDOW)).toEqual(parts);
  });

  it('an empty window is one part; a plan that does not tile the window is refused', () => {
    const counts = bucketsOf(WINDOW, 4).map((b) => ({ ...b, rows: 0 }));
    const parts = planParts(counts, 100);
    expect(parts).toHaveLength(1);
    expect(() =>
      validatePlanParts(
        parts.map((p) => ({ ...p, end: '2026-11-01T12:00:00.000Z' })),
        WINDOW,
      ),
    ).toThrow(expect.objectContaining({ code: 'delivery.part_plan_invalid' }));
    expect(() => validatePlanParts([], WINDOW)).toThrow(
      expect.objectContaining({ code: 'delivery.part_plan_invalid' }),
    );
    expect(() => validatePlanParts({ parts }, WINDOW)).toThrow(
      expect.objectContaining({ code: 'delivery.part_plan_invalid' }),
    );
    expect(() => planParts([counts[0]!, counts[2]!], 100)).toThrow(
      expect.objectContaining({ code: 'delivery.part_plan_invalid' }),
    );
  });

  it('chunk seqs are global, ordered like the rows and fit a 32-bit column', () => {
    expect(chunkSeqOf(0, 0)).toBe(0);
    expect(chunkSeqOf(3, 5)).toBe(3 * MAX_CHUNKS_PER_PART + 5);
    expect(partOfSeq(chunkSeqOf(3, 5))).toBe(3);
    expect(seqRangeOf(2)).toEqual({ from: 200_000, to: 300_000 });
    expect(chunkSeqOf(19_999, MAX_CHUNKS_PER_PART - 1)).toBeLessThan(2 ** 31);
    expect(() => chunkSeqOf(1, MAX_CHUNKS_PER_PART)).toThrow(
      expect.objectContaining({ code: 'delivery.part_too_large' }),
    );
  });
});

describe('part receipts', () => {
  const descriptor = { part: 2, start: WINDOW.start, end: WINDOW.end, plannedRows: 40 };
  const receipt = (i: number, rows = 2): ChunkReceiptFact => ({
    seq: chunkSeqOf(2, i),
    rows,
    bytes: 10 * rows,
    sha256: hex(i + 1),
    key: `k/${i}`,
  });
  const batches = (n: number): ReceiptBatch[] => {
    const out: ReceiptBatch[] = [];
    for (let k = 0; k * RECEIPTS_PER_BATCH < n || k === 0; k++) {
      const receipts = Array.from({ length: Math.min(RECEIPTS_PER_BATCH, n - k * RECEIPTS_PER_BATCH) }, (_, j) =>
        receipt(k * RECEIPTS_PER_BATCH + j),
      );
      out.push({ part: 2, batch: k, receipts, eof: (k + 1) * RECEIPTS_PER_BATCH >= n });
    }
    if (n % RECEIPTS_PER_BATCH === 0 && n > 0)
      out.push({ part: 2, batch: n / RECEIPTS_PER_BATCH, receipts: [], eof: true });
    return out.map((b, i, all) => ({ ...b, eof: i === all.length - 1 }));
  };
  const replay = (bs: ReceiptBatch[]) => bs.reduce((h, b) => nextPartHead(h, b), emptyPartHead(INV, descriptor));

  it('a head adds up its batches: totals, the last chunk, EOF; an empty EOF batch closes a full part', () => {
    const head = replay(batches(37));
    expect(head).toMatchObject({
      chunks: 37,
      rows: 74,
      bytes: 740,
      eof: true,
      last: { seq: chunkSeqOf(2, 36), key: 'k/36' },
    });
    const full = replay(batches(32));
    expect(full).toMatchObject({ chunks: 32, eof: true });
    const empty = replay([{ part: 2, batch: 0, receipts: [], eof: true }]);
    expect(empty).toMatchObject({ chunks: 0, rows: 0, eof: true });
    expect(empty.last).toBeUndefined();
  });

  it('refuses a batch out of order, a short batch before EOF, a seq gap, an empty chunk, a batch after EOF', () => {
    const [b0, b1] = batches(40);
    const start = emptyPartHead(INV, descriptor);
    const code = { code: 'delivery.part_receipts_invalid' };
    expect(() => nextPartHead(start, b1!)).toThrow(expect.objectContaining(code));
    expect(() => nextPartHead(start, { ...b0!, receipts: b0!.receipts.slice(1) })).toThrow(
      expect.objectContaining(code),
    );
    expect(() => nextPartHead(start, { ...b0!, receipts: b0!.receipts.slice(0, 15) })).toThrow(
      expect.objectContaining(code),
    );
    expect(() =>
      nextPartHead(start, { ...b0!, receipts: [{ ...receipt(0), rows: 0 }, ...b0!.receipts.slice(1)] }),
    ).toThrow(expect.objectContaining(code));
    const closed = replay(batches(3));
    expect(() => nextPartHead(closed, { part: 2, batch: 1, receipts: [], eof: true })).toThrow(
      expect.objectContaining(code),
    );
  });

  it('partProblems: exact receipts and stage → none; each kind of difference → a problem', () => {
    const bs = batches(20);
    const head = replay(bs);
    const observed = bs.flatMap((b) => b.receipts).map((r) => ({ seq: r.seq, rows: r.rows }));
    expect(partProblems(descriptor, head, bs, observed)).toEqual([]);
    expect(partProblems(descriptor, undefined, bs, observed)).toHaveLength(1);
    expect(partProblems(descriptor, { ...head, eof: false }, bs, observed)).toHaveLength(1);
    expect(partProblems({ ...descriptor, end: '2026-11-01T12:00:00.000Z' }, head, bs, observed)).toHaveLength(1);
    expect(partProblems(descriptor, { ...head, rows: head.rows + 1 }, bs, observed)).toHaveLength(1);
    expect(partProblems(descriptor, head, bs.slice(0, 1), observed)).toHaveLength(1);
    expect(partProblems(descriptor, head, bs, observed.slice(1))).toHaveLength(1);
    expect(partProblems(descriptor, head, bs, [...observed, { seq: chunkSeqOf(2, 20), rows: 1 }])).toHaveLength(1);
    // Rows of another part's range are not this part's business.
    expect(partProblems(descriptor, head, bs, [...observed, { seq: chunkSeqOf(3, 0), rows: 1 }])).toEqual([]);
  });

  it('the parts digest changes with any part head', () => {
    const a = replay(batches(5));
    expect(partsDigest([a])).toBe(partsDigest([{ ...a }]));
    expect(partsDigest([a])).not.toBe(partsDigest([{ ...a, rows: a.rows + 1 }]));
    expect(partsDigest([a])).not.toBe(partsDigest([replay(batches(6))]));
  });
});

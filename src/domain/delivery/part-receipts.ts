import { canonicalDigest, sha256Hex } from '../digest.js';
import { IdentityConflictError } from '../errors.js';
import { chunkSeqOf, seqRangeOf, type PartDescriptor } from './parts.js';

/**
 * A part's receipts (pure rules; the items are in src/delivery/parts/part-store.ts).
 *
 * Each chunk of a part is extracted, written as an immutable object and loaded into the
 * owned stage; its receipt (seq, rows, bytes, SHA-256 of the loaded bytes, object key) is
 * journaled in batches of RECEIPTS_PER_BATCH — batch k of part p holds the receipts of
 * chunks 16k..16k+15 — in one transaction with the part's head, which carries the running
 * totals, a chained digest over the batches, the last chunk, and EOF. No item grows with
 * the number of chunks; the invocation item holds only the summary verify-eof proves.
 */

export const RECEIPTS_PER_BATCH = 16;

export interface ChunkReceiptFact {
  seq: number;
  rows: number;
  bytes: number;
  /** Hex SHA-256 of the chunk object's bytes: what was loaded (the load receipt's digest). */
  sha256: string;
  key: string;
}

export interface PartHead extends PartDescriptor {
  invocationId: string;
  /** Chunks journaled so far, contiguous from `chunkSeqOf(part, 0)`. */
  chunks: number;
  rows: number;
  bytes: number;
  /** `chainDigest` over the part's batches, in order. */
  digest: string;
  /** True once the source stream of the part ended and its last batch is journaled. */
  eof: boolean;
  /** The last journaled chunk: where a retry resumes. */
  last?: { seq: number; key: string; sha256: string };
}

export interface ReceiptBatch {
  part: number;
  /** k: the batch holds chunks 16k..16k+15 of the part. */
  batch: number;
  receipts: ChunkReceiptFact[];
  eof: boolean;
}

export function batchDigestOf(batch: ReceiptBatch): string {
  return canonicalDigest({
    kind: 'cutpoint.delivery.receipt-batch',
    part: batch.part,
    batch: batch.batch,
    eof: batch.eof,
    receipts: batch.receipts,
  });
}

export function initialPartDigest(invocationId: string, part: number): string {
  return canonicalDigest({ kind: 'cutpoint.delivery.part', invocationId, part });
}

const chain = (previous: string, batchDigest: string): string => sha256Hex(`${previous}:${batchDigest}`);

/** A part's head before its first batch. */
export function emptyPartHead(invocationId: string, descriptor: PartDescriptor): PartHead {
  return {
    ...descriptor,
    invocationId,
    chunks: 0,
    rows: 0,
    bytes: 0,
    digest: initialPartDigest(invocationId, descriptor.part),
    eof: false,
  };
}

/**
 * The head after `batch`: the batch must be the part's next one (k = chunks / 16, the
 * receipts' seqs continuing the part's), full unless it is the EOF batch, and the head
 * must not be at EOF already. Anything else is a programming or evidence error, never
 * written.
 */
export function nextPartHead(head: PartHead, batch: ReceiptBatch): PartHead {
  const bad = (why: string) => new IdentityConflictError('delivery.part_receipts_invalid', `part ${head.part}: ${why}`);
  if (head.eof) throw bad('the part is already at EOF');
  if (
    batch.part !== head.part ||
    head.chunks % RECEIPTS_PER_BATCH !== 0 ||
    batch.batch !== head.chunks / RECEIPTS_PER_BATCH
  )
    throw bad(`batch ${batch.batch} is not the next batch`);
  if (batch.receipts.length > RECEIPTS_PER_BATCH || (!batch.eof && batch.receipts.length !== RECEIPTS_PER_BATCH))
    throw bad('a batch holds 16 receipts unless it is the last');
  batch.receipts.forEach((r, i) => {
    if (r.seq !== chunkSeqOf(head.part, head.chunks + i))
      throw bad(`receipt ${i} of batch ${batch.batch} has seq ${r.seq}`);
    if (!Number.isSafeInteger(r.rows) || r.rows < 1) throw bad(`chunk ${r.seq} has no rows`);
  });
  const last = batch.receipts.at(-1);
  return {
    ...head,
    chunks: head.chunks + batch.receipts.length,
    rows: head.rows + batch.receipts.reduce((n, r) => n + r.rows, 0),
    bytes: head.bytes + batch.receipts.reduce((n, r) => n + r.bytes, 0),
    digest: chain(head.digest, batchDigestOf(batch)),
    eof: batch.eof,
    ...(last ? { last: { seq: last.seq, key: last.key, sha256: last.sha256 } } : {}),
  };
}

/** What publication is held to: the parts' heads, in order. */
export function partsDigest(heads: readonly PartHead[]): string {
  return canonicalDigest({
    kind: 'cutpoint.delivery.parts',
    parts: heads.map((h) => ({ part: h.part, chunks: h.chunks, rows: h.rows, digest: h.digest })),
  });
}

/**
 * Why one part's receipts do not prove it (empty when they do): the head matches the
 * planned descriptor and is at EOF; replaying its batches in order gives the head exactly;
 * and the stage's observation of the part's seq range holds exactly the receipts' rows
 * per seq.
 */
export function partProblems(
  descriptor: PartDescriptor,
  head: PartHead | undefined,
  batches: readonly ReceiptBatch[],
  observed: ReadonlyArray<{ seq: number; rows: number }>,
): string[] {
  const p = descriptor.part;
  if (!head) return [`part ${p} has no journaled receipts`];
  if (head.start !== descriptor.start || head.end !== descriptor.end)
    return [`part ${p} was journaled for another time range than the plan's`];
  if (!head.eof) return [`part ${p} has not reached EOF`];
  let replay = emptyPartHead(head.invocationId, descriptor);
  try {
    for (const batch of [...batches].sort((a, b) => a.batch - b.batch)) replay = nextPartHead(replay, batch);
  } catch (error) {
    return [error instanceof Error ? error.message : String(error)];
  }
  if (!replay.eof || replay.digest !== head.digest || replay.chunks !== head.chunks || replay.rows !== head.rows) {
    return [`part ${p}: its receipt batches do not add up to its head`];
  }
  const range = seqRangeOf(p);
  const want = batches
    .flatMap((b) => b.receipts)
    .map((r) => `${r.seq}:${r.rows}`)
    .sort()
    .join(',');
  const got = observed
    .filter((o) => o.seq >= range.from && o.seq < range.to)
    .map((o) => `${o.seq}:${o.rows}`)
    .sort()
    .join(',');
  return want === got ? [] : [`part ${p}: the stage does not hold exactly the loaded rows per chunk`];
}

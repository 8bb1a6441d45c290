import { chunkObjectKeyOf } from '../../domain/delivery/identifiers.js';
import { RECEIPTS_PER_BATCH, type ChunkReceiptFact } from '../../domain/delivery/part-receipts.js';
import { chunkSeqOf, validatePartDescriptor } from '../../domain/delivery/parts.js';
import { canonicalJson } from '../../domain/digest.js';
import { IdentityConflictError, ValidationError } from '../../domain/errors.js';
import { putExact } from '../../objects/exact-object.js';
import { OBJECT_ENCODING_FIELD } from '../../objects/object-encoding.js';
import { SourceForbiddenError } from '../../domain/delivery/source-errors.js';
import { DELIVERY_CUT_POINTS } from '../cut-points.js';
import type { DeliveryDeps } from '../deps.js';
import { TransitionPreconditionError } from '../journal/errors.js';
import { loadForStep, parseStepInput, stagingRefOf } from '../steps/common.js';
import { readPlan } from '../steps/plan-parts.js';
import { claimPart, readHead, recordBatch } from './part-store.js';
import { encodedChunks, type EncodedChunk } from './encoded-chunks.js';
import type { InvocationRecord } from '../journal/records.js';
import type { StagingRef } from '../../domain/delivery/target-types.js';
import { resumePositionOf } from './resume.js';
import { rereadOnStale } from '../steps/carried.js';

/** A Map item's result: small, whatever the part's size (the ResultWriter keeps them in S3). */
export interface PartOutput {
  part: number;
  chunks: number;
  rows: number;
  /** False when the part was already at EOF (a re-run) and nothing was touched. */
  acted: boolean;
}

/**
 * The Distributed Map's item step: extract one part of the window and load it, chunk by
 * chunk, each chunk once (input `{ invocationId, fence, part }`, the part a descriptor
 * of the journaled plan).
 *
 * First the part is claimed (`claimPart`, part-store.ts): one transaction that creates its
 * head, or finds it — then the part goes on from there — checked against the carried
 * invocation version and the fence; nothing is read before it.
 *
 * Per chunk: encode it as canonical JSONL, write it as an immutable object
 * (`delivery.chunk.put`) while loading those same bytes into the owned stage
 * (`target.loadChunk`, one target transaction that replaces the seq's rows), and check
 * the load receipt (rows, SHA-256); two chunks are written and loaded at once, the next
 * one read and encoded meanwhile. Every 16 chunks, and at the part's end with EOF, the
 * receipts are journaled in seq order with the part's head in one fenced transaction
 * (`delivery.part.receipt`, part-store.ts). Memory is three chunks.
 *
 * A retry (a crash, a timeout, a lost response anywhere) resumes after the part's last
 * journaled chunk (resume.ts): chunks after it are extracted again, their objects found
 * identical (or `objects.identity_conflict` when the source changed) and their seqs
 * reloaded. A part at EOF does nothing. Acts only in WRITING_UNKNOWN; without a source
 * (recovery) it refuses with Delivery.SourceForbidden.
 */
async function extractLoadPartOnce(input: unknown, deps: DeliveryDeps): Promise<PartOutput> {
  const step = parseStepInput(input);
  const descriptor = validatePartDescriptor((input as { part?: unknown }).part);
  const { record: carried, custody: heldCustody } = await loadForStep(step, deps);
  const summary = (h: { chunks: number; rows: number } | undefined, acted: boolean): PartOutput => ({
    part: descriptor.part,
    chunks: h?.chunks ?? 0,
    rows: h?.rows ?? 0,
    acted,
  });
  if (carried.state !== 'WRITING_UNKNOWN' || !deps.source) {
    // Nothing to extract, or nothing to extract with: a part at EOF is done either way.
    const stored = await readHead(deps.ports, carried.invocationId, descriptor.part);
    if (stored?.eof) return summary(stored, false);
    if (!deps.source) throw new SourceForbiddenError('streamWindow');
    throw new TransitionPreconditionError(`invocation ${carried.invocationId} in ${carried.state} extracts no part`);
  }
  const planned = (await readPlan(deps, carried))[descriptor.part];
  if (!planned || canonicalJson(planned) !== canonicalJson(descriptor)) {
    throw new ValidationError('delivery.part_plan_invalid', `part ${descriptor.part} is not the journaled plan's part`);
  }
  const custody = await heldCustody();
  const claimed = await claimPart(deps.ports, { invocation: carried, descriptor, custody });
  let head = claimed.head;
  if (head.eof) return summary(head, false);
  const record = claimed.invocation;
  if (record.state !== 'WRITING_UNKNOWN')
    throw new TransitionPreconditionError(`invocation ${record.invocationId} in ${record.state} extracts no part`);
  const staging = stagingRefOf(record);
  const { source, chunkRows } = deps.route.route;
  const sourcePort = deps.source;
  const resumeAfter = head.last ? await resumePositionOf(deps.ports, { ...head, last: head.last }, source) : undefined;
  const chunks = sourcePort.streamWindow({
    from: source.from,
    timeColumn: source.timeColumn,
    keyColumns: source.keyColumns,
    window: { start: descriptor.start, end: descriptor.end },
    chunkRows,
    ...(descriptor.chunkText !== undefined ? { chunkText: descriptor.chunkText } : {}),
    ...(resumeAfter ? { resumeAfter } : { firstSeq: chunkSeqOf(descriptor.part, 0) }),
  });
  let pending: ChunkReceiptFact[] = [];
  const flush = async (eof: boolean): Promise<void> => {
    const batch = { part: descriptor.part, batch: head.chunks / RECEIPTS_PER_BATCH, receipts: pending, eof };
    head = await recordBatch(deps.ports, { invocationId: record.invocationId, head, batch, custody });
    pending = [];
  };
  // One chunk ahead, already encoded (encoded-chunks.ts), and up to LOADS_IN_FLIGHT chunks
  // written and loaded at once; their receipts are journaled in seq order.
  const inFlight: Array<Promise<ChunkReceiptFact>> = [];
  const settleOldest = async (): Promise<void> => {
    pending.push(await (inFlight.shift() as Promise<ChunkReceiptFact>));
    if (pending.length === RECEIPTS_PER_BATCH) await flush(false);
  };
  try {
    for await (const chunk of encodedChunks(chunks)) {
      chunkSeqOf(descriptor.part, chunk.seq - chunkSeqOf(descriptor.part, 0)); // throws delivery.part_too_large past 100,000 chunks
      const written = writeAndLoad(deps, record, staging, chunk);
      written.catch(() => undefined); // awaited in order below; an earlier failure is thrown first
      inFlight.push(written);
      if (inFlight.length === LOADS_IN_FLIGHT) await settleOldest();
    }
    while (inFlight.length > 0) await settleOldest();
  } catch (error) {
    // No load outlives the step: the retry that follows must not race one of ours.
    await Promise.allSettled(inFlight);
    throw error;
  }
  await flush(true);
  return summary(head, true);
}

/**
 * Chunks of one part written and loaded at once (each load is its own target transaction,
 * its own connection): while chunk n's COPY runs, chunk n+1's is already on the wire.
 * Nothing about a retry changes: every chunk after the last journaled one is re-extracted
 * and its seq re-loaded (a load replaces its seq), whichever of them had landed.
 */
const LOADS_IN_FLIGHT = 2;

/**
 * One chunk: its immutable object (`delivery.chunk.put`) and its load into the owned
 * stage, side by side (both idempotent, both needed before the receipt is journaled); the
 * load receipt must name the chunk's rows and SHA-256. The object stores the JSONL
 * gzipped; its sha256, like the receipt's, is the JSONL's (object-encoding.ts).
 */
async function writeAndLoad(
  deps: DeliveryDeps,
  record: InvocationRecord,
  staging: StagingRef,
  chunk: EncodedChunk,
): Promise<ChunkReceiptFact> {
  const { bytes, sha256, rows } = chunk;
  const key = chunkObjectKeyOf(record.route, record.invocationId, chunk.seq);
  const [, loaded] = await Promise.all([
    chunk.stored.then((stored) =>
      putExact(deps.ports.objects, DELIVERY_CUT_POINTS.chunkPut, key, stored, {
        sha256,
        [OBJECT_ENCODING_FIELD]: 'gzip',
        invocation: record.invocationId,
        seq: String(chunk.seq),
        rows: String(rows),
      }),
    ),
    deps.target.loadChunk({ staging, seq: chunk.seq, columns: chunk.columns, jsonl: bytes, sha256, rows }),
  ]);
  if (loaded.seq !== chunk.seq || loaded.rows !== rows || loaded.digest !== sha256) {
    throw new IdentityConflictError(
      'delivery.load_receipt_mismatch',
      `chunk ${chunk.seq}: the target's load receipt does not match the chunk`,
    );
  }
  return { seq: chunk.seq, rows, bytes: bytes.byteLength, sha256, key };
}

/** The step, deciding again from the journal when it refused or did nothing on a carried state (steps/carried.ts). */
export const extractLoadPart = rereadOnStale(extractLoadPartOnce);

import { chunkObjectKeyOf } from '../../domain/delivery/identifiers.js';
import { canonicalJson } from '../../domain/digest.js';
import { IdentityConflictError } from '../../domain/errors.js';
import { putExact } from '../../objects/exact-object.js';
import { SourceForbiddenError } from '../../ports/source.js';
import { encodeSourceChunk } from '../chunk-codec.js';
import { assertCustody } from '../custody.js';
import { DELIVERY_CUT_POINTS } from '../cut-points.js';
import type { DeliveryDeps } from '../deps.js';
import { type ChunkFact } from '../journal/facts.js';
import { type InvocationRecord } from '../journal/records.js';
import { recordFacts, transition } from '../journal/transition.js';
import {
  batchOf,
  EXTRACT_EOF_STEP,
  journaled,
  loadForStep,
  output,
  parseStepInput,
  stagingRefOf,
  transitionIdOf,
  type StepOutput,
} from './common.js';

export interface ExtractOutput extends StepOutput {
  /** Chunks in the window (all of them, including ones journaled by an earlier run). */
  chunks: number;
  rows: number;
}

/**
 * Step 3: extract the sealed window from the source, each chunk an immutable S3 object
 * generation (`chunkObjectKeyOf`, `putExact` at `delivery.chunk.put`) with a receipt
 * (seq, rows, bytes, SHA-256, row digest, key). Receipts are journaled in fixed batches
 * of RECEIPT_BATCH seqs — batch k is `extract.b<k>.<invocation>` — at
 * `delivery.chunk.receipt`, so a window costs a handful of journal writes, never one per
 * chunk. The last batch is journaled under `extract-eof.<invocation>`: that claim exists
 * only once the source stream ended, and it is what verify-eof calls EOF.
 *
 * States: EMPTY_STAGING (stage recorded) → WRITING_UNKNOWN ("writer started") before the
 * first source row is read; receipts are recorded in WRITING_UNKNOWN. A re-run in
 * WRITING_UNKNOWN without EOF streams the same window again (the source order is
 * deterministic): chunks already journaled are compared by SHA-256 and not written again;
 * a difference is `delivery.source_changed` (nothing overwritten). With EOF journaled, or
 * in any later state, the step does nothing. Without a source (recovery) the step refuses
 * with Delivery.SourceForbidden rather than guess.
 */
export async function extractChunks(input: unknown, deps: DeliveryDeps): Promise<ExtractOutput> {
  const step = parseStepInput(input);
  const loaded = await loadForStep(step, deps);
  let record: InvocationRecord = loaded.record;
  const { ref } = loaded;
  const eofId = transitionIdOf(EXTRACT_EOF_STEP, record.invocationId);
  const summary = (r: InvocationRecord, acted: boolean): ExtractOutput => ({
    ...output(step, r, acted),
    chunks: r.facts.chunks.length,
    rows: r.facts.chunks.reduce((n, c) => n + c.rows, 0),
  });
  if (record.state !== 'EMPTY_STAGING' && record.state !== 'WRITING_UNKNOWN') return summary(record, false);
  if (record.state === 'WRITING_UNKNOWN' && (await journaled(deps, record.invocationId, eofId))) return summary(record, false);
  if (!deps.source) throw new SourceForbiddenError('streamWindow');
  stagingRefOf(record); // the owned stage must be journaled before the writer starts
  await assertCustody(deps.ports, ref.targetId, step.fence);
  if (record.state === 'EMPTY_STAGING') {
    const started = await transition(deps.ports, ref, {
      from: 'EMPTY_STAGING',
      to: 'WRITING_UNKNOWN',
      fence: step.fence,
      transitionId: transitionIdOf('extract-start', record.invocationId),
    });
    record = started.invocation;
  }

  const recorded = new Map(record.facts.chunks.map((c) => [c.seq, c]));
  const { source } = deps.route.route;
  let pending: ChunkFact[] = [];
  let pendingBatch = 0;
  const flush = async (transitionId: string, eof: boolean): Promise<void> => {
    if (!eof && pending.every((c) => recorded.has(c.seq))) return;
    const result = await recordFacts(deps.ports, ref, {
      state: 'WRITING_UNKNOWN',
      fence: step.fence,
      transitionId,
      patch: { chunks: pending },
      cutPoint: DELIVERY_CUT_POINTS.chunkReceipt,
    });
    record = result.invocation;
  };

  const stream = deps.source.streamWindow({
    from: source.from,
    timeColumn: source.timeColumn,
    keyColumns: source.keyColumns,
    window: record.sealed.window,
    chunkRows: deps.route.route.chunkRows,
  });
  for await (const chunk of stream) {
    const batch = batchOf(chunk.seq);
    if (batch !== pendingBatch && pending.length > 0) {
      await flush(transitionIdOf('extract', record.invocationId, `b${pendingBatch}`), false);
      pending = [];
    }
    pendingBatch = batch;
    const { bytes, receipt } = encodeSourceChunk(chunk);
    const key = chunkObjectKeyOf(record.route, record.invocationId, chunk.seq);
    const fact: ChunkFact = { seq: receipt.seq, rows: receipt.rows, bytes: receipt.bytes, sha256: receipt.sha256, key, digest: receipt.digest };
    const prior = recorded.get(chunk.seq);
    if (prior) {
      if (canonicalJson(prior) !== canonicalJson(fact)) {
        throw new IdentityConflictError('delivery.source_changed', `chunk ${chunk.seq} of the sealed window no longer matches its journaled receipt`);
      }
    } else {
      await putExact(deps.ports.objects, DELIVERY_CUT_POINTS.chunkPut, key, bytes, {
        sha256: receipt.sha256,
        invocation: record.invocationId,
        seq: String(receipt.seq),
        rows: String(receipt.rows),
        digest: receipt.digest,
      });
    }
    pending.push(fact);
  }
  await flush(eofId, true);
  return summary(record, true);
}

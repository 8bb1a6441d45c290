import { readVerified } from '../../objects/exact-object.js';
import { decodeChunk } from '../chunk-codec.js';
import { assertCustody } from '../custody.js';
import { DELIVERY_CUT_POINTS } from '../cut-points.js';
import type { DeliveryDeps } from '../deps.js';
import { TransitionPreconditionError } from '../journal/errors.js';
import { type LoadFact } from '../journal/facts.js';
import { type InvocationRecord } from '../journal/records.js';
import { recordFacts } from '../journal/transition.js';
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

export interface LoadOutput extends StepOutput {
  loads: number;
  rows: number;
}

/**
 * Step 4: load every extracted chunk into the owned stage, from S3 — never from the
 * source, so recovery can run it: each chunk object is read and verified against its
 * journaled SHA-256 (`readVerified`), decoded, and loaded with `target.loadChunk` (one
 * target transaction per chunk, which replaces that seq's rows, so a repeated load is
 * harmless). Load receipts are journaled in the same fixed batches as the chunk receipts
 * (`load.b<k>.<invocation>`, at `delivery.load.receipt`); a batch already journaled is
 * skipped whole. Acts only in WRITING_UNKNOWN and only after extraction EOF is journaled.
 */
export async function loadChunks(input: unknown, deps: DeliveryDeps): Promise<LoadOutput> {
  const step = parseStepInput(input);
  const loaded = await loadForStep(step, deps);
  let record: InvocationRecord = loaded.record;
  const { ref } = loaded;
  const summary = (r: InvocationRecord, acted: boolean): LoadOutput => ({
    ...output(step, r, acted),
    loads: r.facts.loads.length,
    rows: r.facts.loads.reduce((n, l) => n + l.rows, 0),
  });
  if (record.state !== 'WRITING_UNKNOWN') return summary(record, false);
  if (!(await journaled(deps, record.invocationId, transitionIdOf(EXTRACT_EOF_STEP, record.invocationId)))) {
    throw new TransitionPreconditionError(`invocation ${record.invocationId}: extraction has not reached EOF; nothing to load yet`);
  }
  const loadedSeqs = new Set(record.facts.loads.map((l) => l.seq));
  const batches = new Map<number, typeof record.facts.chunks>();
  for (const chunk of record.facts.chunks) {
    if (loadedSeqs.has(chunk.seq)) continue;
    const k = batchOf(chunk.seq);
    batches.set(k, [...(batches.get(k) ?? []), chunk]);
  }
  if (batches.size === 0) return summary(record, false);
  const staging = stagingRefOf(record);
  await assertCustody(deps.ports, ref.targetId, step.fence);
  for (const [k, chunks] of [...batches].sort((a, b) => a[0] - b[0])) {
    const loads: LoadFact[] = [];
    for (const chunk of chunks) {
      const stored = await readVerified(deps.ports.objects, chunk.key, chunk.sha256);
      const rows = decodeChunk(stored.bytes);
      const columns = Object.keys(rows[0] ?? {});
      const receipt = await deps.target.loadChunk({ staging, seq: chunk.seq, columns, rows });
      loads.push({ seq: receipt.seq, rows: receipt.rows, digest: receipt.digest });
    }
    const result = await recordFacts(deps.ports, ref, {
      state: 'WRITING_UNKNOWN',
      fence: step.fence,
      transitionId: transitionIdOf('load', record.invocationId, `b${k}`),
      patch: { loads },
      cutPoint: DELIVERY_CUT_POINTS.loadReceipt,
    });
    record = result.invocation;
  }
  return summary(record, true);
}

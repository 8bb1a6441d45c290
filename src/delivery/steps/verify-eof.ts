import { canonicalJson } from '../../domain/digest.js';
import type { JournalState } from '../../domain/delivery/journal-states.js';
import { assertCustody } from '../custody.js';
import type { DeliveryDeps } from '../deps.js';
import { TransitionPreconditionError } from '../journal/errors.js';
import { journalOf } from '../journal/keys.js';
import { type InvocationRecord } from '../journal/records.js';
import { transition } from '../journal/transition.js';
import { adoptReceipt } from './publish.js';
import { EXTRACT_EOF_STEP, loadForStep, output, parseStepInput, stagingRefOf, transitionIdOf, type StepOutput } from './common.js';

export interface VerifyOutput extends StepOutput {
  /** Why the receipts do not prove EOF (empty when they do). */
  problems: string[];
}

/**
 * The pure check: chunk receipts contiguous from seq 0 up to the last seq the EOF record
 * named, one load receipt per chunk with equal rows and digest, and the stage holding
 * exactly those rows per seq (a bounded observation of the exact owned stage).
 */
export function eofProblems(record: InvocationRecord, eofSeqs: number[], observed: ReadonlyArray<{ seq: number; rows: number }>): string[] {
  const problems: string[] = [];
  const { chunks, loads } = record.facts;
  const expectedCount = eofSeqs.length === 0 ? (chunks.length === 0 ? 0 : -1) : Math.max(...eofSeqs) + 1;
  if (expectedCount < 0) problems.push('the EOF record names no chunk but chunks are journaled');
  if (chunks.length !== expectedCount) problems.push(`EOF names ${expectedCount} chunks, ${chunks.length} are journaled`);
  chunks.forEach((c, i) => {
    if (c.seq !== i) problems.push(`chunk receipts are not contiguous at seq ${i}`);
  });
  if (loads.length !== chunks.length) problems.push(`${loads.length} load receipts for ${chunks.length} chunks`);
  const loadBySeq = new Map(loads.map((l) => [l.seq, l]));
  for (const c of chunks) {
    const l = loadBySeq.get(c.seq);
    if (!l) problems.push(`chunk ${c.seq} has no load receipt`);
    else if (l.rows !== c.rows || l.digest !== c.digest) problems.push(`chunk ${c.seq}: load receipt differs from the chunk receipt`);
  }
  const want = loads.filter((l) => l.rows > 0).map((l) => ({ seq: l.seq, rows: l.rows }));
  if (canonicalJson(want) !== canonicalJson([...observed].sort((a, b) => a.seq - b.seq))) {
    problems.push('the stage does not hold exactly the loaded rows per chunk');
  }
  return problems;
}

/**
 * Step 5: prove EOF. In WRITING_UNKNOWN, once extraction EOF is journaled:
 * - receipts and the stage agree → VERIFIED_EOF ("exact receipts and digest");
 * - they do not → PARTIAL_PROVED ("bounded observation"): what the stage holds is proved
 *   to be less or other than the window, so it can only be retired (then a new complete
 *   invocation).
 * In VERIFIED_EOF (a resume re-verifies before preparing) the publication receipt is
 * probed first (`adoptReceipt`: a receipt → PUBLISHED, or INCIDENT_RETAINED when it does
 * not match), and only without one does a stage that no longer matches the receipts
 * become REEXTRACT_REQUIRED. Without the EOF record the step refuses
 * (Delivery.TransitionPrecondition): extraction is unfinished and nothing is proved.
 */
export async function verifyEof(input: unknown, deps: DeliveryDeps): Promise<VerifyOutput> {
  const step = parseStepInput(input);
  const { record, ref } = await loadForStep(step, deps);
  if (record.state !== 'WRITING_UNKNOWN' && record.state !== 'VERIFIED_EOF') return { ...output(step, record, false), problems: [] };
  const eof = await journalOf(deps.ports.authority, record.invocationId).find(transitionIdOf(EXTRACT_EOF_STEP, record.invocationId));
  if (!eof) throw new TransitionPreconditionError(`invocation ${record.invocationId}: extraction has not reached EOF`);
  const patch = (eof.data.op as { patch?: { chunks?: Array<{ seq: number }> } } | undefined)?.patch;
  const eofSeqs = (patch?.chunks ?? []).map((c) => c.seq);
  await assertCustody(deps.ports, ref.targetId, step.fence);
  // Receipt first: a publication that landed unjournaled is adopted before the stage is read.
  const adopted = await adoptReceipt(record, step.fence, deps);
  if (adopted) return { ...output(step, adopted.invocation, !adopted.alreadyApplied), problems: [] };
  const observed = await deps.target.observeChunks(stagingRefOf(record));
  const problems = eofProblems(record, eofSeqs, observed);
  if (record.state === 'VERIFIED_EOF' && problems.length === 0) return { ...output(step, record, false), problems };
  const to: JournalState = problems.length === 0 ? 'VERIFIED_EOF' : record.state === 'VERIFIED_EOF' ? 'REEXTRACT_REQUIRED' : 'PARTIAL_PROVED';
  const result = await transition(deps.ports, ref, {
    from: record.state,
    to,
    fence: step.fence,
    transitionId: transitionIdOf(to === 'VERIFIED_EOF' ? 'verify-eof' : to === 'PARTIAL_PROVED' ? 'verify-partial' : 'verify-reextract', record.invocationId),
  });
  return { ...output(step, result.invocation, !result.alreadyApplied), problems };
}

import type { JournalState } from '../../domain/delivery/journal-states.js';
import type { DeliveryDeps } from '../deps.js';
import { TransitionPreconditionError } from '../journal/errors.js';
import { transition } from '../journal/transition.js';
import { verifyParts } from '../parts/verify-parts.js';
import { loadForStep, output, parseStepInput, transitionIdOf, type StepOutput } from './common.js';
import { rereadOnStale } from './carried.js';

export interface VerifyOutput extends StepOutput {
  /** Why the receipts do not prove EOF (empty when they do). */
  problems: string[];
}

/**
 * Step 5: prove EOF. In WRITING_UNKNOWN, once every part of the plan has journaled EOF:
 * - the parts' receipts and the stage agree (src/delivery/parts/verify-parts.ts) →
 *   VERIFIED_EOF ("exact receipts and digest"), recording the parts' summary (rows,
 *   chunks, bytes, digest) that publication is held to;
 * - they do not → PARTIAL_PROVED ("bounded observation"): what the stage holds is proved
 *   to be less or other than the window, so it can only be retired (then a new complete
 *   invocation).
 * In VERIFIED_EOF (a resume re-verifies before preparing) the publication receipt is
 * probed first (the mode's `adoptPublication`, publish.ts `adoptReceipt`: a receipt →
 * PUBLISHED, or INCIDENT_RETAINED when it does not match), and only without one does a stage that no longer matches the receipts
 * become REEXTRACT_REQUIRED. With a part short of EOF the step refuses
 * (Delivery.TransitionPrecondition): extraction is unfinished and nothing is proved.
 */
async function verifyEofOnce(input: unknown, deps: DeliveryDeps): Promise<VerifyOutput> {
  const step = parseStepInput(input);
  const { record, ref, custody: heldCustody } = await loadForStep(step, deps);
  if (record.state !== 'WRITING_UNKNOWN' && record.state !== 'VERIFIED_EOF')
    return { ...output(step, record, false), problems: [] };
  const custody = await heldCustody();
  // Receipt first: a publication that landed unjournaled is adopted before the stage is read.
  const adopted = await deps.mode.adoptPublication(record, step.fence, deps);
  if (adopted) return { ...output(step, adopted.invocation, !adopted.alreadyApplied, custody), problems: [] };
  const verified = await verifyParts(deps, record);
  // Extraction unfinished: nothing is proved. (VERIFIED_EOF was entered with every part at
  // EOF, and a part head never leaves EOF.)
  if (verified.unfinished)
    throw new TransitionPreconditionError(
      `invocation ${record.invocationId}: extraction has not reached EOF in every part`,
    );
  const { problems, summary } = verified;
  if (record.state === 'VERIFIED_EOF' && problems.length === 0)
    return { ...output(step, record, false, custody), problems };
  const to: JournalState =
    problems.length === 0 ? 'VERIFIED_EOF' : record.state === 'VERIFIED_EOF' ? 'REEXTRACT_REQUIRED' : 'PARTIAL_PROVED';
  const result = await transition(deps.ports, ref, {
    from: record.state,
    to,
    fence: step.fence,
    transitionId: transitionIdOf(
      to === 'VERIFIED_EOF' ? 'verify-eof' : to === 'PARTIAL_PROVED' ? 'verify-partial' : 'verify-reextract',
      record.invocationId,
    ),
    ...(to === 'VERIFIED_EOF' ? { patch: { parts: summary } } : {}),
    known: { invocation: record, custody },
  });
  return { ...output(step, result.invocation, !result.alreadyApplied, custody), problems };
}

/** The step, deciding again from the journal when it refused or did nothing on a carried state (steps/carried.ts). */
export const verifyEof = rereadOnStale(verifyEofOnce);

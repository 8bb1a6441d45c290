import { releaseCustody } from '../custody.js';
import type { DeliveryDeps } from '../deps.js';
import { TransitionPreconditionError } from '../journal/errors.js';
import { forRerun, loadForStep, output, parseStepInput, transitionIdOf, type StepOutput } from './common.js';
import { rereadOnStale } from './carried.js';

/**
 * Step 11: SUCCEEDED → CUSTODY_RELEASED ("cleanup proved"): the journal record and the
 * fenced custody release in one transaction (`releaseCustody`, at
 * `delivery.custody.release`). Requires the journaled cleanup proof (the `absence` fact);
 * without it the journal's transition rule refuses (Delivery.TransitionPrecondition) and
 * custody stays held. Acts only in
 * SUCCEEDED.
 */
async function releaseOnce(input: unknown, deps: DeliveryDeps): Promise<StepOutput> {
  const step = parseStepInput(input);
  const { record, ref, custody: heldCustody } = await loadForStep(step, deps);
  if (record.state !== 'SUCCEEDED') return output(step, record, false);
  // The transition rule refuses CUSTODY_RELEASED without the absence proof anyway; this
  // early check only keeps a fenced zombie's answer the precondition, not the fence.
  if (!record.facts.absence) {
    throw new TransitionPreconditionError(`invocation ${record.invocationId}: the owned stage's absence is not proved; custody stays held`);
  }
  const result = await releaseCustody(deps.ports, ref, {
    from: 'SUCCEEDED',
    to: 'CUSTODY_RELEASED',
    fence: step.fence,
    transitionId: transitionIdOf('release', record.invocationId),
    known: { invocation: record, custody: await heldCustody() },
  });
  // Custody is released: the execution's output carries no journal state.
  return output(forRerun(step), result.invocation, !result.alreadyApplied);
}

/** The step, deciding again from the journal when it refused or did nothing on a carried state (steps/carried.ts). */
export const release = rereadOnStale(releaseOnce);

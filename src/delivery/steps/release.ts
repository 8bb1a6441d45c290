import { releaseCustody } from '../custody.js';
import type { DeliveryDeps } from '../deps.js';
import { TransitionPreconditionError } from '../journal-store.js';
import { CLEANUP_PROVED_STEP, journaled, loadForStep, output, parseStepInput, transitionIdOf, type StepOutput } from './common.js';

/**
 * Step 11: SUCCEEDED → CUSTODY_RELEASED ("cleanup proved"): the journal record and the
 * fenced custody release in one transaction (`releaseCustody`, at
 * `delivery.custody.release`). Requires the journaled cleanup proof; without it the step
 * refuses (Delivery.TransitionPrecondition) and custody stays held. Acts only in
 * SUCCEEDED.
 */
export async function release(input: unknown, deps: DeliveryDeps): Promise<StepOutput> {
  const step = parseStepInput(input);
  const { record, ref } = await loadForStep(step, deps);
  if (record.state !== 'SUCCEEDED') return output(step, record, false);
  if (!(await journaled(deps, record.invocationId, transitionIdOf(CLEANUP_PROVED_STEP, record.invocationId)))) {
    throw new TransitionPreconditionError(`invocation ${record.invocationId}: the owned stage's absence is not proved; custody stays held`);
  }
  const result = await releaseCustody(deps.ports, ref, {
    from: 'SUCCEEDED',
    to: 'CUSTODY_RELEASED',
    fence: step.fence,
    transitionId: transitionIdOf('release', record.invocationId),
  });
  return output(step, result.invocation, !result.alreadyApplied);
}

import type { DropStatus } from '../../ports/target.js';
import type { DeliveryDeps } from '../deps.js';
import { recordFacts, transition } from '../journal/transition.js';
import { CLEANUP_PROVED_STEP, loadForStep, output, parseStepInput, stagingRefOf, transitionIdOf, type StepOutput } from './common.js';
import { rereadOnStale } from './carried.js';

export interface CleanupOutput extends StepOutput {
  /** What the drop proved; absent when the step did not act. */
  drop?: DropStatus;
}

/**
 * Step 10: drop the exact owned stage and prove its absence (`target.dropStaging`: lock,
 * recheck object id and owner binding, drop, prove), in SUCCEEDED, before custody is
 * released.
 * - ABSENT_PROVED: the proof is journaled as the `absence` fact (the exact table and
 *   object id) under `cleanup-proved.<invocation>`; the journal's own transition rule
 *   refuses CUSTODY_RELEASED without it (journal-proofs.ts `missingProof`).
 * - ATTACHED: the stage is gone as a stage because the exact object became the target
 *   partition this invocation's receipt names (a partition swap): nothing is dropped, and
 *   the proof is the same `absence` fact with the partition (`attached`), which the
 *   transition rule accepts for CUSTODY_RELEASED only when the journaled receipt names
 *   this object as its stage.
 * - NOT_OURS: the name holds an object that is not the recorded stage — contradicting
 *   evidence: SUCCEEDED → INCIDENT_RETAINED, custody kept, the object untouched.
 * - ABSENCE_UNPROVABLE: this principal cannot tell absence from missing metadata
 *   permission: the state stays SUCCEEDED and custody stays held, for an elevated
 *   principal to repeat the step (resume).
 */
async function cleanupOnce(input: unknown, deps: DeliveryDeps): Promise<CleanupOutput> {
  const step = parseStepInput(input);
  const { record, ref, custody: heldCustody } = await loadForStep(step, deps);
  const provedId = transitionIdOf(CLEANUP_PROVED_STEP, record.invocationId);
  // Proved already: the absence fact is what the cleanup-proved record wrote.
  if (record.state !== 'SUCCEEDED' || record.facts.absence) return output(step, record, false);
  const custody = await heldCustody();
  const staging = stagingRefOf(record);
  const drop = await deps.target.dropStaging(staging);
  if (drop.status === 'ABSENT_PROVED' || (drop.status === 'ATTACHED' && drop.partition)) {
    const attached = drop.status === 'ATTACHED' && drop.partition ? { attached: drop.partition } : {};
    const result = await recordFacts(deps.ports, ref, {
      state: 'SUCCEEDED',
      fence: step.fence,
      transitionId: provedId,
      patch: { absence: { table: staging.table, objectId: staging.objectId, ...attached } },
      known: { invocation: record, custody },
    });
    return { ...output(step, result.invocation, true, custody), drop: drop.status };
  }
  if (drop.status === 'NOT_OURS') {
    const result = await transition(deps.ports, ref, {
      from: 'SUCCEEDED',
      to: 'INCIDENT_RETAINED',
      fence: step.fence,
      transitionId: transitionIdOf('cleanup-not-ours', record.invocationId),
      known: { invocation: record, custody },
    });
    return { ...output(step, result.invocation, true, custody), drop: drop.status };
  }
  return { ...output(step, record, true, custody), drop: drop.status };
}

/** The step, deciding again from the journal when it refused or did nothing on a carried state (steps/carried.ts). */
export const cleanup = rereadOnStale(cleanupOnce);

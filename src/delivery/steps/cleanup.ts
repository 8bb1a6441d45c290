import type { DropStatus } from '../../domain/delivery/target-types.js';
import type { DeliveryDeps } from '../deps.js';
import { releaseCustody } from '../custody.js';
import type { AbsenceFact } from '../journal/facts.js';
import { transition } from '../journal/transition.js';
import {
  forRerun,
  loadForStep,
  output,
  parseStepInput,
  stagingRefOf,
  transitionIdOf,
  type StepOutput,
} from './common.js';
import { rereadOnStale } from './carried.js';

export interface CleanupOutput extends StepOutput {
  /** What the drop proved; absent when the step did not act. */
  drop?: DropStatus;
}

/**
 * Step 10, the last, of the SQL transaction mode (transaction-mode.ts): drop the exact
 * owned stage, prove its absence (`target.dropStaging`: lock, recheck object id and owner
 * binding, drop, prove) and release custody
 * (SUCCEEDED → CUSTODY_RELEASED) with the proof, in ONE transaction (`releaseCustody`, at
 * `delivery.custody.release`): custody is released only with the cleanup proved, and the
 * journal's own transition rule refuses CUSTODY_RELEASED without the proof
 * (journal-proofs.ts `missingProof`). A crash between the drop and that transaction is
 * repaired by running the step again: the stage is gone, the drop proves it, the release
 * follows.
 * - ABSENT_PROVED: the proof is the `absence` fact (the exact table and object id).
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
 * A journal that already holds the proof (written by the version that journaled it on its
 * own, `cleanup-proved.<invocation>`) is released without another drop.
 */
async function cleanupOnce(input: unknown, deps: DeliveryDeps): Promise<CleanupOutput> {
  const step = parseStepInput(input);
  const { record, ref, custody: heldCustody } = await loadForStep(step, deps);
  if (record.state !== 'SUCCEEDED') return output(step, record, false);
  const custody = await heldCustody();
  const released = async (absence: AbsenceFact | undefined, drop?: DropStatus): Promise<CleanupOutput> => {
    const result = await releaseCustody(deps.ports, ref, {
      from: 'SUCCEEDED',
      to: 'CUSTODY_RELEASED',
      fence: step.fence,
      transitionId: transitionIdOf('release', record.invocationId),
      ...(absence ? { patch: { absence } } : {}),
      known: { invocation: record, custody },
    });
    // Custody is released: the output carries no journal state.
    return { ...output(forRerun(step), result.invocation, !result.alreadyApplied), ...(drop ? { drop } : {}) };
  };
  if (record.facts.absence) return released(undefined);
  const staging = stagingRefOf(record);
  const drop = await deps.target.dropStaging(staging);
  if (drop.status === 'ABSENT_PROVED' || (drop.status === 'ATTACHED' && drop.partition)) {
    const attached = drop.status === 'ATTACHED' && drop.partition ? { attached: drop.partition } : {};
    return released({ table: staging.table, objectId: staging.objectId, ...attached }, drop.status);
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

/** The SQL transaction mode's cleanup, deciding again from the journal when it refused or did nothing on a carried state (steps/carried.ts). */
export const cleanupStage = rereadOnStale(cleanupOnce);

/**
 * The cleanup step: the route's publication mode's (a ClickHouse exchange route's also drops
 * the predecessor and retires the capsule, src/publication/steps/cleanup.ts).
 */
export const cleanup = (input: unknown, deps: DeliveryDeps): Promise<CleanupOutput> => deps.mode.cleanup(input, deps);

import { assertCustody, releaseCustody } from '../custody.js';
import { transition } from '../journal-store.js';
import { stagingRefOf, transitionIdOf } from '../steps/common.js';
import { RecoveryRetainedError, runRecovery, type RecoveryDeps, type RecoveryInput, type RecoveryResult } from './recovery-session.js';

/**
 * `retire` (EMPTY_STAGING with a recorded stage, PARTIAL_PROVED, REEXTRACT_REQUIRED):
 * rechecks that no publication receipt exists for the invocation (a receipt is
 * contradicting evidence: INCIDENT_RETAINED), then drops exactly the recorded owned stage
 * (`dropStaging`: lock, recheck object id and owner binding, drop, prove absence).
 * - ABSENT_PROVED → RETIRED, custody released in the same transaction;
 * - NOT_OURS → INCIDENT_RETAINED, the object untouched (exit 1, delivery.retire_not_ours);
 * - ABSENCE_UNPROVABLE → the state and custody are kept for an elevated principal
 *   (exit 1, delivery.retire_absence_unprovable); repeating is safe.
 * The checkpoint never moves.
 */
export async function retire(input: RecoveryInput, deps: RecoveryDeps): Promise<RecoveryResult> {
  return runRecovery('retire', input, deps, async ({ record, ref, fence, deps: d }) => {
    const staging = stagingRefOf(record);
    await assertCustody(d.ports, ref.targetId, fence);
    if (await d.target.probeReceipt(record.invocationId)) {
      await transition(d.ports, ref, { from: record.state, to: 'INCIDENT_RETAINED', fence, transitionId: transitionIdOf('retire-published', record.invocationId) });
      throw new RecoveryRetainedError('delivery.retire_publication_found', 'a publication receipt exists for this invocation; it cannot be retired', 'INCIDENT_RETAINED');
    }
    const drop = await d.target.dropStaging(staging);
    if (drop.status === 'ABSENT_PROVED') {
      await releaseCustody(d.ports, ref, { from: record.state, to: 'RETIRED', fence, transitionId: transitionIdOf('retire', record.invocationId) });
      return;
    }
    if (drop.status === 'NOT_OURS') {
      await transition(d.ports, ref, { from: record.state, to: 'INCIDENT_RETAINED', fence, transitionId: transitionIdOf('retire-not-ours', record.invocationId) });
      throw new RecoveryRetainedError('delivery.retire_not_ours', 'the recorded stage name holds an object that is not ours', 'INCIDENT_RETAINED');
    }
    throw new RecoveryRetainedError('delivery.retire_absence_unprovable', "the stage's absence cannot be proved by this principal", record.state);
  });
}

import { receiptMatches } from '../../ports/target.js';
import { assertCustody } from '../custody.js';
import { runDeliverySteps } from '../deliver-in-process.js';
import { transition } from '../journal-store.js';
import { transitionIdOf } from '../steps/common.js';
import { publicationFactOf, publishRequestOf } from '../steps/publish.js';
import { RecoveryRetainedError, runRecovery, type RecoveryDeps, type RecoveryInput, type RecoveryResult } from './recovery-session.js';

/**
 * `resume` (VERIFIED_EOF, PUBLISHED, SUCCEEDED): the remaining deliver-window steps with
 * source-free deps, to CUSTODY_RELEASED. From VERIFIED_EOF the exact transaction receipt
 * is probed first, before any target write: a crash after the COMMIT is resolved from
 * the receipt (→ PUBLISHED, "commit receipt observed"), never by publishing again; a
 * receipt that does not match → INCIDENT_RETAINED. A run that ends anywhere but
 * CUSTODY_RELEASED (e.g. a stage that no longer verifies or fails quality →
 * REEXTRACT_REQUIRED; cleanup that cannot prove absence) exits 1 with custody retained.
 */
export async function resume(input: RecoveryInput, deps: RecoveryDeps): Promise<RecoveryResult> {
  return runRecovery('resume', input, deps, async ({ record, ref, fence, deps: d }) => {
    if (record.state === 'VERIFIED_EOF') {
      const request = publishRequestOf(record, d);
      await assertCustody(d.ports, ref.targetId, fence);
      const receipt = await d.target.probeReceipt(record.invocationId);
      if (receipt && !receiptMatches(receipt, request)) {
        await transition(d.ports, ref, { from: 'VERIFIED_EOF', to: 'INCIDENT_RETAINED', fence, transitionId: transitionIdOf('publish-foreign-receipt', record.invocationId) });
        throw new RecoveryRetainedError('delivery.resume_receipt_mismatch', 'the publication receipt for this invocation does not match the journal', 'INCIDENT_RETAINED');
      }
      if (receipt) {
        await transition(d.ports, ref, {
          from: 'VERIFIED_EOF',
          to: 'PUBLISHED',
          fence,
          transitionId: transitionIdOf('publish', record.invocationId),
          patch: { publication: publicationFactOf(receipt) },
        });
      }
    }
    const run = await runDeliverySteps({ invocationId: record.invocationId, fence }, d);
    if (run.state !== 'CUSTODY_RELEASED') {
      throw new RecoveryRetainedError('delivery.resume_incomplete', `resume stopped at ${run.stoppedAt ?? 'a step'}${run.reasons ? ` (${run.reasons.join(', ')})` : ''}`, run.state);
    }
  });
}

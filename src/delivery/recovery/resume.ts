import { ReaderGuardHeldError } from '../../domain/quality/errors.js';
import type { TransactionLeg } from '../../ports/authority.js';
import type { Ports } from '../../ports/index.js';
import { stepsOf } from '../../publication/publication-steps.js';
import { capsuleAsRead, type ContinuityRef } from '../../quality/capsule-continuity.js';
import { runDeliverySteps } from '../deliver-in-process.js';
import {
  RecoveryRetainedError,
  runRecovery,
  type RecoveryDeps,
  type RecoveryInput,
  type RecoveryResult,
} from './recovery-session.js';

/**
 * `resume` (VERIFIED_EOF, PUBLISHED, SUCCEEDED): the remaining deliver-window steps with
 * source-free deps, to CUSTODY_RELEASED (a ClickHouse exchange route: publish-clickhouse's
 * steps — a dispatched operation is never dispatched again, PUBLISHED is observed). From VERIFIED_EOF the publish step's own
 * mechanism decides: target.publish looks for the exact receipt first, inside the
 * publication transaction, so a COMMIT that landed earlier (a crash after it, a zombie's
 * late COMMIT) is taken from its receipt (→ PUBLISHED) and never published again, and a
 * receipt that does not match → INCIDENT_RETAINED. A run that ends anywhere but
 * CUSTODY_RELEASED (a stage that no longer verifies or fails quality → REEXTRACT_REQUIRED;
 * a foreign receipt; cleanup that cannot prove absence) exits 1 with custody retained.
 */
export async function resume(input: RecoveryInput, deps: RecoveryDeps): Promise<RecoveryResult> {
  return runRecovery(
    'resume',
    input,
    deps,
    async ({ record, fence, deps: d }) => {
      const run = await runDeliverySteps({ invocationId: record.invocationId, fence }, d, [], stepsOf(d));
      if (run.state !== 'CUSTODY_RELEASED') {
        throw new RecoveryRetainedError(
          'delivery.resume_incomplete',
          `resume stopped at ${run.stoppedAt ?? 'a step'}${run.reasons ? ` (${run.reasons.join(', ')})` : ''}`,
          run.state,
        );
      }
    },
    { custodyCondition: (ports, ref) => noReaderGuard(ports, { ...ref, route: deps.route.name }) },
  );
}

/**
 * Resume's custody takeover only while the capsule (if any) holds no reader guard, checked
 * in the same transaction by the capsule's version as read — as the operator's observe does
 * (src/quality/operator-observe.ts, publication seed 47). A takeover from a run that took the
 * guard after resume's own checks would fence that run out of ever persisting its observation
 * or releasing its guard: held forever, and its retries refused as fenced, so no incident
 * either. Refused here with Quality.ReaderGuardHeld, nothing written; resume could not pass
 * a held guard anyway (observe-target and cleanup refuse it). The capsule is read through the
 * continuity check (src/quality/capsule-continuity.ts): a rolled-back capsule is refused
 * here, before custody moves, never resumed.
 */
async function noReaderGuard(ports: Ports, ref: ContinuityRef): Promise<TransactionLeg[]> {
  const { capsule, legs } = await capsuleAsRead(ports, ref);
  if (capsule?.schema === 2 && capsule.reader)
    throw new ReaderGuardHeldError(
      'resume would take custody from the run holding the quality reader guard; nothing was written (the guard has no expiry and no force-clear: quiescence procedure)',
    );
  return legs;
}

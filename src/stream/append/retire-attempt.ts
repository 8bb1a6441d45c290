import type { AppendOutcome } from '../../domain/stream.js';
import type { Ports } from '../../ports/index.js';
import { validateAttemptRef } from '../append-input.js';
import { STREAM_CUT_POINTS } from '../cut-points.js';
import { assertSessionIssued, loadHead } from '../lane-store.js';
import { committedOutcome, uncommittedOutcome } from '../outcomes.js';
import { unsuspend } from '../resolve.js';
import { retireIntent } from '../retire-intent.js';

/**
 * After the head CAS was refused for good (a newer owner holds the lane, the attempt
 * cannot proceed): retire the attempt's intent, so the outcome is proven and its WAL
 * bytes enter orphan grace, and a suspension it held is lifted. If the head CAS won a race
 * first, the outcome is COMMITTED.
 */
export async function retireAttempt(input: unknown, ports: Ports): Promise<AppendOutcome> {
  const ref = validateAttemptRef(input);
  // A session the lane never issued spends no attempt id (validated before any write).
  await assertSessionIssued(ports, ref, await loadHead(ports, ref), ref.session);
  const reason = typeof (input as { reason?: unknown }).reason === 'string' ? (input as { reason: string }).reason.slice(0, 200) : 'retired';
  const intent = await retireIntent(ports, ref, ref.attemptId, reason, STREAM_CUT_POINTS.retire);
  if (intent.state === 'COMMITTED') return committedOutcome(intent);
  // Proven not committed: if this attempt held the lane suspended, the lane is free again.
  await unsuspend(ports, ref, ref.attemptId);
  return uncommittedOutcome('KNOWN_NOT_COMMITTED', ref, intent.recordCount, intent.abortReason ?? reason);
}

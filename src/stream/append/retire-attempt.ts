import { assertAttemptInWindow, attemptWindowOf } from '../../domain/attempt-time.js';
import type { AppendOutcome } from '../../domain/stream.js';
import type { Ports } from '../../ports/index.js';
import { validateAttemptRef } from '../append-input.js';
import { STREAM_CUT_POINTS } from '../cut-points.js';
import { assertSessionIssued, loadHead } from '../lane-store.js';
import { knownCommitted, uncommittedOutcome } from '../outcomes.js';
import { unsuspend } from '../resolve.js';
import { spendAttempt } from '../spend-attempt.js';

/**
 * After the attempt was refused for good (a newer owner holds the lane, the lane is
 * suspended by another attempt, its offset was taken, it was spent): spend it (the spent
 * marker and a head version bump: it can never commit later; its WAL bytes enter orphan
 * grace) and lift a suspension it held. If its head CAS won a race first, KNOWN_COMMITTED.
 */
export async function retireAttempt(input: unknown, ports: Ports): Promise<AppendOutcome> {
  const ref = validateAttemptRef(input);
  // A session the lane never issued spends no attempt id (validated before any write), nor
  // does an attempt outside the lane's attempt window (src/domain/attempt-time.ts).
  const head = await loadHead(ports, ref);
  assertAttemptInWindow(ref.attemptId, attemptWindowOf(head), ports.clock.now());
  await assertSessionIssued(ports, ref, head, ref.session);
  const reason =
    typeof (input as { reason?: unknown }).reason === 'string'
      ? (input as { reason: string }).reason.slice(0, 200)
      : 'retired';
  const spent = await spendAttempt(ports, ref, ref.attemptId, reason, STREAM_CUT_POINTS.retire);
  if (spent.status === 'COMMITTED')
    return knownCommitted({ ...spent.commit, recordCount: spent.commit.end - spent.commit.start });
  // Proven not committed: if this attempt held the lane suspended, the lane is free again.
  await unsuspend(ports, ref, ref.attemptId);
  return uncommittedOutcome('KNOWN_NOT_COMMITTED', ref, spent.marker.recordCount, spent.marker.reason);
}

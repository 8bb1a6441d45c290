import { OutcomeUnknownError } from '../../domain/errors.js';
import { laneKeys, type AppendOutcome } from '../../domain/stream.js';
import type { Ports } from '../../ports/index.js';
import { validateAttemptRef } from '../append-input.js';
import { STREAM_CUT_POINTS } from '../cut-points.js';
import { loadHead, loadIntent } from '../lane-store.js';
import { committedOutcome, uncommittedOutcome } from '../outcomes.js';
import { retireIntent } from '../retire-intent.js';

/**
 * After an UNKNOWN head CAS, or a head CAS refused because the lane is suspended. The exact intent is reloaded first: COMMITTED (the
 * transaction landed) is KNOWN_COMMITTED right away. Still PENDING means the head may or
 * may not advance for it: the lane is suspended by CAS (no append passes until the
 * original attempt is resolved), and the outcome is MAY_HAVE_COMMITTED. An unknown
 * client timeout is never permission for a second append.
 */
export async function suspendLane(input: unknown, ports: Ports): Promise<AppendOutcome> {
  const ref = validateAttemptRef(input);
  const cut = STREAM_CUT_POINTS.suspend;
  for (let round = 0; round < 4; round++) {
    const [head, intent] = await Promise.all([loadHead(ports, ref), loadIntent(ports, ref, ref.attemptId)]);
    if (!intent || (intent.state === 'PENDING' && head.suspendedBy && head.suspendedBy !== ref.attemptId)) {
      // No intent (the head CAS cannot have applied), or another attempt holds the lane:
      // spend this attempt for good, so it can never commit later.
      const why = head.suspendedBy && head.suspendedBy !== ref.attemptId ? `lane suspended by attempt ${head.suspendedBy}` : 'no intent was recorded';
      const retired = await retireIntent(ports, ref, ref.attemptId, why, STREAM_CUT_POINTS.retire);
      if (retired.state === 'COMMITTED') return committedOutcome(retired);
      return uncommittedOutcome('KNOWN_NOT_COMMITTED', ref, retired.recordCount, retired.abortReason ?? why);
    }
    if (intent.state === 'COMMITTED') return committedOutcome(intent);
    if (intent.state === 'ABORTED') return uncommittedOutcome('KNOWN_NOT_COMMITTED', ref, intent.recordCount, intent.abortReason ?? 'aborted');
    const suspended = uncommittedOutcome('MAY_HAVE_COMMITTED', ref, intent.recordCount, `lane suspended; resolve attempt ${ref.attemptId}`);
    if (head.suspendedBy === ref.attemptId) return suspended;
    const outcome = await ports.authority.update(cut, laneKeys.head(ref), { version: head.version }, {
      suspendedBy: ref.attemptId,
      suspendedAt: ports.clock.now().toISOString(),
    });
    if (outcome.status === 'APPLIED') return suspended;
    // CONFLICT or UNKNOWN: reload and decide again (the intent may have committed meanwhile).
  }
  throw new OutcomeUnknownError(cut, `${cut}: suspending the lane for attempt ${ref.attemptId} did not settle`);
}

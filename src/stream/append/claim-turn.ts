import { OutcomeUnknownError } from '../../domain/errors.js';
import { laneKeys, type LaneHead } from '../../domain/stream.js';
import type { Ports } from '../../ports/index.js';
import type { AttemptRef } from '../append-input.js';
import { STREAM_CUT_POINTS } from '../cut-points.js';
import { loadHead } from '../lane-store.js';

/**
 * The attempt suspends the lane for itself before its head CAS is sent (docs/stream-log.md "The stream
 * log", the no-second-append rule): one conditional write on the head — its version as just
 * read and the owner's fence — sets `suspendedBy` to the attempt (cut point
 * stream.append.suspend). The head CAS is then conditioned on the version this leaves and
 * lifts the suspension in the same transaction when it applies. So whenever a head CAS's
 * outcome is unknown, the lane is already suspended by its attempt: an execution that ends
 * right after the unknown outcome (retries exhausted, a time limit) leaves every other
 * attempt refused (Stream.LaneSuspended) until this one is resolved (`stream resolve`),
 * whether or not SuspendLane ever ran. A head CAS that applied lifts it itself: the commit
 * record then proves the attempt committed. The claim (`turnClaimed`) lets the attempt's own
 * retries and re-runs send its CAS; SuspendLane, recording an unknown outcome, turns it into
 * a plain suspension (a version bump: the lost CAS can no longer apply) that refuses the
 * attempt too until a resolve settles it.
 *
 * Paid by every append that reads the head itself (the flow, a caller's attempt id, a
 * re-decision after a conflict): one UpdateItem. A LaneWriter's lean path, carrying the
 * version of its own last CAS, does not claim (1 PUT + 1 TransactWriteItems per batch): its
 * unknown outcome is suspended by SuspendLane in-process, and the writer slot it claimed
 * once (writer-slot.ts) refuses every other append should its process die before that.
 *
 * Returns the head version the CAS must name; undefined when the head moved since `head`
 * was read (the caller decides again). A lost answer is resolved by reloading the head.
 */
export async function claimTurn(ports: Ports, ref: AttemptRef, head: LaneHead): Promise<number | undefined> {
  if (holdsTurn(head, ref.attemptId)) return head.version;
  const cut = STREAM_CUT_POINTS.suspend;
  for (let round = 0; round < 2; round++) {
    const outcome = await ports.authority.update(
      cut,
      laneKeys.head(ref),
      { version: head.version, fence: ref.session },
      {
        suspendedBy: ref.attemptId,
        suspendedAt: ports.clock.now().toISOString(),
        turnClaimed: true,
      },
    );
    if (outcome.status === 'APPLIED') return outcome.item.version;
    if (outcome.status === 'CONFLICT') return undefined;
    const now = await loadHead(ports, ref);
    if (holdsTurn(now, ref.attemptId)) return now.version;
    if (now.version !== head.version) return undefined;
  }
  throw new OutcomeUnknownError(
    cut,
    `${cut}: suspending ${ref.stream}/${ref.partition} for attempt ${ref.attemptId} did not settle`,
  );
}

/** The lane is suspended by the attempt's own claim before its head CAS (not yet an unknown outcome SuspendLane recorded). */
export function holdsTurn(head: LaneHead, attemptId: string): boolean {
  return head.suspendedBy === attemptId && head.turnClaimed === true;
}

/** Another attempt holds the lane, or this one's outcome was recorded unknown: no CAS may go out for `attemptId`. */
export function suspendedAgainst(head: LaneHead, attemptId: string): string | undefined {
  return head.suspendedBy !== undefined && !holdsTurn(head, attemptId) ? head.suspendedBy : undefined;
}

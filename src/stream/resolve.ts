import { assertNotFuture, attemptExpired, attemptWindowOf } from '../domain/attempt-time.js';
import { OutcomeUnknownError } from '../domain/errors.js';
import {
  laneKeys,
  validateAttemptId,
  validateLane,
  type AppendOutcome,
  type CommitRecord,
  type LaneRef,
} from '../domain/stream.js';
import { ResolveInconsistentError } from '../domain/stream-errors.js';
import type { Ports } from '../ports/index.js';
import { STREAM_CUT_POINTS } from './cut-points.js';
import { loadHead } from './lane-store.js';
import { knownCommitted, uncommittedOutcome } from './outcomes.js';
import { resolveExpired } from './resolve-expired.js';
import { spendAttempt } from './spend-attempt.js';

export interface ResolveResult extends AppendOutcome {
  /** True when this call lifted the lane's suspension. */
  unsuspended: boolean;
}

/**
 * Resolves the original attempt of a MAY_HAVE_COMMITTED append (the stream-resolve-append
 * flow's probe) from its exact evidence (append/attempt-evidence.ts): the attempt's WAL
 * objects, each bound by its metadata to one start offset and fence epoch, and the commit
 * record at each one's bound end.
 * - A commit record names the attempt and SHA-256 → KNOWN_COMMITTED (the head must have
 *   reached its end, else the evidence contradicts itself: Stream.ResolveInconsistent, the
 *   lane stays suspended).
 * - Otherwise the attempt is spent (spent marker + head version bump in one transaction,
 *   which no delayed head CAS of the attempt can pass) → KNOWN_NOT_COMMITTED. With no WAL
 *   object at all the marker spends the attempt id, so a late PUT can never commit.
 * Then the suspension is lifted. A missing lane is refused (Stream.LaneMissing), and a
 * time mark too far ahead (Stream.AttemptTimeFuture), before anything is written. An
 * attempt past its lane's attempt window is never spent: resolve-expired.ts says what the
 * evidence still standing proves, or refuses (Stream.AttemptExpired).
 */
export async function resolveAppend(input: unknown, ports: Ports): Promise<ResolveResult> {
  const lane = validateLane(input);
  const attemptId = validateAttemptId((input as { attemptId?: unknown }).attemptId);
  const ref = { ...lane, attemptId };
  const head = await loadHead(ports, lane);
  assertNotFuture(attemptId, ports.clock.now());
  const window = attemptWindowOf(head);
  if (attemptExpired(attemptId, window, ports.clock.now())) {
    const expired = await resolveExpired(ports, lane, attemptId, window);
    if (expired.kind === 'COMMITTED')
      return {
        ...(await provenCommitted(ports, lane, expired.commit)),
        unsuspended: await unsuspend(ports, lane, attemptId),
      };
    return { ...expired.outcome, unsuspended: expired.lifted || (await unsuspend(ports, lane, attemptId)) };
  }
  const spent = await spendAttempt(
    ports,
    lane,
    attemptId,
    'resolved: the head CAS never applied',
    STREAM_CUT_POINTS.resolveFence,
  );
  let outcome: AppendOutcome;
  if (spent.status === 'COMMITTED') outcome = await provenCommitted(ports, lane, spent.commit);
  else outcome = uncommittedOutcome('KNOWN_NOT_COMMITTED', ref, spent.marker.recordCount, spent.marker.reason);
  const unsuspended = await unsuspend(ports, lane, attemptId);
  return { ...outcome, unsuspended };
}

/** KNOWN_COMMITTED for a commit record the head has reached (else the evidence contradicts itself). */
export async function provenCommitted(ports: Ports, lane: LaneRef, commit: CommitRecord): Promise<AppendOutcome> {
  const head = await loadHead(ports, lane);
  if (head.committedEnd < commit.end) {
    throw new ResolveInconsistentError(
      commit.attemptId,
      `head end ${head.committedEnd} is behind the committed range end ${commit.end}`,
    );
  }
  return knownCommitted({ ...commit, recordCount: commit.end - commit.start });
}

/** Lifts the suspension if (and only if) this attempt holds it. */
export async function unsuspend(ports: Ports, lane: LaneRef, attemptId: string): Promise<boolean> {
  for (let round = 0; round < 4; round++) {
    const head = await loadHead(ports, lane);
    if (head.suspendedBy !== attemptId) return round > 0;
    const outcome = await ports.authority.update(
      STREAM_CUT_POINTS.unsuspend,
      laneKeys.head(lane),
      { version: head.version },
      {
        suspendedBy: undefined,
        suspendedAt: undefined,
        turnClaimed: undefined,
      },
    );
    if (outcome.status === 'APPLIED') return true;
  }
  throw new OutcomeUnknownError(
    STREAM_CUT_POINTS.unsuspend,
    `lifting the suspension of ${lane.stream}/${lane.partition} did not settle`,
  );
}

import { OutcomeUnknownError } from '../domain/errors.js';
import { laneKeys, validateAttemptId, validateLane, type AppendIntent, type AppendOutcome, type LaneRef } from '../domain/stream.js';
import { ResolveInconsistentError } from '../domain/stream-errors.js';
import type { Ports } from '../ports/index.js';
import { STREAM_CUT_POINTS } from './cut-points.js';
import { commitContaining, loadHead, loadIntent } from './lane-store.js';
import { committedOutcome, uncommittedOutcome } from './outcomes.js';
import { retireIntent } from './retire-intent.js';

export interface ResolveResult extends AppendOutcome {
  /** True when this call lifted the lane's suspension. */
  unsuspended: boolean;
}

/**
 * Resolves the original attempt of a MAY_HAVE_COMMITTED append (the stream-resolve-append
 * flow's probe). The intent is the recovery handle: the head CAS transaction marks it
 * COMMITTED atomically with the head and the commit record, so
 * - COMMITTED, and the commit record at its range names the attempt → KNOWN_COMMITTED;
 * - PENDING → fence it (PENDING → ABORTED by CAS on its version, which no delayed head CAS
 *   can pass) → KNOWN_NOT_COMMITTED;
 * - no intent → the head CAS could never have applied; an ABORTED tombstone spends the
 *   attempt id so it can never commit later → KNOWN_NOT_COMMITTED.
 * Then the suspension is lifted. Evidence that contradicts itself (COMMITTED without its
 * commit record, or a head behind the range) keeps the lane suspended and says why.
 * Index and generation 0 repairs for a committed attempt are the flow's next steps.
 * A missing lane is refused (Stream.LaneMissing) before anything is written.
 */
export async function resolveAppend(input: unknown, ports: Ports): Promise<ResolveResult> {
  const lane = validateLane(input);
  const attemptId = validateAttemptId((input as { attemptId?: unknown }).attemptId);
  const ref = { ...lane, attemptId };
  // The lane must exist before anything is written (a tombstone on a missing lane would be
  // a refused command that mutates): Stream.LaneMissing, nothing written.
  await loadHead(ports, lane);
  let intent = await loadIntent(ports, lane, attemptId);
  if (!intent || intent.state === 'PENDING') {
    intent = await retireIntent(ports, lane, attemptId, intent ? 'resolved: head CAS never applied' : 'resolved: no intent was recorded', STREAM_CUT_POINTS.resolveFence);
  }
  let outcome: AppendOutcome;
  if (intent.state === 'COMMITTED') outcome = await provenCommitted(ports, lane, intent);
  else outcome = uncommittedOutcome('KNOWN_NOT_COMMITTED', ref, intent.recordCount, intent.abortReason ?? 'aborted');
  const unsuspended = await unsuspend(ports, lane, attemptId);
  return { ...outcome, unsuspended };
}

async function provenCommitted(ports: Ports, lane: LaneRef, intent: AppendIntent): Promise<AppendOutcome> {
  const [head, commit] = await Promise.all([loadHead(ports, lane), commitContaining(ports, lane, intent.start!)]);
  if (!commit || commit.attemptId !== intent.attemptId || commit.start !== intent.start || commit.end !== intent.end || commit.walSha256 !== intent.walSha256) {
    throw new ResolveInconsistentError(intent.attemptId, `intent is COMMITTED but no commit record for [${intent.start}, ${intent.end}) names it`);
  }
  if (head.committedEnd < commit.end) {
    throw new ResolveInconsistentError(intent.attemptId, `head end ${head.committedEnd} is behind the committed range end ${commit.end}`);
  }
  return committedOutcome(intent);
}

/** Lifts the suspension if (and only if) this attempt holds it. */
export async function unsuspend(ports: Ports, lane: LaneRef, attemptId: string): Promise<boolean> {
  for (let round = 0; round < 4; round++) {
    const head = await loadHead(ports, lane);
    if (head.suspendedBy !== attemptId) return round > 0;
    const outcome = await ports.authority.update(STREAM_CUT_POINTS.unsuspend, laneKeys.head(lane), { version: head.version }, {
      suspendedBy: undefined,
      suspendedAt: undefined,
    });
    if (outcome.status === 'APPLIED') return true;
  }
  throw new OutcomeUnknownError(STREAM_CUT_POINTS.unsuspend, `lifting the suspension of ${lane.stream}/${lane.partition} did not settle`);
}

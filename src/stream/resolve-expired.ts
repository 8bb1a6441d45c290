import { ATTEMPT_TIME_MARGIN_MS, attemptSettledByWindow, expiredError, timeMarkOf } from '../domain/attempt-time.js';
import { OutcomeUnknownError } from '../domain/errors.js';
import { laneKeys, type AppendOutcome, type CommitRecord, type LaneRef } from '../domain/stream.js';
import type { Ports } from '../ports/index.js';
import { committedWal, spentMarker, walsOf } from './append/attempt-evidence.js';
import { STREAM_CUT_POINTS } from './cut-points.js';
import { loadHead } from './lane-store.js';
import { uncommittedOutcome } from './outcomes.js';

/** What the evidence still standing proves about an expired attempt; `lift` when the lane's suspension by it was lifted. */
export type ExpiredResolution =
  { kind: 'COMMITTED'; commit: CommitRecord } | { kind: 'NOT_COMMITTED'; outcome: AppendOutcome; lifted: boolean };

/**
 * `stream resolve` of a time-marked attempt past its lane's attempt window
 * (src/domain/attempt-time.ts). It never spends the attempt and never appends: past the
 * window GC may have retired its collected record, and a spent marker written now, on
 * evidence that may be gone, could call a committed attempt not committed — the owner would
 * then append its records a second time. It reports what the evidence still standing proves:
 * - a commit record naming the attempt (through its WAL objects or its collected record):
 *   committed;
 * - its spent marker: not committed;
 * - the lane suspended by it (its claim before a head CAS, or a recorded unknown outcome):
 *   no head CAS of it has applied (one that applies lifts the suspension in the same
 *   transaction), so lifting the suspension by a CAS at the head version read — a version
 *   bump no in-flight CAS of it can pass — proves it not committed for good, because every
 *   later CAS of it is refused by the window. Only once the window and the margin have
 *   passed (no clock within the margin can still accept it); before that, resolve again then;
 * - nothing: refused (Stream.AttemptExpired, `stream.attempt_expired`), nothing written:
 *   whether its records committed is in the lane's commit records.
 * A lost answer of the lift is resolved by reloading: the lane no longer suspended by the
 * attempt and no commit record naming it is the same proof.
 */
export async function resolveExpired(
  ports: Ports,
  lane: LaneRef,
  attemptId: string,
  windowSeconds: number,
): Promise<ExpiredResolution> {
  let lifting = false;
  for (let round = 0; round < 4; round++) {
    const head = await loadHead(ports, lane);
    const marker = await spentMarker(ports, lane, attemptId);
    const commit = await committedWal(ports, lane, attemptId, await walsOf(ports, lane, attemptId));
    if (commit) return { kind: 'COMMITTED', commit };
    if (marker)
      return {
        kind: 'NOT_COMMITTED',
        outcome: uncommittedOutcome('KNOWN_NOT_COMMITTED', { ...lane, attemptId }, marker.recordCount, marker.reason),
        lifted: false,
      };
    if (head.suspendedBy !== attemptId) {
      if (lifting) return { kind: 'NOT_COMMITTED', outcome: lifted(lane, attemptId), lifted: true };
      throw expiredError(attemptId, windowSeconds);
    }
    if (!attemptSettledByWindow(attemptId, windowSeconds, ports.clock.now())) {
      const after = new Date(timeMarkOf(attemptId)! + windowSeconds * 1000 + ATTEMPT_TIME_MARGIN_MS).toISOString();
      throw expiredError(
        attemptId,
        windowSeconds,
        `the lane is suspended by it; run \`stream resolve\` again after ${after}, when no clock within the margin still accepts it, and the suspension is lifted`,
      );
    }
    lifting = true;
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
    if (outcome.status === 'APPLIED') return { kind: 'NOT_COMMITTED', outcome: lifted(lane, attemptId), lifted: true };
    // CONFLICT or UNKNOWN: reload and judge again (a CAS of it may have applied meanwhile).
  }
  throw new OutcomeUnknownError(
    STREAM_CUT_POINTS.unsuspend,
    `lifting the suspension of ${lane.stream}/${lane.partition} by expired attempt ${attemptId} did not settle`,
  );
}

function lifted(lane: LaneRef, attemptId: string): AppendOutcome {
  return uncommittedOutcome(
    'KNOWN_NOT_COMMITTED',
    { ...lane, attemptId },
    0,
    'resolved past its attempt window: the suspension it held was lifted, no head CAS of it applied, and its re-runs are refused',
  );
}

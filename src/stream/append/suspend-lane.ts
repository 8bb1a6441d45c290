import { assertAttemptInWindow, attemptWindowOf } from '../../domain/attempt-time.js';
import { OutcomeUnknownError } from '../../domain/errors.js';
import { laneKeys, type AppendOutcome } from '../../domain/stream.js';
import { sameFence } from '../../domain/fence.js';
import type { Ports } from '../../ports/index.js';
import { validateAttemptRef, validateWalRef, type WalRef } from '../append-input.js';
import { STREAM_CUT_POINTS } from '../cut-points.js';
import { loadHead } from '../lane-store.js';
import { knownCommitted, uncommittedOutcome } from '../outcomes.js';
import { spendAttempt } from '../spend-attempt.js';
import { commitAtEnd, namesAttempt, spentMarker } from './attempt-evidence.js';
import { holdsTurn, suspendedAgainst } from './claim-turn.js';
import { writerAgainst } from './writer-slot.js';
import { unsuspend } from '../resolve.js';

/**
 * After a head CAS whose outcome stayed unknown (or a worker that kept dying around it), or
 * one refused because the lane is suspended. The exact evidence is reloaded first — head,
 * then the spent marker, then `commit#<end>` of the WAL object's binding:
 * - the commit record names this attempt and SHA-256 → KNOWN_COMMITTED;
 * - the attempt is spent → KNOWN_NOT_COMMITTED;
 * - it can no longer be this attempt's turn (another attempt holds the suspension, another
 *   LaneWriter's slot holds the lane or a resolve of its own writer is under way, the fence
 *   moved, the committed end is not its start) → spent for good (spend-attempt)
 *   → KNOWN_NOT_COMMITTED, or KNOWN_COMMITTED if it turns out it won;
 * - otherwise the head CAS may still apply: the lane is suspended by CAS on the head
 *   version (which also makes the in-flight CAS, conditioned on an older version, unable
 *   to apply) and the outcome is MAY_HAVE_COMMITTED until stream-resolve-append resolves
 *   the original attempt. An unknown client timeout is never permission for a second append.
 *   An attempt that suspended the lane for itself before its CAS (claim-turn.ts) already
 *   holds it: this turns the claim into that suspension; should this step never run, the
 *   claim still refuses every other attempt.
 */
export async function suspendLane(input: unknown, ports: Ports): Promise<AppendOutcome> {
  const ref = validateAttemptRef(input);
  const wal: WalRef | undefined = (input as { wal?: unknown }).wal ? validateWalRef(input) : undefined;
  const cut = STREAM_CUT_POINTS.suspend;
  for (let round = 0; round < 4; round++) {
    const head = await loadHead(ports, ref);
    // Outside the attempt window nothing is written for it (src/domain/attempt-time.ts): a
    // claim it holds is lifted by `stream resolve`, whose evidence rules stay the same.
    if (round === 0) assertAttemptInWindow(ref.attemptId, attemptWindowOf(head), ports.clock.now());
    const marker = await spentMarker(ports, ref, ref.attemptId);
    if (wal) {
      const end = wal.start + wal.recordCount;
      if (namesAttempt(await commitAtEnd(ports, ref, wal), ref.attemptId, wal)) {
        return knownCommitted({ ...ref, recordCount: wal.recordCount, start: wal.start, end });
      }
    }
    const count = wal?.recordCount ?? 0;
    if (marker) return uncommittedOutcome('KNOWN_NOT_COMMITTED', ref, count, marker.reason);
    if (head.suspendedBy === ref.attemptId && !holdsTurn(head, ref.attemptId))
      return uncommittedOutcome('MAY_HAVE_COMMITTED', ref, count, `lane suspended; resolve attempt ${ref.attemptId}`);
    const holder = suspendedAgainst(head, ref.attemptId);
    const writer = writerAgainst(head, ref.attemptId);
    const turn =
      wal &&
      !holder &&
      !writer &&
      head.committedEnd === wal.start &&
      sameFence(head.fence, ref.session) &&
      wal.fenceEpoch === ref.session.epoch;
    if (!turn) {
      const why = holder
        ? `lane suspended by attempt ${holder}`
        : writer
          ? `lane held by writer ${writer}`
          : !wal
            ? 'no head CAS was issued'
            : !sameFence(head.fence, ref.session) || wal.fenceEpoch !== ref.session.epoch
              ? 'Stream.Fenced: another session owns the lane'
              : 'the head moved past its turn';
      const spent = await spendAttempt(ports, ref, ref.attemptId, why, STREAM_CUT_POINTS.retire);
      if (spent.status === 'COMMITTED')
        return knownCommitted({ ...spent.commit, recordCount: spent.commit.end - spent.commit.start });
      // Proven not committed: a claim this attempt took before its CAS is lifted.
      await unsuspend(ports, ref, ref.attemptId);
      return uncommittedOutcome('KNOWN_NOT_COMMITTED', ref, count, spent.marker.reason);
    }
    // Suspends the lane, or turns the attempt's own claim (claim-turn.ts) into a suspension
    // only a resolve lifts: either way a version bump no lost CAS of the attempt can pass.
    const outcome = await ports.authority.update(
      cut,
      laneKeys.head(ref),
      { version: head.version },
      {
        suspendedBy: ref.attemptId,
        suspendedAt: ports.clock.now().toISOString(),
        turnClaimed: undefined,
      },
    );
    if (outcome.status === 'APPLIED')
      return uncommittedOutcome('MAY_HAVE_COMMITTED', ref, count, `lane suspended; resolve attempt ${ref.attemptId}`);
    // CONFLICT or UNKNOWN: reload and decide again (the CAS may have landed meanwhile).
  }
  throw new OutcomeUnknownError(cut, `${cut}: suspending the lane for attempt ${ref.attemptId} did not settle`);
}

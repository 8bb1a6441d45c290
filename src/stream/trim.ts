import { CutpointError, OutcomeUnknownError, ValidationError } from '../domain/errors.js';
import { laneKeys, validateLane, validateOffset, type LaneHead, type LaneRef } from '../domain/stream.js';
import type { TransactionLeg } from '../ports/authority.js';
import type { Ports } from '../ports/index.js';
import { STREAM_CUT_POINTS } from './cut-points.js';
import { TrimPastCursorError } from './cursor/errors.js';
import { retentionGuard } from './cursor/policy.js';
import { loadHead } from './lane-store.js';

export interface TrimResult extends LaneRef {
  /** The lane's trim offset after the call (at least the requested target). */
  trimOffset: number;
  /** What this call moved it from; equal to `trimOffset` when the call moved nothing. */
  previousTrimOffset: number;
  committedEnd: number;
}

/** The trim offset only moves forward; a lower target is refused (the same one is success). */
export class TrimBackwardsError extends CutpointError {
  constructor(lane: LaneRef, to: number, current: number) {
    super(
      'Stream.TrimBackwards',
      'stream.trim_backwards',
      `lane ${lane.stream}/${lane.partition}: trim offset is already ${current}; it never moves back to ${to}`,
    );
  }
}

const MAX_ROUNDS = 8;

/**
 * Moves a lane's trim offset forward to `to` by CAS on the head's version (docs/rules.md#trim).
 * Records below it stop being readable; their bytes stay until GC, which is normal.
 * - Monotonic: a lower target than the current trim is Stream.TrimBackwards; the same
 *   target is success (a retry after a lost response reloads the current trim and finds
 *   it applied); past the committed end is refused.
 * - The CAS names the version only, no fence: trim is an operator action, not the lane
 *   owner's, and must work whoever holds the lane. An append moves the version, so a
 *   CONFLICT reloads and decides again against the new committed end.
 * - UNKNOWN reloads the head: a trim offset at or past the target means our CAS (or a
 *   later trim) applied — success; below it, the CAS did not land and is safe to repeat.
 */
export async function trimLane(input: unknown, ports: Ports): Promise<TrimResult> {
  const lane = validateLane(input);
  const to = validateOffset((input as { to?: unknown }).to, 'to');
  const cut = STREAM_CUT_POINTS.trimCas;
  const result = (head: LaneHead, previous: number): TrimResult => ({
    ...lane,
    trimOffset: head.trimOffset,
    previousTrimOffset: previous,
    committedEnd: head.committedEnd,
  });
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const head = await loadHead(ports, lane);
    if (head.trimOffset === to) return result(head, head.trimOffset);
    if (to < head.trimOffset) throw new TrimBackwardsError(lane, to, head.trimOffset);
    if (to > head.committedEnd) {
      throw new ValidationError(
        'stream.trim_beyond_end',
        `trim target ${to} is past the committed end ${head.committedEnd} of ${lane.stream}/${lane.partition}`,
      );
    }
    const set = { trimOffset: to, trimmedAt: ports.clock.now().toISOString() };
    // The cursors the stream's retention policy names (Stream.TrimPastCursor), pinned in the same transaction.
    let guard: TransactionLeg[];
    try {
      guard = await retentionGuard(ports, lane, head, to);
    } catch (error) {
      // A named group without a cursor holds the trim at this head's trim offset: a refusal
      // judged on a head that moved meanwhile (another trim, then a policy naming that
      // group) is decided again on the current one.
      if (error instanceof TrimPastCursorError && (await loadHead(ports, lane)).version !== head.version) continue;
      throw error;
    }
    const outcome = guard.length
      ? await ports.authority.transact(cut, [
          { kind: 'update', key: laneKeys.head(lane), expect: { version: head.version }, set },
          ...guard,
        ])
      : await ports.authority.update(cut, laneKeys.head(lane), { version: head.version }, set);
    if (outcome.status === 'APPLIED')
      return result('item' in outcome ? (outcome.item as unknown as LaneHead) : { ...head, ...set }, head.trimOffset);
    if (outcome.status === 'UNKNOWN') {
      const reloaded = await loadHead(ports, lane);
      if (reloaded.trimOffset >= to) return result(reloaded, head.trimOffset);
    }
    // CONFLICT (an append, a takeover or another trim moved the version), or UNKNOWN that
    // did not land: the next round reloads and decides again.
  }
  throw new OutcomeUnknownError(cut, `${cut}: trimming ${lane.stream}/${lane.partition} to ${to} did not settle`);
}

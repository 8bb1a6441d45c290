import { OutcomeUnknownError } from '../domain/errors.js';
import { laneKeys, walPrefixOf, type CommitRecord, type LaneRef, type SpentMarker } from '../domain/stream.js';
import type { Ports } from '../ports/index.js';
import type { WalRef } from './append-input.js';
import { committedWal, spentMarker, walsOf } from './append/attempt-evidence.js';
import { loadHead } from './lane-store.js';

export type SpendResult = { status: 'COMMITTED'; commit: CommitRecord } | { status: 'SPENT'; marker: SpentMarker };

/**
 * Proves an attempt not committed, for good — or finds that it committed.
 * The attempt's WAL objects are found by their exact prefix and each one's bound end
 * offset is checked for a commit record naming it (COMMITTED). Otherwise one transaction
 * writes the spent marker (`spent#<attempt>`, put-if-absent, its bytes entering
 * orphan grace) and bumps the head's version:
 * - every head CAS of the attempt already in flight names an older head version and can
 *   never apply;
 * - every later try reads the head first and the marker after it (commit-head.ts), so
 *   it sees the marker and refuses (Stream.AttemptAborted).
 * Without the marker an attempt reported KNOWN_NOT_COMMITTED could be re-driven at the
 * same start offset and commit after its client re-sent the records: a duplicate.
 * CONFLICT or UNKNOWN: reload everything and decide again.
 */
export async function spendAttempt(
  ports: Ports,
  lane: LaneRef,
  attemptId: string,
  reason: string,
  cutPoint: string,
  listed?: WalRef[],
): Promise<SpendResult> {
  for (let round = 0; round < 4; round++) {
    const head = await loadHead(ports, lane);
    const marker = await spentMarker(ports, lane, attemptId);
    // `listed`: the attempt's WAL objects as a caller just listed them after fencing the
    // attempt's writer (resolve-writer.ts), used for the first round only.
    const wals = round === 0 && listed ? listed : await walsOf(ports, lane, attemptId);
    const commit = await committedWal(ports, lane, attemptId, wals);
    if (commit) return { status: 'COMMITTED', commit };
    if (marker) return { status: 'SPENT', marker };
    const now = ports.clock.now().toISOString();
    const one = wals.length === 1 ? wals[0]! : undefined;
    const spent: Omit<SpentMarker, 'version'> = {
      stream: lane.stream,
      partition: lane.partition,
      attemptId,
      walKey: one ? one.walKey : walPrefixOf(lane, attemptId),
      walSha256: one ? one.walSha256 : '',
      walSize: one ? one.walSize : 0,
      recordCount: one ? one.recordCount : 0,
      reason,
      spentAt: now,
      orphanSince: now,
    };
    const outcome = await ports.authority.transact(cutPoint, [
      { kind: 'put', item: { ...laneKeys.spent(lane, attemptId), ...spent }, expect: 'absent' },
      {
        kind: 'update',
        key: laneKeys.head(lane),
        expect: { version: head.version },
        set: { lastSpentAttemptId: attemptId },
      },
    ]);
    if (outcome.status === 'APPLIED') return { status: 'SPENT', marker: { ...spent, version: 1 } };
  }
  throw new OutcomeUnknownError(cutPoint, `${cutPoint}: spending attempt ${attemptId} did not settle`);
}

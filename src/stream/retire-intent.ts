import { OutcomeUnknownError } from '../domain/errors.js';
import { laneKeys, walPrefixOf, type AppendIntent, type LaneRef } from '../domain/stream.js';
import type { Ports } from '../ports/index.js';
import { loadIntent } from './lane-store.js';

/**
 * Proves an attempt not committed, for good.
 * - A PENDING intent moves to ABORTED by CAS on its version. The head CAS transaction
 *   names that same version, so once this applies no delayed head CAS of the attempt can
 *   ever land. Its WAL bytes become unreferenced and enter orphan grace (`orphanSince`).
 * - With no intent yet, an ABORTED tombstone is created (put-if-absent). It races the
 *   attempt's own intent put, so exactly one wins: either the attempt never records an
 *   intent and can never commit, or its intent exists and is retired as above. Without
 *   the tombstone a "not committed" attempt could be re-driven later and commit after a
 *   client had already re-sent its records under a new attempt — a duplicate.
 * Returns the intent as it ends (COMMITTED if the head CAS won the race).
 */
export async function retireIntent(ports: Ports, lane: LaneRef, attemptId: string, reason: string, cutPoint: string): Promise<AppendIntent> {
  const key = laneKeys.intent(lane, attemptId);
  for (let round = 0; round < 4; round++) {
    const intent = await loadIntent(ports, lane, attemptId);
    if (intent && intent.state !== 'PENDING') return intent;
    const now = ports.clock.now().toISOString();
    const retired = { state: 'ABORTED', abortReason: reason, abortedAt: now, orphanSince: now };
    const outcome = intent
      ? await ports.authority.update(cutPoint, key, { version: intent.version }, retired)
      : await ports.authority.put(cutPoint, { ...key, ...tombstoneOf(lane, attemptId), ...retired }, 'absent');
    if (outcome.status === 'APPLIED') return outcome.item as unknown as AppendIntent;
    // CONFLICT or UNKNOWN: the next round reloads the exact intent.
  }
  throw new OutcomeUnknownError(cutPoint, `${cutPoint}: retiring attempt ${attemptId} did not settle`);
}

/** An intent that never named a batch: it only spends the attempt id. */
function tombstoneOf(lane: LaneRef, attemptId: string) {
  return {
    stream: lane.stream,
    partition: lane.partition,
    attemptId,
    walKey: walPrefixOf(lane, attemptId),
    walSha256: '',
    walSize: 0,
    recordCount: 0,
    tombstone: true,
  };
}

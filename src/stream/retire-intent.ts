import { OutcomeUnknownError } from '../domain/errors.js';
import { laneKeys, type AppendIntent, type LaneRef } from '../domain/stream.js';
import type { Ports } from '../ports/index.js';
import { loadIntent } from './lane-store.js';

/**
 * Proves an attempt not committed: its intent moves PENDING → ABORTED by CAS on the
 * intent's version. The head CAS transaction names that same version, so once this
 * applies no delayed head CAS of the attempt can ever land. The WAL bytes become
 * unreferenced and enter orphan grace from `orphanSince`. Returns the intent as it ends
 * (COMMITTED if the head CAS won the race).
 */
export async function retireIntent(ports: Ports, lane: LaneRef, attemptId: string, reason: string, cutPoint: string): Promise<AppendIntent | undefined> {
  for (let round = 0; round < 4; round++) {
    const intent = await loadIntent(ports, lane, attemptId);
    if (!intent || intent.state !== 'PENDING') return intent;
    const now = ports.clock.now().toISOString();
    const outcome = await ports.authority.update(cutPoint, laneKeys.intent(lane, attemptId), { version: intent.version }, {
      state: 'ABORTED',
      abortReason: reason,
      abortedAt: now,
      orphanSince: now,
    });
    if (outcome.status === 'APPLIED') return outcome.item as unknown as AppendIntent;
    // CONFLICT or UNKNOWN: the next round reloads the exact intent.
  }
  throw new OutcomeUnknownError(cutPoint, `${cutPoint}: retiring attempt ${attemptId} did not settle`);
}

import { randomUUID } from 'node:crypto';
import { OutcomeUnknownError, ValidationError } from '../domain/errors.js';
import { laneKeys, validateLane, type LaneRef } from '../domain/stream.js';
import type { Fence } from '../ports/authority.js';
import type { Ports } from '../ports/index.js';
import { STREAM_CUT_POINTS } from './cut-points.js';
import { loadHead } from './lane-store.js';

export interface TakeoverResult extends LaneRef {
  session: Fence;
  committedEnd: number;
  suspendedBy?: string;
}

const OWNER = /^[A-Za-z0-9][A-Za-z0-9._@:-]{0,127}$/;

/**
 * A new owner session with a higher epoch, by CAS on the head. Both takeover styles of
 * the seed — a new append and cursor owner session (Pulsar), an append authority bound
 * to a leader epoch (Kafka) — are this one fence: every later head CAS names owner,
 * session and epoch, so a stale writer still blocked in I/O can finish its PUT but can
 * never advance the head. A lost response is resolved by reloading the head and
 * comparing the exact session id.
 */
export async function takeoverLane(input: unknown, ports: Ports): Promise<TakeoverResult> {
  const lane = validateLane(input);
  const owner = (input as { owner?: unknown }).owner ?? 'cutpoint';
  if (typeof owner !== 'string' || !OWNER.test(owner)) throw new ValidationError('stream.invalid_owner', 'owner must be 1-128 characters of [A-Za-z0-9._@:-]');
  const session = typeof (input as { session?: unknown }).session === 'string' ? (input as { session: string }).session : randomUUID();
  for (let round = 0; round < 5; round++) {
    const head = await loadHead(ports, lane);
    if (head.fence?.session === session && head.fence.owner === owner) return result(lane, head.fence, head);
    const fence: Fence = { owner, session, epoch: (head.fence?.epoch ?? 0) + 1 };
    const outcome = await ports.authority.update(STREAM_CUT_POINTS.takeoverCas, laneKeys.head(lane), { version: head.version }, { fence });
    if (outcome.status === 'APPLIED') return result(lane, fence, outcome.item as unknown as typeof head);
    // UNKNOWN or CONFLICT: the next round reloads the head; our exact session id, if
    // there, proves the takeover applied.
  }
  throw new OutcomeUnknownError(STREAM_CUT_POINTS.takeoverCas, `takeover of ${lane.stream}/${lane.partition} did not settle`);
}

function result(lane: LaneRef, session: Fence, head: { committedEnd: number; suspendedBy?: string }): TakeoverResult {
  return { ...lane, session, committedEnd: head.committedEnd, ...(head.suspendedBy ? { suspendedBy: head.suspendedBy } : {}) };
}

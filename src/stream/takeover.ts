import { randomUUID } from 'node:crypto';
import { OutcomeUnknownError } from '../domain/errors.js';
import { sha256Hex } from '../domain/digest.js';
import {
  laneKeys,
  validateLane,
  validateOwner,
  validateSessionId,
  type IssuedFence,
  type LaneHead,
  type LaneRef,
} from '../domain/stream.js';
import type { Fence } from '../domain/fence.js';
import type { Ports } from '../ports/index.js';
import { STREAM_CUT_POINTS } from './cut-points.js';
import { loadHead } from './lane-store.js';

/**
 * What a takeover reports: owner and epoch of the new session, never its session id (the
 * fencing secret stays with the caller that minted it; a flow's output is printed).
 */
export interface TakeoverResult extends LaneRef {
  owner: string;
  epoch: number;
  committedEnd: number;
  suspendedBy?: string;
  /** A LaneWriter's slot the takeover left in place: appends stay refused until `stream resolve --writer` settles it. */
  writer?: string;
}

/**
 * A new owner session with a higher epoch, by CAS on the head. Both takeover styles of
 * the seed — a new append and cursor owner session (Pulsar), an append authority bound
 * to a leader epoch (Kafka) — are this one fence: every later head CAS names owner,
 * session and epoch, so a stale writer still blocked in I/O can finish its PUT but can
 * never advance the head. A lost response is resolved by reloading the head and
 * comparing the exact session id.
 *
 * A LaneWriter's slot (append/writer-slot.ts) survives the takeover: the new session's
 * appends are refused until `stream resolve --writer` has settled the old writer's attempts.
 * The takeover's version bump already makes every lost CAS of that writer unable to apply,
 * but only the resolve tells which of its attempts did commit before — dropping the slot
 * here would let a restarted producer append those records a second time.
 *
 * Input `{stream, partition, owner, session}`, all required and validated before the
 * head is read: the caller mints the session id (a fresh random id) and keeps it — a
 * re-run with the same id is idempotent, and the id is never part of the output.
 */
export async function takeoverLane(input: unknown, ports: Ports): Promise<TakeoverResult> {
  const lane = validateLane(input);
  const owner = validateOwner((input as { owner?: unknown }).owner);
  const session = validateSessionId((input as { session?: unknown }).session);
  for (let round = 0; round < 5; round++) {
    const head = await loadHead(ports, lane);
    if (head.fence?.session === session && head.fence.owner === owner) return result(lane, head.fence, head);
    const fence: Fence = { owner, session, epoch: (head.fence?.epoch ?? 0) + 1 };
    // The head's new fence and the record of what this epoch issued move together.
    const issued: IssuedFence = { ...lane, epoch: fence.epoch, owner, sessionSha256: sha256Hex(session) };
    const outcome = await ports.authority.transact(STREAM_CUT_POINTS.takeoverCas, [
      { kind: 'update', key: laneKeys.head(lane), expect: { version: head.version }, set: { fence } },
      { kind: 'put', item: { ...laneKeys.fence(lane, fence.epoch), ...issued }, expect: 'absent' },
    ]);
    if (outcome.status === 'APPLIED') return result(lane, fence, head);
    // UNKNOWN or CONFLICT: the next round reloads the head; our exact session id, if
    // there, proves the takeover applied.
  }
  throw new OutcomeUnknownError(
    STREAM_CUT_POINTS.takeoverCas,
    `takeover of ${lane.stream}/${lane.partition} did not settle`,
  );
}

/**
 * For producers that embed cutpoint (and tests): takes the lane over with a freshly minted
 * session id and returns the whole fence, which the caller keeps for `appendBatch`.
 */
export async function takeOverWithNewSession(lane: LaneRef, owner: string, ports: Ports): Promise<Fence> {
  const session = randomUUID();
  const takeover = await takeoverLane({ ...lane, owner, session }, ports);
  return { owner: takeover.owner, session, epoch: takeover.epoch };
}

function result(
  lane: LaneRef,
  fence: Fence,
  head: Pick<LaneHead, 'committedEnd' | 'suspendedBy' | 'writer'>,
): TakeoverResult {
  return {
    ...lane,
    owner: fence.owner,
    epoch: fence.epoch,
    committedEnd: head.committedEnd,
    ...(head.suspendedBy ? { suspendedBy: head.suspendedBy } : {}),
    ...(head.writer ? { writer: head.writer.id } : {}),
  };
}

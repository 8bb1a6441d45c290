import { randomUUID } from 'node:crypto';
import { sha256Hex } from '../../domain/digest.js';
import { OutcomeUnknownError } from '../../domain/errors.js';
import {
  laneKeys,
  validateLane,
  validateOffset,
  validateOwner,
  validateSessionId,
  type LaneHead,
  type LaneRef,
} from '../../domain/stream.js';
import type { TransactionLeg } from '../../ports/authority.js';
import type { Fence } from '../../domain/fence.js';
import type { Ports } from '../../ports/index.js';
import { loadHead } from '../lane-store.js';
import { CURSOR_CUT_POINTS } from './cut-points.js';
import { assertSeekTarget, validateGroup, type Cursor, type IssuedCursorFence } from './rules.js';
import { loadCursor } from './store.js';

/** What a cursor takeover or seek reports: never the session id (the fencing secret). */
export interface CursorSessionResult extends LaneRef {
  group: string;
  owner: string;
  epoch: number;
  position: number;
  committedEnd: number;
  trimOffset: number;
}

const ROUNDS = 8;

/**
 * A new cursor owner session for a consumer group: the cursor's epoch moves up by exactly
 * one under a CAS (a transaction on the cursor item and the record of the fence it issued),
 * which fences the previous consumer — its later commits are Stream.CursorFenced. A group's
 * first takeover creates its cursor at the lane's trim offset (nothing skipped). A re-run
 * with the same session id is idempotent; a lost response is resolved by reloading the
 * cursor and comparing the exact session id.
 *
 * Input `{stream, partition, group, owner, session}`; the caller mints and keeps the session.
 */
export async function takeoverCursor(input: unknown, ports: Ports): Promise<CursorSessionResult> {
  const request = validateSessionRequest(input);
  return install(request, ports, CURSOR_CUT_POINTS.takeover);
}

/**
 * The explicit way to move a cursor anywhere in [trimOffset, committedEnd] — backwards
 * (replay) or forwards (skip): a takeover that also sets the position, so whichever
 * consumer held the group is fenced and cannot commit over the seek. The transaction also
 * checks the head's version, so a trim that lands meanwhile makes it decide again (a seek
 * never lands below the trim). Same session and position again is success.
 *
 * Input `{stream, partition, group, owner, session, to}`.
 */
export async function seekCursor(input: unknown, ports: Ports): Promise<CursorSessionResult> {
  const request = validateSessionRequest(input);
  const to = validateOffset((input as { to?: unknown }).to, 'to');
  return install(request, ports, CURSOR_CUT_POINTS.seek, to);
}

/** For consumers that embed cutpoint (and tests): a takeover with a freshly minted session id. */
export async function takeOverCursorWithNewSession(
  lane: LaneRef,
  group: string,
  owner: string,
  ports: Ports,
): Promise<Fence> {
  const session = randomUUID();
  const taken = await takeoverCursor({ ...lane, group, owner, session }, ports);
  return { owner, session, epoch: taken.epoch };
}

interface SessionRequest {
  lane: LaneRef;
  group: string;
  owner: string;
  session: string;
}

function validateSessionRequest(input: unknown): SessionRequest {
  const lane = validateLane(input);
  const v = input as { group?: unknown; owner?: unknown; session?: unknown };
  return { lane, group: validateGroup(v.group), owner: validateOwner(v.owner), session: validateSessionId(v.session) };
}

async function install(
  { lane, group, owner, session }: SessionRequest,
  ports: Ports,
  cut: string,
  seekTo?: number,
): Promise<CursorSessionResult> {
  const key = laneKeys.cursor(lane, group);
  for (let round = 0; round < ROUNDS; round++) {
    const head = await loadHead(ports, lane);
    const cursor = await loadCursor(ports, lane, group);
    if (seekTo !== undefined) assertSeekTarget(lane, group, head, seekTo);
    const ours = cursor?.fence.session === session && cursor.fence.owner === owner;
    if (ours && (seekTo === undefined || cursor.position === seekTo)) return result(lane, group, cursor, head);
    const legs: TransactionLeg[] = [];
    let fence: Fence;
    if (ours) {
      // Our own session moving its position again: a fenced update, no new epoch.
      fence = cursor.fence;
      legs.push({
        kind: 'update',
        key,
        expect: { version: cursor.version, fence },
        set: { position: seekTo, seekedAt: ports.clock.now().toISOString() },
      });
    } else {
      fence = { owner, session, epoch: (cursor?.fence.epoch ?? 0) + 1 };
      const issued: IssuedCursorFence = {
        ...lane,
        group,
        epoch: fence.epoch,
        owner,
        sessionSha256: sha256Hex(session),
      };
      const position = seekTo ?? cursor?.position ?? head.trimOffset;
      legs.push(
        cursor
          ? { kind: 'update', key, expect: { version: cursor.version }, set: { fence, position } }
          : { kind: 'put', item: { ...key, ...lane, group, position, fence }, expect: 'absent' },
        { kind: 'put', item: { ...laneKeys.cursorFence(lane, group, fence.epoch), ...issued }, expect: 'absent' },
      );
    }
    if (seekTo !== undefined) legs.push({ kind: 'check', key: laneKeys.head(lane), expect: { version: head.version } });
    const outcome = await ports.authority.transact(cut, legs);
    if (outcome.status === 'APPLIED')
      return result(lane, group, { fence, position: seekTo ?? cursor?.position ?? head.trimOffset }, head);
    // UNKNOWN or CONFLICT: the next round reloads; our exact session id (and position) there proves it applied.
  }
  throw new OutcomeUnknownError(cut, `${cut}: cursor ${group} of ${lane.stream}/${lane.partition} did not settle`);
}

function result(
  lane: LaneRef,
  group: string,
  cursor: Pick<Cursor, 'fence' | 'position'>,
  head: LaneHead,
): CursorSessionResult {
  return {
    ...lane,
    group,
    owner: cursor.fence.owner,
    epoch: cursor.fence.epoch,
    position: cursor.position,
    committedEnd: head.committedEnd,
    trimOffset: head.trimOffset,
  };
}

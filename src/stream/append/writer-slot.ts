import { OutcomeUnknownError, ValidationError } from '../../domain/errors.js';
import { laneKeys, type LaneHead, type LaneRef } from '../../domain/stream.js';
import type { Fence } from '../../domain/fence.js';
import type { Ports } from '../../ports/index.js';
import { STREAM_CUT_POINTS } from '../cut-points.js';
import { loadHead } from '../lane-store.js';

/**
 * The writer slot (docs/stream-log.md "The stream log"): a LaneWriter's lean head CAS does not suspend
 * the lane before it goes out (that would be a second write per batch), so the writer holds
 * the lane once, for its whole life: `head.writer` names it from its first head load (one
 * conditional write, cut point stream.append.writer-claim) until its `close()` or `stream
 * resolve --writer` releases it (stream.append.writer-release). While it is held, every
 * append of another writer — another LaneWriter, the flow, `stream append` — is refused
 * (Stream.LaneSuspended naming the writer) before anything of it is written. So a writer
 * process that dies between an unknown head outcome and SuspendLane leaves the lane held
 * until its attempts are resolved: no restarted producer can append the same records again
 * while the lost CAS may have applied. The writer's own CASes need no extra condition: their
 * version is the one its claim (or its own last CAS) left, and every write to the head bumps
 * it, so a CAS that applies is one on a head still naming the writer.
 */

const WRITER_ID = /^[0-9a-f]{8}$/;
/** `w<writer>.e<epoch>.t<ms>.<seq>` (the time mark: src/domain/attempt-time.ts; ids minted before it had none). */
const WRITER_ATTEMPT = /^w([0-9a-f]{8})\.e([0-9]+)\.(?:t[0-9]{13}\.)?([0-9]+)$/;

export function validateWriterId(value: unknown): string {
  if (typeof value !== 'string' || !WRITER_ID.test(value)) {
    throw new ValidationError(
      'stream.invalid_writer',
      'writer must be the 8 hex digits of a LaneWriter id, as its attempt ids carry it (w<writer>.e<epoch>.t<ms>.<seq>) and stream describe shows it',
    );
  }
  return value;
}

/** Every attempt id the writer mints starts with this. */
export const writerAttemptPrefix = (writerId: string): string => `w${writerId}.`;

/** Where a writer's attempt falls in the order it minted them: its epoch, then its sequence. */
export function mintOrderOf(attemptId: string): [number, number] {
  const m = WRITER_ATTEMPT.exec(attemptId);
  return m ? [Number(m[2]), Number(m[3])] : [0, 0];
}

/** The writer that minted `attemptId`, if a LaneWriter did. */
export function writerOfAttempt(attemptId: string): string | undefined {
  return WRITER_ATTEMPT.exec(attemptId)?.[1];
}

/**
 * The writer whose slot refuses `attemptId`: another writer's, or any slot a resolve has
 * marked (from then on not even the writer's own attempts may send a CAS).
 */
export function writerAgainst(head: Pick<LaneHead, 'writer'>, attemptId: string): string | undefined {
  const slot = head.writer;
  if (!slot) return undefined;
  if (slot.resolvingSince !== undefined) return slot.id;
  return writerOfAttempt(attemptId) === slot.id ? undefined : slot.id;
}

/** The slot names this writer and no resolve of it is under way. */
export function holdsSlot(head: Pick<LaneHead, 'writer'>, writerId: string): boolean {
  return head.writer?.id === writerId && head.writer.resolvingSince === undefined;
}

/**
 * The writer's first head load: the head as it stands, claimed for `writerId` when it is
 * free — not suspended, no other writer, the writer's own session owning the lane. The claim
 * is one update at the version read, with the session's fence; a conflict reloads, a lost
 * answer reloads and finds its own id or not. A head held by another writer (or suspended,
 * or fenced) is returned unclaimed: the caller refuses.
 */
export async function claimWriterSlot(ports: Ports, lane: LaneRef, fence: Fence, writerId: string): Promise<LaneHead> {
  const cut = STREAM_CUT_POINTS.writerClaim;
  for (let round = 0; round < 4; round++) {
    const head = await loadHead(ports, lane);
    if (head.writer || head.suspendedBy !== undefined) return head;
    if (head.fence?.session !== fence.session || head.fence.epoch !== fence.epoch || head.fence.owner !== fence.owner)
      return head;
    const outcome = await ports.authority.update(
      cut,
      laneKeys.head(lane),
      { version: head.version, fence },
      {
        writer: { id: writerId, epoch: fence.epoch, claimedAt: ports.clock.now().toISOString() },
      },
    );
    if (outcome.status === 'APPLIED') return outcome.item as unknown as LaneHead;
    // CONFLICT or UNKNOWN: the next round reloads; a claim that landed names this writer.
  }
  throw new OutcomeUnknownError(
    cut,
    `${cut}: claiming ${lane.stream}/${lane.partition} for writer ${writerId} did not settle`,
  );
}

/**
 * Releases the slot if `writerId` holds it: one update at the version `known` (read when the
 * head was last seen naming the writer) or as reloaded. `by` says whose release it is: the
 * writer's close() releases only a slot no resolve has marked (a marked one is that
 * resolve's to release); the resolve releases only the slot it marked (one the writer
 * claimed again since is a live writer's). True when the head no longer names the writer,
 * false when the slot was left.
 */
export async function releaseWriterSlot(
  ports: Ports,
  lane: LaneRef,
  writerId: string,
  by: 'writer' | 'resolve',
  known?: number,
): Promise<boolean> {
  const cut = STREAM_CUT_POINTS.writerRelease;
  let version = known;
  for (let round = 0; round < 4; round++) {
    if (version === undefined) {
      const head = await loadHead(ports, lane);
      if (head.writer?.id !== writerId) return true;
      if ((head.writer.resolvingSince !== undefined) !== (by === 'resolve')) return false;
      version = head.version;
    }
    const outcome = await ports.authority.update(cut, laneKeys.head(lane), { version }, { writer: undefined });
    if (outcome.status === 'APPLIED') return true;
    version = undefined; // CONFLICT or UNKNOWN: reload (a release that landed names no writer)
  }
  throw new OutcomeUnknownError(
    cut,
    `${cut}: releasing ${lane.stream}/${lane.partition} from writer ${writerId} did not settle`,
  );
}

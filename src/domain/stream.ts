// Over ~300 lines since the formatter wrapped it at 120 columns (294 lines before), kept whole:
// one job: the stream log's stored shapes and their validation (lane, head, writer slot, markers,
// commit and index records), read together as the log's data model.
import { validateAttemptTime } from './attempt-time.js';
import { sha256Hex } from './digest.js';
import { ValidationError } from './errors.js';
import { UnknownSessionError } from './stream-errors.js';
import { sameFence, type Fence } from './fence.js';

/**
 * The stream log (docs/rules.md#stream-log): per lane (a stream partition) a head item in the authority
 * holds the committed end offset, the trim offset, the owner session's fence and, while
 * an append's outcome is unknown, the attempt that suspended it. Each committed half-open
 * range [start, end) of record offsets has a commit record naming its WAL object; index
 * entries serve reads and can always be rebuilt from the commit records.
 *
 * The acknowledged path writes no intent item: the WAL object's metadata binds the batch
 * (attempt, SHA-256, record count, fence epoch, start) before any authority write, and one
 * transaction moves the head and creates `commit#<end>`. An append that read the head
 * itself first suspends the lane for its own attempt (src/stream/append/claim-turn.ts), so
 * no head CAS with an unknown outcome leaves the lane open to a second append; a LaneWriter,
 * whose lean CASes claim nothing, holds the lane for its whole life instead (the writer slot,
 * src/stream/append/writer-slot.ts). A `spent#<attempt>`
 * marker is written only off the happy path, when an attempt is proven not committed while
 * its binding could still apply (src/stream/spend-attempt.ts).
 */

export interface LaneRef {
  stream: string;
  partition: number;
}

export interface LaneHead extends LaneRef {
  /** Offset the next committed record gets; [trimOffset, committedEnd) is readable. */
  committedEnd: number;
  trimOffset: number;
  /** The owner session allowed to append; absent until the first takeover. */
  fence?: Fence;
  /**
   * The attempt whose head CAS may be in flight or has an unknown outcome: set by the attempt
   * itself before its CAS (claim-turn.ts, with `turnClaimed`) or by SuspendLane, lifted by
   * its own CAS, a resolve or a retire. Every other append waits for it to be resolved.
   */
  suspendedBy?: string;
  /**
   * The suspension is the attempt's own claim before its head CAS: that attempt (a retry of
   * its step, a re-run of its id) may still send the CAS, which lifts it. SuspendLane turns
   * it into a suspension only a resolve (or a retire) lifts, refusing the attempt too.
   */
  turnClaimed?: boolean;
  /**
   * The writer slot (src/stream/append/writer-slot.ts): the LaneWriter appending on the lean
   * path, claimed once per writer and released by its `close()` or by `stream resolve
   * --writer`. While it is held, every append of another writer is refused.
   */
  writer?: WriterSlot;
  /**
   * How long a time-marked attempt id may be re-run on this lane (src/domain/attempt-time.ts),
   * fixed at create; a head created before lanes had one gets the default (7 days).
   */
  attemptWindowSeconds?: number;
  version: number;
}

/** A LaneWriter's hold on its lane (`LaneHead.writer`). */
export interface WriterSlot {
  /** The writer's id: its attempt ids are `w<id>.e<epoch>.<seq>`. */
  id: string;
  /** The owner session epoch it claimed under. */
  epoch: number;
  claimedAt: string;
  /** Set by `stream resolve --writer` before it lists the writer's attempts: no CAS of the writer applies from then on. */
  resolvingSince?: string;
}

/**
 * `spent#<attempt>`: the spent marker of an attempt proven not committed for good, written
 * (put-if-absent, with a head version bump) off the happy path while the attempt's binding
 * could still apply (src/stream/spend-attempt.ts). It has one state — it exists — and is
 * never changed or deleted: every later try of the attempt reads it and refuses.
 */
export interface SpentMarker extends LaneRef {
  attemptId: string;
  /**
   * The attempt's WAL object when it had exactly one; otherwise (none, or several) its
   * WAL prefix, with `walSha256` '' and `walSize`/`recordCount` 0.
   */
  walKey: string;
  walSha256: string;
  walSize: number;
  recordCount: number;
  /** Why the attempt was proven not committed (fenced, resolved, stale). */
  reason: string;
  spentAt: string;
  /** When its WAL bytes became unreferenced: orphan grace runs from here. */
  orphanSince: string;
  version: number;
}

/**
 * `collected#<attempt>`: written by GC (put-if-absent, never changed) before it deletes the
 * WAL object of a COMMITTED attempt — trimmed, or superseded by a compaction — so the
 * attempt's WAL identity, binding and committed range outlive the object: a re-run of the
 * attempt id still answers KNOWN_COMMITTED with the same range and can never append the
 * batch again; a resolve never spends it (src/stream/gc/attempt-record.ts).
 */
export interface CollectedAttempt extends LaneRef {
  attemptId: string;
  walKey: string;
  walSha256: string;
  walSize: number;
  recordCount: number;
  fenceEpoch: number;
  start: number;
  end: number;
  collectedAt: string;
  version: number;
}

/** A committed range: written in the same transaction that advances the head. */
export interface CommitRecord extends LaneRef {
  attemptId: string;
  start: number;
  end: number;
  walKey: string;
  walSha256: string;
  walSize: number;
  committedAt: string;
}

/** Read-path entry for one committed range; the materialized generation joins it later. */
export interface IndexEntry extends LaneRef {
  start: number;
  end: number;
  walKey: string;
  walSha256: string;
  gen0Key?: string;
  gen0Sha256?: string;
}

/**
 * The three interpretations of an append attempt (docs/rules.md#append-outcomes):
 * - KNOWN_NOT_COMMITTED: the head did not and cannot advance for it; a new attempt is safe.
 * - MAY_HAVE_COMMITTED: the head CAS outcome is unknown; the lane is suspended until the
 *   original attempt is resolved.
 * - KNOWN_COMMITTED: the range is committed; only index and generation 0 may need repair.
 */
export type AppendStatus = 'KNOWN_NOT_COMMITTED' | 'MAY_HAVE_COMMITTED' | 'KNOWN_COMMITTED';

export interface AppendOutcome extends LaneRef {
  status: AppendStatus;
  attemptId: string;
  start?: number;
  end?: number;
  recordCount: number;
  reason?: string;
  /** What a refusal names beyond its reason: what holds the lane and the command that resolves it. */
  detail?: string;
  /** KNOWN_COMMITTED with derived data still missing (index, generation 0): reads repair it. */
  pendingRepairs?: Array<'index' | 'gen0'>;
}

const STREAM = /^[a-z0-9][a-z0-9._-]{0,63}$/;
const ATTEMPT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
export const MAX_PARTITIONS = 1024;
export const MAX_BATCH_BYTES = 6 * 1024 * 1024;
export const MAX_RECORD_BYTES = 1024 * 1024;

export function validateLane(input: unknown): LaneRef {
  const v = input as Partial<LaneRef> | null;
  if (typeof v?.stream !== 'string' || !STREAM.test(v.stream)) {
    throw new ValidationError(
      'stream.invalid_stream',
      'stream must be 1-64 characters of [a-z0-9._-], starting with a letter or digit',
    );
  }
  // -0 is no partition number JSON should carry (it passes `>= 0`): refused, never read as 0.
  if (
    !Number.isInteger(v.partition) ||
    Object.is(v.partition, -0) ||
    (v.partition as number) < 0 ||
    (v.partition as number) >= MAX_PARTITIONS
  ) {
    throw new ValidationError('stream.invalid_partition', `partition must be an integer in [0, ${MAX_PARTITIONS})`);
  }
  return { stream: v.stream, partition: v.partition as number };
}

export function validateAttemptId(value: unknown): string {
  if (typeof value !== 'string' || !ATTEMPT.test(value)) {
    throw new ValidationError('stream.invalid_attempt', 'attempt id must be 1-128 characters of [A-Za-z0-9._-]');
  }
  validateAttemptTime(value);
  return value;
}

const OWNER = /^[A-Za-z0-9][A-Za-z0-9._@:-]{0,127}$/;
/** A session id: an unguessable token the taking-over caller mints (the CLI: a UUID). */
const SESSION = /^[A-Za-z0-9][A-Za-z0-9._-]{15,127}$/;

export function validateOwner(value: unknown): string {
  if (typeof value !== 'string' || !OWNER.test(value))
    throw new ValidationError('stream.invalid_owner', 'owner must be 1-128 characters of [A-Za-z0-9._@:-]');
  return value;
}

/** The session id a takeover installs (never printed: it is the fencing secret). */
export function validateSessionId(value: unknown): string {
  if (typeof value !== 'string' || !SESSION.test(value)) {
    throw new ValidationError(
      'stream.invalid_session',
      'session must be 16-128 characters of [A-Za-z0-9._-] (a fresh random id, e.g. a UUID)',
    );
  }
  return value;
}

export function validateFence(value: unknown): Fence {
  const f = value as Partial<Fence> | null;
  if (
    typeof f?.owner !== 'string' ||
    !OWNER.test(f.owner) ||
    typeof f.session !== 'string' ||
    !SESSION.test(f.session) ||
    !Number.isSafeInteger(f.epoch) ||
    (f.epoch as number) < 1
  ) {
    throw new ValidationError(
      'stream.invalid_session',
      'session must be {owner, session, epoch >= 1}; take the lane over first',
    );
  }
  return { owner: f.owner, session: f.session, epoch: f.epoch as number };
}

/**
 * What a takeover records for each epoch it issues, in the same transaction that installs
 * the fence on the head: the owner and the SHA-256 of the session id (the id itself stays
 * with the caller). It lets a refusal tell a stale fence (issued once, since superseded)
 * from a forged one (never issued) at any epoch.
 */
export interface IssuedFence extends LaneRef {
  epoch: number;
  owner: string;
  sessionSha256: string;
}

/**
 * Refuses a fence the lane never issued, before anything is written. Every takeover moves
 * the epoch up by exactly one under a CAS and records what it issued (`IssuedFence`), so
 * each epoch names one fence ever: an epoch above the head's, the head's epoch with another
 * owner or session, any fence on a lane never taken over, or a lower epoch whose record
 * names another owner or session is forged. A lower epoch matching its record is stale
 * (refused later as fenced). `issued` is the record of `session.epoch` when it is below the
 * head's; a lane taken over before records existed has none, and then a lower epoch is
 * taken as stale.
 */
export function assertIssuedFence(
  lane: LaneRef,
  head: Pick<LaneHead, 'fence'>,
  fence: Fence,
  issued?: Pick<IssuedFence, 'owner' | 'sessionSha256'>,
): void {
  const current = head.fence;
  const forged =
    !current ||
    fence.epoch > current.epoch ||
    (fence.epoch === current.epoch && !sameFence(current, fence)) ||
    (fence.epoch < current.epoch &&
      issued !== undefined &&
      (issued.owner !== fence.owner || issued.sessionSha256 !== sha256Hex(fence.session)));
  if (forged) throw new UnknownSessionError(lane);
}

export function validateOffset(value: unknown, name: string): number {
  if (!Number.isSafeInteger(value) || (value as number) < 0) {
    throw new ValidationError('stream.invalid_offset', `${name} must be a non-negative integer`);
  }
  return value as number;
}

const pad = (n: number) => String(n).padStart(16, '0');

/** Authority keys: one partition per lane, items sorted by offset where it matters. */
export const laneKeys = {
  pk: (lane: LaneRef) => `lane#${lane.stream}/${lane.partition}`,
  head: (lane: LaneRef) => ({ pk: laneKeys.pk(lane), sk: 'head' }),
  fence: (lane: LaneRef, epoch: number) => ({ pk: laneKeys.pk(lane), sk: `fence#${pad(epoch)}` }),
  spent: (lane: LaneRef, attemptId: string) => ({ pk: laneKeys.pk(lane), sk: `spent#${attemptId}` }),
  /** A committed attempt whose WAL object GC collected (CollectedAttempt). */
  collected: (lane: LaneRef, attemptId: string) => ({ pk: laneKeys.pk(lane), sk: `collected#${attemptId}` }),
  /** Keyed by end offset: the first commit whose end > x is the one containing x. */
  commit: (lane: LaneRef, end: number) => ({ pk: laneKeys.pk(lane), sk: `commit#${pad(end)}` }),
  commitAfter: (offset: number) => `commit#${pad(offset)}`,
  index: (lane: LaneRef, end: number) => ({ pk: laneKeys.pk(lane), sk: `index#${pad(end)}` }),
  indexAfter: (offset: number) => `index#${pad(offset)}`,
  quarantine: (lane: LaneRef, objectKey: string) => ({ pk: laneKeys.pk(lane), sk: `quarantine#${objectKey}` }),
  /** A consumer group's committed position on the lane (src/stream/cursor/). */
  cursor: (lane: LaneRef, group: string) => ({ pk: laneKeys.pk(lane), sk: `cursor#${group}` }),
  /** What a cursor takeover issued at `epoch` (an IssuedFence plus the group). */
  cursorFence: (lane: LaneRef, group: string, epoch: number) => ({
    pk: laneKeys.pk(lane),
    sk: `cursor-fence#${group}#${pad(epoch)}`,
  }),
};

/** Generation root of a committed range (materialized by the generation-commit mechanism). */
export function rangeRootOf(lane: LaneRef, start: number): string {
  return `stream/${lane.stream}/p${lane.partition}/r${pad(start)}`;
}

// WAL object keys, metadata, binding and fate: stream-wal.ts (re-exported here).
export * from './stream-wal.js';

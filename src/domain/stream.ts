import { sha256Hex } from './digest.js';
import { ValidationError } from './errors.js';
import { UnknownSessionError } from './stream-errors.js';
import type { Fence } from '../ports/authority.js';

/**
 * The stream log (seed 002): per lane (a stream partition) a head item in the authority
 * holds the committed end offset, the trim offset, the owner session's fence and, while
 * an append's outcome is unknown, the attempt that suspended it. Each committed half-open
 * range [start, end) of record offsets has a commit record naming its WAL object; index
 * entries serve reads and can always be rebuilt from the commit records.
 *
 * The acknowledged path writes no intent item: the WAL object's metadata binds the batch
 * (attempt, SHA-256, record count, fence epoch, start) before any authority write, and one
 * transaction moves the head and creates `commit#<end>`. An `intent#<attempt>` item exists
 * only as a spent marker (ABORTED), written off the happy path when an attempt is proven
 * not committed while its binding could still apply (src/stream/retire-intent.ts).
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
  /** Set while an append's head CAS outcome is unknown: appends wait for resolve. */
  suspendedBy?: string;
  version: number;
}

export type IntentState = 'PENDING' | 'COMMITTED' | 'ABORTED';

/**
 * `intent#<attempt>`: since the lean append, only ever written ABORTED — the spent marker
 * of an attempt proven not committed (PENDING and COMMITTED are read from older lanes only).
 */
export interface AppendIntent extends LaneRef {
  attemptId: string;
  walKey: string;
  walSha256: string;
  walSize: number;
  recordCount: number;
  fence: Fence;
  state: IntentState;
  /** Set by the head CAS transaction itself, so COMMITTED always names its range. */
  start?: number;
  end?: number;
  /** Why an attempt was proven not committed (fenced, resolved, stale). */
  abortReason?: string;
  /** When its WAL bytes became unreferenced: orphan grace runs from here. */
  orphanSince?: string;
  /** An ABORTED intent written only to spend an attempt id that never recorded one. */
  tombstone?: boolean;
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
 * The seed's three interpretations of an append attempt:
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
    throw new ValidationError('stream.invalid_stream', 'stream must be 1-64 characters of [a-z0-9._-], starting with a letter or digit');
  }
  if (!Number.isInteger(v.partition) || (v.partition as number) < 0 || (v.partition as number) >= MAX_PARTITIONS) {
    throw new ValidationError('stream.invalid_partition', `partition must be an integer in [0, ${MAX_PARTITIONS})`);
  }
  return { stream: v.stream, partition: v.partition as number };
}

export function validateAttemptId(value: unknown): string {
  if (typeof value !== 'string' || !ATTEMPT.test(value)) {
    throw new ValidationError('stream.invalid_attempt', 'attempt id must be 1-128 characters of [A-Za-z0-9._-]');
  }
  return value;
}

const OWNER = /^[A-Za-z0-9][A-Za-z0-9._@:-]{0,127}$/;
/** A session id: an unguessable token the taking-over caller mints (the CLI: a UUID). */
const SESSION = /^[A-Za-z0-9][A-Za-z0-9._-]{15,127}$/;

export function validateOwner(value: unknown): string {
  if (typeof value !== 'string' || !OWNER.test(value)) throw new ValidationError('stream.invalid_owner', 'owner must be 1-128 characters of [A-Za-z0-9._@:-]');
  return value;
}

/** The session id a takeover installs (never printed: it is the fencing secret). */
export function validateSessionId(value: unknown): string {
  if (typeof value !== 'string' || !SESSION.test(value)) {
    throw new ValidationError('stream.invalid_session', 'session must be 16-128 characters of [A-Za-z0-9._-] (a fresh random id, e.g. a UUID)');
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
    throw new ValidationError('stream.invalid_session', 'session must be {owner, session, epoch >= 1}; take the lane over first');
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
  session: Fence,
  issued?: Pick<IssuedFence, 'owner' | 'sessionSha256'>,
): void {
  const current = head.fence;
  const forged =
    !current ||
    session.epoch > current.epoch ||
    (session.epoch === current.epoch && !sameFence(current, session)) ||
    (session.epoch < current.epoch && issued !== undefined && (issued.owner !== session.owner || issued.sessionSha256 !== sha256Hex(session.session)));
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
  intent: (lane: LaneRef, attemptId: string) => ({ pk: laneKeys.pk(lane), sk: `intent#${attemptId}` }),
  /** Keyed by end offset: the first commit whose end > x is the one containing x. */
  commit: (lane: LaneRef, end: number) => ({ pk: laneKeys.pk(lane), sk: `commit#${pad(end)}` }),
  commitAfter: (offset: number) => `commit#${pad(offset)}`,
  index: (lane: LaneRef, end: number) => ({ pk: laneKeys.pk(lane), sk: `index#${pad(end)}` }),
  indexAfter: (offset: number) => `index#${pad(offset)}`,
  quarantine: (lane: LaneRef, objectKey: string) => ({ pk: laneKeys.pk(lane), sk: `quarantine#${objectKey}` }),
  /** A consumer group's committed position on the lane (src/stream/cursor/). */
  cursor: (lane: LaneRef, group: string) => ({ pk: laneKeys.pk(lane), sk: `cursor#${group}` }),
  /** What a cursor takeover issued at `epoch` (an IssuedFence plus the group). */
  cursorFence: (lane: LaneRef, group: string, epoch: number) => ({ pk: laneKeys.pk(lane), sk: `cursor-fence#${group}#${pad(epoch)}` }),
};

/** Every WAL object lives under this root; no operator command writes into it. */
export const WAL_ROOT = 'wal/';

/**
 * The WAL objects of one attempt: `wal/<stream>/<partition>/<attemptId>/`. `/` is outside
 * the attempt alphabet, so no other attempt's keys share this prefix.
 */
export function walPrefixOf(lane: LaneRef, attemptId: string): string {
  return `${WAL_ROOT}${lane.stream}/${lane.partition}/${attemptId}/`;
}

/**
 * The WAL object of an attempt's batch: keyed by the attempt AND the batch's SHA-256, so
 * two different batches under one attempt id can never share (and overwrite) a key; the
 * intent's conditional create decides which one the attempt names.
 */
export function walKeyOf(lane: LaneRef, attemptId: string, sha256: string): string {
  return `${walPrefixOf(lane, attemptId)}${sha256}.wal`;
}

/** Generation root of a committed range (materialized by the generation-commit mechanism). */
export function rangeRootOf(lane: LaneRef, start: number): string {
  return `stream/${lane.stream}/p${lane.partition}/r${pad(start)}`;
}

/**
 * The WAL object's metadata is the attempt's exact evidence before (and without) any
 * authority item: the attempt, the full SHA-256, the record count, and the range it is
 * bound to — the fence epoch it was written under and the offset `start` it can only ever
 * commit at (a retry reads them back; a new offset is never guessed). GC decides from
 * these keys (`walFate`).
 */
export function walMetadataOf(
  lane: LaneRef,
  attemptId: string,
  sha256: string,
  recordCount: number,
  binding: { fenceEpoch: number; start: number },
): Record<string, string> & { sha256: string } {
  return {
    sha256,
    stream: lane.stream,
    partition: String(lane.partition),
    'attempt-id': attemptId,
    'record-count': String(recordCount),
    'fence-epoch': String(binding.fenceEpoch),
    start: String(binding.start),
  };
}

/** A WAL object's binding as its metadata names it (undefined for objects that name none). */
export interface WalBinding {
  attemptId: string;
  walSha256: string;
  recordCount: number;
  fenceEpoch: number;
  start: number;
}

export function walBindingOf(metadata: Record<string, string>): WalBinding | undefined {
  const ints = ['record-count', 'fence-epoch', 'start'].map((k) => Number(metadata[k]));
  if (!metadata['attempt-id'] || !metadata.sha256 || ints.some((n) => !Number.isSafeInteger(n) || n < 0)) return undefined;
  const [recordCount, fenceEpoch, start] = ints as [number, number, number];
  return { attemptId: metadata['attempt-id'], walSha256: metadata.sha256, recordCount, fenceEpoch, start };
}

export type WalFate = 'COMMITTED' | 'DEAD' | 'MAY_COMMIT';

/**
 * What a WAL object is, from its metadata, the lane head and the commit record at the
 * end offset its binding names (`commit#<start + record-count>`, if any). Pure; GC calls it.
 * - COMMITTED: that commit record names this attempt and SHA-256 (the object is live).
 * - DEAD: it can never commit — written under an older fence epoch (the head CAS requires
 *   the head's fence), or bound to a start the committed end has already passed (the CAS
 *   requires committedEnd = start, and the committed end never goes back).
 * - MAY_COMMIT: anything else (bound at or past the committed end under the current
 *   epoch): an append may still be in flight; keep it. Metadata without a binding is
 *   MAY_COMMIT too — never delete what cannot be judged.
 */
export function walFate(
  metadata: Record<string, string>,
  head: Pick<LaneHead, 'committedEnd' | 'fence'>,
  commitAtEnd: Pick<CommitRecord, 'attemptId' | 'walSha256' | 'start'> | undefined,
): WalFate {
  const binding = walBindingOf(metadata);
  if (!binding) return 'MAY_COMMIT';
  if (commitAtEnd && commitAtEnd.attemptId === binding.attemptId && commitAtEnd.walSha256 === binding.walSha256 && commitAtEnd.start === binding.start) {
    return 'COMMITTED';
  }
  if (head.fence && binding.fenceEpoch < head.fence.epoch) return 'DEAD';
  if (binding.start < head.committedEnd) return 'DEAD';
  return 'MAY_COMMIT';
}

export function sameFence(a: Fence | undefined, b: Fence | undefined): boolean {
  return !!a && !!b && a.owner === b.owner && a.session === b.session && a.epoch === b.epoch;
}

import { randomUUID } from 'node:crypto';
import { sha256Hex } from '../../domain/digest.js';
import { durationSeconds } from '../../domain/duration.js';
import { CutpointError, ValidationError } from '../../domain/errors.js';
import { WAL_ROOT, validateLane, type LaneRef } from '../../domain/stream.js';

/**
 * Stream GC (docs/rules.md#gc): one lifecycle root per
 * physical object key, in the authority, created lazily by the scanner (never on the
 * append's acknowledged path). Its lifecycle epoch counts the lives of the key: a late
 * object under a DELETED key gets epoch + 1, ACTIVE, and a fresh orphan grace.
 *   ACTIVE → MARKED → DELETING (the root seals its delete journal) → DELETED
 * every move a conditional write on the root's version at a named cut point.
 */
export type RootState = 'ACTIVE' | 'MARKED' | 'DELETING' | 'DELETED';

/** What the authority proves about an object (see liveness.ts). */
export type Fate = 'LIVE' | 'TRIMMED' | 'DEAD' | 'SUPERSEDED' | 'MAY_COMMIT';

/** The sealed delete journal: exactly which bytes a delete id removes. */
export interface DeleteJournal {
  deleteId: string;
  objectKey: string;
  epoch: number;
  /** As HEAD saw it when sealing; `absent` when the object was already gone. */
  size: number;
  sha256: string;
  absent: boolean;
  policyDigest: string;
  sealedAt: string;
  /**
   * When this journal's one DELETE went out (recorded before it is sent). An object with the
   * journal's identity still under the key after that cannot be told from an identical late
   * object: it is never deleted under this epoch (the root closes; the scanner renews it).
   */
  sentAt?: string;
}

export interface LifecycleRoot extends LaneRef {
  pk: string;
  sk: string;
  objectKey: string;
  epoch: number;
  state: RootState;
  /** When this epoch's object was first seen: orphan grace runs from here. */
  firstSeen: string;
  /** The fate the last scan found and the grace deadline it computed (for describe). */
  fate?: Fate;
  graceDeadline?: string;
  markedAt?: string;
  policyDigest?: string;
  journal?: DeleteJournal;
  deletedAt?: string;
  /**
   * The delete found an object under the key it may not delete under this epoch — another
   * identity, or the journal's identity after its DELETE went out (an identical late object):
   * it was left alone, and the next scan gives it a new epoch and a fresh grace.
   */
  lateObject?: boolean;
  /** The id of the last move, compared exactly when its response was lost. */
  moveId: string;
  version: number;
}

export interface Lease extends LaneRef {
  pk: string;
  sk: string;
  objectKey: string;
  leaseId: string;
  expiresAt: string;
  version: number;
}

const pad = (n: number) => String(n).padStart(16, '0');

/** GC items live beside (not inside) the lane's own partition: one partition per lane. */
export const gcKeys = {
  pk: (lane: LaneRef) => `gc#${lane.stream}/${lane.partition}`,
  root: (lane: LaneRef, objectKey: string) => ({ pk: gcKeys.pk(lane), sk: `root#${objectKey}` }),
  rootAfter: (objectKey: string) => `root#${objectKey}`,
  lease: (lane: LaneRef, objectKey: string, leaseId: string) => ({
    pk: gcKeys.pk(lane),
    sk: `lease#${objectKey}#${leaseId}`,
  }),
};

/** Where stream GC may delete: WAL objects and stream generations (the GC Delete role is limited to these). */
export const STREAM_GENERATIONS_ROOT = 'generations/stream/';
export const GC_OBJECT_ROOTS = [WAL_ROOT, STREAM_GENERATIONS_ROOT] as const;

/** The bucket prefixes that hold one lane's objects: its WAL objects and its generations. */
export function lanePrefixes(lane: LaneRef): string[] {
  return [
    `${WAL_ROOT}${lane.stream}/${lane.partition}/`,
    `${STREAM_GENERATIONS_ROOT}${lane.stream}/p${lane.partition}/`,
  ];
}

export const newMoveId = () => randomUUID();

/** The GC policy of one run: the orphan grace and the prefixes it may collect. */
export interface GcPolicy {
  graceSeconds: number;
  prefixes: string[];
}

export const DEFAULT_GRACE_SECONDS = 24 * 3600;
export const MAX_GRACE_SECONDS = 90 * 24 * 3600;

const invalidGrace = () =>
  new ValidationError(
    'stream.invalid_grace',
    `grace must be a duration with its unit, like 30s, 10m, 6h or 2d (no spaces), at most ${MAX_GRACE_SECONDS / 86400}d`,
  );

/**
 * An operator's grace (`--grace`, a flow input's `grace`, CUTPOINT_GC_GRACE): `30s`, `10m`,
 * `6h`, `2d` → seconds. The unit is required and nothing is trimmed: `12` (seconds? days?)
 * and `1h ` are refused, never guessed.
 */
export function parseGrace(value: unknown): number {
  const seconds = durationSeconds(value);
  if (seconds === undefined) throw invalidGrace();
  return graceSeconds(seconds);
}

/** A grace already in seconds (a run's sealed policy), validated. */
export function graceSeconds(value: unknown): number {
  if (!Number.isSafeInteger(value) || (value as number) < 0 || (value as number) > MAX_GRACE_SECONDS)
    throw invalidGrace();
  return value as number;
}

/** The configured default grace (CUTPOINT_GC_GRACE), validated; unset or empty: the default. */
export function graceFromEnv(env: NodeJS.ProcessEnv): number {
  const raw = env.CUTPOINT_GC_GRACE;
  return raw === undefined || raw === '' ? DEFAULT_GRACE_SECONDS : parseGrace(raw);
}

/** The policy digest every journal and root records, and every recovery compares. */
export function policyDigestOf(policy: GcPolicy): string {
  return sha256Hex(JSON.stringify({ graceSeconds: policy.graceSeconds, prefixes: [...policy.prefixes].sort() }));
}

export function validateGcLane(input: unknown): LaneRef {
  return validateLane(input);
}

export function graceDeadlineOf(firstSeen: string, graceSeconds: number): Date {
  return new Date(Date.parse(firstSeen) + graceSeconds * 1000);
}

/** A reader asked for an object GC has marked or deleted, and the range has no surviving copy. */
export class ObjectReclaimedError extends CutpointError {
  constructor(lane: LaneRef, keys: string[]) {
    super(
      'Stream.ObjectReclaimed',
      'stream.object_reclaimed',
      `lane ${lane.stream}/${lane.partition}: ${keys.join(', ')} ${keys.length === 1 ? 'is' : 'are'} being collected and no other copy is pinned; read again`,
    );
  }
}

export { pad as padOffset };

/**
 * A read outlived its lease on a copy (it stalled past the expiry, and GC may have retired
 * the lease and collected the copy since): the read fails as a whole rather than take a
 * collected copy for a missing or corrupt one (quarantine) or skip it. Reading again pins afresh.
 */
export class LeaseExpiredError extends CutpointError {
  constructor(lane: LaneRef, key: string, expiresAt: string) {
    super(
      'Stream.LeaseExpired',
      'stream.lease_expired',
      `lane ${lane.stream}/${lane.partition}: the read's lease on ${key} expired at ${expiresAt} before the read finished; read again`,
    );
  }
}

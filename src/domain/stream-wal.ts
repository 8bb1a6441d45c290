/**
 * The WAL objects of the stream log (docs/rules.md#stream-log): where they live, the metadata that binds a
 * batch to its attempt, checksum, fence epoch and start offset, and what that binding says
 * about the batch's fate (GC's liveness rule).
 */
import type { CommitRecord, LaneHead, LaneRef } from './stream.js';
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
 * The WAL objects of every attempt whose id starts with `attemptPrefix` (a LaneWriter's
 * `w<writer>.`): one LIST finds a writer's attempts.
 */
export function walPrefixOfAttempts(lane: LaneRef, attemptPrefix: string): string {
  return `${WAL_ROOT}${lane.stream}/${lane.partition}/${attemptPrefix}`;
}

/**
 * The WAL object of an attempt's batch: keyed by the attempt AND the batch's SHA-256, so
 * two different batches under one attempt id can never share (and overwrite) a key; the
 * intent's conditional create decides which one the attempt names.
 */
export function walKeyOf(lane: LaneRef, attemptId: string, sha256: string): string {
  return `${walPrefixOf(lane, attemptId)}${sha256}.wal`;
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
  if (!metadata['attempt-id'] || !metadata.sha256 || ints.some((n) => !Number.isSafeInteger(n) || n < 0))
    return undefined;
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
  if (
    commitAtEnd &&
    commitAtEnd.attemptId === binding.attemptId &&
    commitAtEnd.walSha256 === binding.walSha256 &&
    commitAtEnd.start === binding.start
  ) {
    return 'COMMITTED';
  }
  if (head.fence && binding.fenceEpoch < head.fence.epoch) return 'DEAD';
  if (binding.start < head.committedEnd) return 'DEAD';
  return 'MAY_COMMIT';
}

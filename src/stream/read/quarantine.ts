import { writeExactlyOnce } from '../../authority/resolve.js';
import { CutpointError } from '../../domain/errors.js';
import { laneKeys, type IndexEntry, type LaneRef } from '../../domain/stream.js';
import { OffsetTrimmedError } from '../../domain/stream-errors.js';
import type { AuthorityItem } from '../../ports/authority.js';
import type { Ports } from '../../ports/index.js';
import { STREAM_CUT_POINTS } from '../cut-points.js';
import { loadHead } from '../lane-store.js';

/** One same-view copy of a committed range: an exact object identity (key, checksum, size when known). */
export interface Candidate {
  copy: 'gen0' | 'wal' | 'compacted';
  key: string;
  sha256: string;
  size?: number;
}

export type QuarantineReason = 'missing' | 'checksum_mismatch' | 'malformed' | 'record_count_mismatch';

/**
 * A quarantine item: the exact physical identity that was judged bad (key, expected
 * SHA-256, size when known), which copy of which range it is, why, and when.
 */
export interface QuarantineRecord {
  objectKey: string;
  expectedSha256: string;
  expectedSize?: number;
  copy: Candidate['copy'];
  start: number;
  end: number;
  reason: string;
  at: string;
}

export type QuarantineItem = AuthorityItem & QuarantineRecord;

/** Quarantine items loaded per page (a reader loads one page per call; the list pages on). */
export const QUARANTINE_PAGE = 1000;

/** The lane's quarantine items, one page after `startAfterKey`. */
export async function quarantineItems(
  ports: Ports,
  lane: LaneRef,
  options: { limit?: number; startAfterKey?: string } = {},
): Promise<QuarantineItem[]> {
  const startAfterSk =
    options.startAfterKey === undefined ? undefined : laneKeys.quarantine(lane, options.startAfterKey).sk;
  const items = await ports.authority.query(laneKeys.pk(lane), 'quarantine#', {
    limit: options.limit ?? QUARANTINE_PAGE,
    ...(startAfterSk ? { startAfterSk } : {}),
  });
  return items as QuarantineItem[];
}

/**
 * Records a verified-bad copy by exact identity, put-if-absent. Before that, the trim is
 * revalidated: bytes below a trim that moved during this read may be gone legitimately
 * (GC), which makes the read trimmed (from `from`), not the copy bad. Returns the item
 * when this identity is (now) quarantined; undefined when the key is quarantined under
 * another identity (left as it is; this copy is not served either way).
 */
export async function recordQuarantine(
  ports: Ports,
  lane: LaneRef,
  from: number,
  entry: Pick<IndexEntry, 'start' | 'end'>,
  candidate: Pick<Candidate, 'copy' | 'key' | 'sha256' | 'size'>,
  reason: QuarantineReason,
): Promise<QuarantineItem | undefined> {
  const head = await loadHead(ports, lane);
  if (head.trimOffset > from) throw new OffsetTrimmedError(from, head.trimOffset);
  const cut = STREAM_CUT_POINTS.quarantine;
  const key = laneKeys.quarantine(lane, candidate.key);
  const record: QuarantineRecord = {
    objectKey: candidate.key,
    expectedSha256: candidate.sha256,
    ...(candidate.size === undefined ? {} : { expectedSize: candidate.size }),
    copy: candidate.copy,
    start: entry.start,
    end: entry.end,
    reason,
    at: ports.clock.now().toISOString(),
  };
  const outcome = await writeExactlyOnce(
    ports.authority,
    cut,
    key,
    () => ports.authority.put(cut, { ...key, stream: lane.stream, partition: lane.partition, ...record }, 'absent'),
    (current) => current.objectKey === candidate.key && current.expectedSha256 === candidate.sha256,
  );
  return outcome.status === 'APPLIED' ? (outcome.item as QuarantineItem) : undefined;
}

/** Release refused: the copy still does not verify against its exact identity. The item stays. */
export class QuarantineStillBadError extends CutpointError {
  constructor(lane: LaneRef, objectKey: string, detail: string) {
    super(
      'Stream.QuarantineStillBad',
      'stream.quarantine_still_bad',
      `${lane.stream}/${lane.partition}: ${objectKey} is still bad (${detail}); the quarantine item stays`,
    );
  }
}

/** Release refused: the quarantine item's identity is not what the authority evidence says the copy is. */
export class QuarantineIdentityMismatchError extends CutpointError {
  constructor(lane: LaneRef, objectKey: string, detail: string) {
    super(
      'Stream.QuarantineIdentityMismatch',
      'stream.quarantine_identity_mismatch',
      `${lane.stream}/${lane.partition}: ${objectKey} is not the copy the commit evidence names (${detail}); the quarantine item stays`,
    );
  }
}

export class QuarantineNotFoundError extends CutpointError {
  constructor(lane: LaneRef, objectKey: string) {
    super(
      'Stream.QuarantineNotFound',
      'stream.quarantine_not_found',
      `${lane.stream}/${lane.partition}: no quarantine item for ${objectKey}`,
    );
  }
}

import { IdentityConflictError } from '../../domain/errors.js';
import { laneKeys, type AppendOutcome, type IndexEntry, type LaneRef } from '../../domain/stream.js';
import { writeExactlyOnce } from '../../authority/resolve.js';
import type { Ports } from '../../ports/index.js';
import { validateAttempt } from '../append-input.js';
import { STREAM_CUT_POINTS } from '../cut-points.js';
import { indexEntryOf } from '../lane-store.js';
import { commitOfAttempt } from './attempt-evidence.js';

/**
 * A repair after KNOWN_COMMITTED (off the acknowledged path: stream-resolve-append, and
 * readers): the read-path index entry for the committed range, derived from its commit
 * record (the index is derived data, the commit record is the evidence).
 */
export async function writeIndex(input: unknown, ports: Ports): Promise<AppendOutcome> {
  const ref = validateAttempt(input);
  const commit = await commitOfAttempt(ports, ref, ref.attemptId);
  const entry = indexEntryOf(commit);
  await putIndexEntry(ports, ref, entry, STREAM_CUT_POINTS.index);
  return {
    status: 'KNOWN_COMMITTED',
    ...ref,
    attemptId: ref.attemptId,
    recordCount: commit.end - commit.start,
    start: entry.start,
    end: entry.end,
  };
}

/** Creates the index entry for a committed range once; an existing exact entry is reused. */
export async function putIndexEntry(
  ports: Ports,
  lane: LaneRef,
  entry: IndexEntry,
  cutPoint: string,
): Promise<IndexEntry> {
  const key = laneKeys.index(lane, entry.end);
  const result = await writeExactlyOnce(
    ports.authority,
    cutPoint,
    key,
    () => ports.authority.put(cutPoint, { ...key, ...entry }, 'absent'),
    (item) => item.start === entry.start && item.walKey === entry.walKey && item.walSha256 === entry.walSha256,
  );
  if (result.status === 'CONFLICT') {
    throw new IdentityConflictError(
      'stream.index_identity_conflict',
      `index entry for [${entry.start}, ${entry.end}) names another WAL object`,
    );
  }
  return result.item as unknown as IndexEntry;
}

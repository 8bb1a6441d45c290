import { outputKeyOf, sourceSetDigest } from '../../domain/generation.js';
import { CutpointError } from '../../domain/errors.js';
import { laneKeys, rangeRootOf, type CommitRecord, type IndexEntry, type LaneRef } from '../../domain/stream.js';
import { loadRecord } from '../../generation/load.js';
import type { Ports } from '../../ports/index.js';
import { putIndexEntry } from '../append/write-index.js';
import { compactionKeys, compactionRootOf, sourcesOf, type CompactionRecord } from '../compaction/model.js';
import { STREAM_CUT_POINTS } from '../cut-points.js';
import { commitContaining, indexEntryOf } from '../lane-store.js';

/**
 * An offset below the committed end that no commit record covers: the head and the
 * commit chain disagree. Never EOF, never a skip: a person has to look at the lane.
 */
export class ChainBrokenError extends CutpointError {
  constructor(lane: LaneRef, offset: number, committedEnd: number) {
    super(
      'Stream.ChainBroken',
      'stream.chain_broken',
      `lane ${lane.stream}/${lane.partition}: offset ${offset} is below the committed end ${committedEnd} but no commit record covers it`,
    );
  }
}

/**
 * Generation 0 of a committed range, proven from authority evidence alone: slot 0 of the
 * range's root is COMMITTED by the task the append ran for this exact attempt, over
 * exactly this WAL object (same key, checksum and size, by source-set digest). "Some
 * generation exists under the root" is not evidence.
 */
export async function committedGen0(
  ports: Ports,
  lane: LaneRef,
  commit: CommitRecord,
): Promise<{ key: string; sha256: string; size: number } | undefined> {
  const root = rangeRootOf(lane, commit.start);
  const record = await loadRecord(ports, root, 0);
  if (record?.state !== 'COMMITTED') return undefined;
  const exact =
    record.taskId === commit.attemptId &&
    record.objectKey === outputKeyOf({ root, generation: 0, taskId: commit.attemptId }) &&
    record.sourceSetDigest ===
      sourceSetDigest([{ key: commit.walKey, sha256: commit.walSha256, size: commit.walSize }]);
  return exact ? { key: record.objectKey, sha256: record.sha256, size: record.size } : undefined;
}

/** Commit records fetched per query while re-deriving a compaction's source set. */
const COMMIT_PAGE = 100;

/**
 * The compacted copy of exactly [start, end), proven from authority evidence alone: the
 * `compaction#<end>` record of exactly that run (its root, record count), its generation
 * COMMITTED by the record's task naming the same object key, SHA-256, size and source-set
 * digest, and that digest re-derived from the lane's commit records of the run (their WAL
 * objects by exact identity, in offset order). "A compaction covering it" is not evidence.
 */
export async function committedCompaction(
  ports: Ports,
  lane: LaneRef,
  start: number,
  end: number,
): Promise<{ key: string; sha256: string; size: number } | undefined> {
  const record = (await ports.authority.get(compactionKeys.record(lane, end))) as unknown as
    CompactionRecord | undefined;
  if (
    !record ||
    record.start !== start ||
    record.end !== end ||
    record.recordCount !== end - start ||
    record.root !== compactionRootOf(lane, start)
  )
    return undefined;
  const generation = await loadRecord(ports, record.root, record.generation);
  const exact =
    generation?.state === 'COMMITTED' &&
    generation.taskId === record.taskId &&
    generation.objectKey === record.objectKey &&
    generation.objectKey === outputKeyOf({ root: record.root, generation: record.generation, taskId: record.taskId }) &&
    generation.sha256 === record.sha256 &&
    generation.size === record.size &&
    generation.sourceSetDigest === record.sourceSetDigest;
  if (!exact) return undefined;
  const commits = await commitsOfRun(ports, lane, start, end);
  if (!commits || sourceSetDigest(sourcesOf(commits)) !== record.sourceSetDigest) return undefined;
  return { key: generation.objectKey, sha256: generation.sha256, size: generation.size };
}

/** The consecutive commit records tiling exactly [start, end), or undefined when they do not. */
async function commitsOfRun(
  ports: Ports,
  lane: LaneRef,
  start: number,
  end: number,
): Promise<CommitRecord[] | undefined> {
  const commits: CommitRecord[] = [];
  let at = start;
  while (at < end) {
    const page = (await ports.authority.query(laneKeys.pk(lane), 'commit#', {
      startAfterSk: laneKeys.commitAfter(at),
      limit: COMMIT_PAGE,
    })) as unknown as CommitRecord[];
    if (page.length === 0) return undefined;
    for (const commit of page) {
      if (commit.start !== at || commit.end > end) return undefined;
      commits.push(commit);
      at = commit.end;
      if (at === end) break;
    }
  }
  return commits;
}

/** The commit record of exactly the range an index entry names, if the two agree. */
export async function commitOfEntry(ports: Ports, lane: LaneRef, entry: IndexEntry): Promise<CommitRecord | undefined> {
  const commit = (await ports.authority.get(laneKeys.commit(lane, entry.end))) as unknown as CommitRecord | undefined;
  const agrees =
    commit && commit.start === entry.start && commit.walKey === entry.walKey && commit.walSha256 === entry.walSha256;
  return agrees ? commit : undefined;
}

/**
 * Rebuilds the missing index entry for the committed range containing `offset` from its
 * commit record (docs/rules.md#append-cut-points: head committed, index missing → repair
 * the index from the reachable commit evidence). The entry names the WAL object, and generation
 * 0 when the commit evidence proves it, so the repaired range keeps both same-view copies. The
 * write is put-if-absent by exact identity (a racing writer's identical entry is reused).
 */
export async function repairIndexEntry(
  ports: Ports,
  lane: LaneRef,
  offset: number,
  committedEnd: number,
): Promise<IndexEntry> {
  const commit = await commitContaining(ports, lane, offset);
  if (!commit) throw new ChainBrokenError(lane, offset, committedEnd);
  const gen0 = await committedGen0(ports, lane, commit);
  const entry: IndexEntry = {
    ...indexEntryOf(commit),
    ...(gen0 ? { gen0Key: gen0.key, gen0Sha256: gen0.sha256 } : {}),
  };
  return putIndexEntry(ports, lane, entry, STREAM_CUT_POINTS.indexRepair);
}

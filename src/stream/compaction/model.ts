import type { RootHead } from '../../domain/generation.js';
import { sourceSetDigest, type SourceRef } from '../../domain/generation.js';
import { laneKeys, type CommitRecord, type LaneRef } from '../../domain/stream.js';

/**
 * Stream compaction (issue #11): a run of consecutive committed ranges is rewritten into
 * ONE generation object (one record batch) through the generation-commit mechanism. Its
 * root comes from the run's start and its task id from the source-set digest, so a re-run
 * reuses the same task and output. `compaction#<end>` is the authority: it names the
 * range, the committed generation and the source-set digest.
 */
export interface CompactionRecord extends LaneRef, RootHead {
  start: number;
  end: number;
  recordCount: number;
  sourceSetDigest: string;
  compactedAt: string;
}

const pad = (n: number) => String(n).padStart(16, '0');

export const compactionKeys = {
  /** Keyed by end offset: the first compaction whose end > x is the one that may contain x. */
  record: (lane: LaneRef, end: number) => ({ pk: laneKeys.pk(lane), sk: `compaction#${pad(end)}` }),
  after: (offset: number) => `compaction#${pad(offset)}`,
  mark: (lane: LaneRef) => ({ pk: laneKeys.pk(lane), sk: 'compact#mark' }),
};

/** The generation root of a run starting at `start` (GC's range-root parser does not match `c…`). */
export function compactionRootOf(lane: LaneRef, start: number): string {
  return `stream/${lane.stream}/p${lane.partition}/c${pad(start)}`;
}

/** The sources of a run: its ranges' WAL objects, by exact identity, in offset order. */
export function sourcesOf(commits: readonly CommitRecord[]): SourceRef[] {
  return commits.map((c) => ({ key: c.walKey, sha256: c.walSha256, size: c.walSize }));
}

/** Deterministic from the source set (and the slot), so a re-run registers the same task. */
export function compactionTaskId(sources: readonly SourceRef[], generation: number): string {
  return `c${generation}-${sourceSetDigest(sources).slice(0, 32)}`;
}

/** Same run, same generation: every identity field of the record. */
export function sameCompaction(a: CompactionRecord, b: CompactionRecord): boolean {
  return (
    a.stream === b.stream &&
    a.partition === b.partition &&
    a.start === b.start &&
    a.end === b.end &&
    a.root === b.root &&
    a.generation === b.generation &&
    a.taskId === b.taskId &&
    a.objectKey === b.objectKey &&
    a.sha256 === b.sha256 &&
    a.sourceSetDigest === b.sourceSetDigest
  );
}

/** The committed compaction whose range holds [start, end), if any. */
export async function compactionCovering(
  query: (pk: string, prefix: string, o: { startAfterSk: string; limit: number }) => Promise<unknown[]>,
  lane: LaneRef,
  start: number,
  end: number,
): Promise<CompactionRecord | undefined> {
  const [found] = (await query(laneKeys.pk(lane), 'compaction#', {
    startAfterSk: compactionKeys.after(start),
    limit: 1,
  })) as CompactionRecord[];
  return found && found.start <= start && end <= found.end ? found : undefined;
}

import { generationKeys, type GenerationTask, type SourceRef } from '../../domain/generation.js';
import { laneKeys, type CommitRecord, type LaneRef } from '../../domain/stream.js';
import type { Ports } from '../../ports/index.js';
import { loadHead } from '../lane-store.js';
import { compactionKeys, compactionRootOf, compactionTaskId, sourcesOf } from './model.js';

/** What one compaction run will do: the ranges, and the exact generation task that compacts them. */
export interface CompactionPlan {
  start: number;
  end: number;
  commits: CommitRecord[];
  spec: { root: string; generation: number; taskId: string; sources: SourceRef[] };
  markVersion?: number;
}

export const DEFAULT_MAX_RANGES = 16;
/** The most ranges one compaction run may be asked to take (`--max-ranges`, the flow's `maxRanges`). */
export const MAX_RANGES_PER_RUN = 1000;
/** Below one batch's limit (6 MiB): the output is one record batch. */
export const DEFAULT_MAX_BYTES = 4 * 1024 * 1024;

/**
 * The next run: consecutive committed ranges from max(compact#mark, trim), at most
 * `maxRanges` and `maxBytes` (WAL bytes), at least two. If a task is already registered
 * under the run's root (an earlier run failed or lost an answer), its exact source set is
 * reused whatever the knobs say now: the same task, the same output, never a second one.
 */
export async function planCompaction(
  ports: Ports,
  lane: LaneRef,
  maxRanges: number,
  maxBytes: number,
): Promise<CompactionPlan | undefined> {
  const [head, mark] = await Promise.all([loadHead(ports, lane), ports.authority.get(compactionKeys.mark(lane))]);
  let begin = Math.max(typeof mark?.next === 'number' ? mark.next : 0, head.trimOffset);
  const markVersion = mark?.version as number | undefined;
  const page = (await ports.authority.query(laneKeys.pk(lane), 'commit#', {
    startAfterSk: laneKeys.commitAfter(begin),
    limit: Math.max(maxRanges, 64) + 1,
  })) as unknown as CommitRecord[];
  // A range straddling the trim is not compacted: start after it.
  while (page[0] && page[0].start < begin) begin = page.shift()!.end;
  if (!page[0] || page[0].start !== begin) return undefined;

  const root = compactionRootOf(lane, begin);
  const tasks = (await ports.authority.query(generationKeys.task(root, '').pk, 'task#')) as unknown as GenerationTask[];
  const live = tasks.find((t) => t.state !== 'ABORTED');
  if (live) {
    const commits = page.filter((c) => live.sources.some((s) => s.key === c.walKey && s.sha256 === c.walSha256));
    if (commits.length !== live.sources.length) return undefined; // not this lane's next run any more (trimmed past)
    const end = commits.at(-1)?.end ?? begin;
    return {
      start: begin,
      end,
      commits,
      spec: { root, generation: live.generation, taskId: live.taskId, sources: live.sources },
      markVersion,
    };
  }
  const commits: CommitRecord[] = [];
  let bytes = 0;
  for (const c of page) {
    if (commits.length >= maxRanges || (commits.length > 0 && bytes + c.walSize > maxBytes)) break;
    if (c.start !== (commits.at(-1)?.end ?? begin)) break;
    commits.push(c);
    bytes += c.walSize;
  }
  if (commits.length < 2) return undefined;
  const sources = sourcesOf(commits);
  const generation = tasks.length; // every earlier task of this root was aborted: the next slot
  return {
    start: begin,
    end: commits.at(-1)!.end,
    commits,
    spec: { root, generation, taskId: compactionTaskId(sources, generation), sources },
    markVersion,
  };
}

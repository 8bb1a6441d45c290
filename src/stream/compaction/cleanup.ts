import { laneKeys, type LaneRef } from '../../domain/stream.js';
import { cleanupGenerationTask, type TaskCleanup } from '../../generation/cleanup-task.js';
import type { Ports } from '../../ports/index.js';
import { CLEANUP_LIMIT, cleanupUpToMark, type CursorCleanup } from '../cleanup-cursor.js';
import { gcProtections } from '../gc/protections.js';
import { COMPACTION_CUT_POINTS } from './cut-points.js';
import { compactionKeys, sameCompaction, type CompactionRecord } from './model.js';

/**
 * A compaction's task cleanup: the one task cleanup (src/generation/cleanup-task.ts) with
 * the compaction's checkpoint — `compaction#<end>` naming exactly this run and the mark past
 * it — its output read whole against the full SHA-256, and GC not collecting the output
 * (gc/protections.ts). The compaction has no separate plan item (the plan is recomputed from
 * the durable task and commit records), so there is no plan step to clean.
 * Anything unverified refuses and leaves the task in place.
 */
export async function cleanupCompactionTask(
  ports: Ports,
  lane: LaneRef,
  expected: CompactionRecord,
): Promise<TaskCleanup> {
  return cleanupGenerationTask(ports, COMPACTION_CUT_POINTS.compactCleanup, {
    root: expected.root,
    generation: expected.generation,
    taskId: expected.taskId,
    expected: { objectKey: expected.objectKey, sha256: expected.sha256, sourceSetDigest: expected.sourceSetDigest },
    checkpoint: async () => {
      const [compaction, mark] = await Promise.all([
        ports.authority.get(compactionKeys.record(lane, expected.end)),
        ports.authority.get(compactionKeys.mark(lane)),
      ]);
      if (!compaction || !sameCompaction(compaction as unknown as CompactionRecord, expected))
        return `compaction#${expected.end} does not name this run`;
      return typeof mark?.next === 'number' && mark.next >= expected.end
        ? undefined
        : `the compaction mark is not past ${expected.end}`;
    },
    protections: gcProtections(lane, expected.objectKey, expected.end, false),
    output: 'bytes',
  });
}

/**
 * The tasks of every compaction below the mark, from the mark's cleanup cursor (task-first,
 * plan-second: src/stream/cleanup-cursor.ts): a run whose cleanup failed or was refused
 * leaves its task, and a later run — whatever it compacts — finds it again from the cursor.
 * A failure here (a crash, a lost answer) only leaves the tasks for the next run.
 */
export async function cleanupCompactionTasks(ports: Ports, lane: LaneRef): Promise<CursorCleanup> {
  return cleanupUpToMark(ports, COMPACTION_CUT_POINTS.compactMark, compactionKeys.mark(lane), async (from) => {
    const records = (await ports.authority.query(laneKeys.pk(lane), 'compaction#', {
      startAfterSk: compactionKeys.after(from),
      limit: CLEANUP_LIMIT,
    })) as unknown as CompactionRecord[];
    return records.map((record) => ({ end: record.end, clean: () => cleanupCompactionTask(ports, lane, record) }));
  });
}

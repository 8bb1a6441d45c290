import { outputKeyOf } from '../../domain/generation.js';
import { laneKeys, rangeRootOf, type CommitRecord, type LaneRef } from '../../domain/stream.js';
import { cleanupGenerationTask } from '../../generation/cleanup-task.js';
import { GENERATION_CUT_POINTS } from '../../generation/cut-points.js';
import type { Ports } from '../../ports/index.js';
import { CLEANUP_LIMIT, cleanupUpToMark, type CursorCleanup } from '../cleanup-cursor.js';
import { STREAM_CUT_POINTS } from '../cut-points.js';
import { gcProtections } from '../gc/protections.js';

export const gen0MarkKey = (lane: LaneRef) => ({ pk: laneKeys.pk(lane), sk: 'gen0#mark' });

/**
 * Generation 0's task cleanup (src/generation/cleanup-task.ts), after a materialize run
 * moved the lane's `gen0#mark`: every committed range below the mark whose generation 0
 * task is still there — the task deterministic from the range (root `r<start>`, generation
 * 0, the attempt id) — is cleaned in offset order from the mark's `cleanedTo` (the cursor,
 * moved after: plan-second). The checkpoint is the mark past the range; the output is
 * checked by HEAD (its size, SHA-256 and task metadata: the commit verified the copied
 * bytes against the full SHA-256, and no byte passes through the worker); GC must not be
 * collecting it. A range skipped by the mark (below the trim, or compacted) has no task.
 */
export async function cleanupGen0Tasks(ports: Ports, lane: LaneRef): Promise<CursorCleanup> {
  return cleanupUpToMark(ports, STREAM_CUT_POINTS.gen0, gen0MarkKey(lane), async (from, next) => {
    const commits = (await ports.authority.query(laneKeys.pk(lane), 'commit#', {
      startAfterSk: laneKeys.commitAfter(from),
      limit: CLEANUP_LIMIT,
    })) as unknown as CommitRecord[];
    return commits.map((c) => {
      const root = rangeRootOf(lane, c.start);
      return {
        end: c.end,
        clean: () =>
          cleanupGenerationTask(ports, GENERATION_CUT_POINTS.taskCleanup, {
            root,
            generation: 0,
            taskId: c.attemptId,
            checkpoint: async () => (c.end <= next ? undefined : `gen0#mark is not past ${c.end}`),
            protections: gcProtections(lane, outputKeyOf({ root, generation: 0, taskId: c.attemptId }), c.end, true),
            output: 'identity',
          }),
      };
    });
  });
}

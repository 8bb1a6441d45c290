import { laneKeys, type LaneRef } from '../../domain/stream.js';
import type { Protections } from '../../generation/cleanup-task.js';
import { compactionKeys } from '../compaction/model.js';
import { gcKeys, type LifecycleRoot } from './model.js';

/**
 * A stream generation's protections for its task cleanup (src/generation/cleanup-task.ts):
 * GC must not be collecting the output. Its lifecycle root, read in the cleanup's snapshot,
 * is absent or ACTIVE (the output judged by its COMMITTED record, which outlives the task),
 * or DELETED (collected by rule: its bytes may be gone); MARKED or DELETING refuses — the
 * cleanup never races a collection in flight, and a later run finds the task again.
 * Where the output is collectible — its range, ending at `end`, below the trim, or (a
 * per-range copy, `supersedable`) a compaction past it — GC may have collected it and
 * retired its root (gc/retention.ts): an absent root then does not make the output's
 * absence a failed check. The head and the compaction mark are read in the same snapshot.
 */
export function gcProtections(lane: LaneRef, objectKey: string, end: number, supersedable: boolean): Protections {
  return {
    keys: [gcKeys.root(lane, objectKey), laneKeys.head(lane), compactionKeys.mark(lane)],
    judge([item, head, mark]) {
      const root = item as unknown as LifecycleRoot | undefined;
      const trimmed = typeof head?.trimOffset === 'number' && head.trimOffset >= end;
      const collectible = trimmed || (supersedable && typeof mark?.next === 'number' && mark.next >= end);
      if (root?.state === 'MARKED' || root?.state === 'DELETING')
        return { refused: `GC is collecting ${objectKey} (${root.state})` };
      return root?.state === 'DELETED' || (!root && collectible) ? { collected: true } : {};
    },
  };
}

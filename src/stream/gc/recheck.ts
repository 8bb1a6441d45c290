import type { Ports } from '../../ports/index.js';
import { loadHead } from '../lane-store.js';
import { eligible, fateContext, graceDeadline, judge } from './liveness.js';
import type { Fate, LifecycleRoot } from './model.js';
import type { GcRun } from './state.js';

/**
 * A sealed delete's preconditions, proven again just before its DELETE (docs/stream-log.md "The stream
 * log", GC): the head read now, the object judged afresh from the authority (liveness.ts),
 * and eligible under the run's policy — TRIMMED, or DEAD/SUPERSEDED past its grace. The
 * mark and the seal were decided a step (or a run) earlier; meanwhile a compaction that
 * superseded the copy may have been deleted, replaced or quarantined, and the copy is then
 * the only readable one again. A covering compaction is checked by identity here (record,
 * quarantine, HEAD), once per object: never a whole GET per DELETE.
 */
export async function collectibleNow(
  ports: Ports,
  run: GcRun,
  root: LifecycleRoot,
): Promise<{ collectible: boolean; fate: Fate }> {
  const ctx = fateContext(ports, run, await loadHead(ports, run), 'identity');
  const verdict = await judge(ctx, root.objectKey);
  const now = ports.clock.now();
  return {
    collectible: eligible(verdict.fate, now, graceDeadline(verdict, root.firstSeen, run.policy.graceSeconds)),
    fate: verdict.fate,
  };
}

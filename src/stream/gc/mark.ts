import type { Ports } from '../../ports/index.js';
import { GC_CUT_POINTS } from './cut-points.js';
import { gcKeys } from './model.js';
import { asRoot, moveRoot } from './roots.js';
import { eachOfPage, runOf, type GcRun } from './state.js';

/**
 * Mark: each candidate of the scanned page moves ACTIVE → MARKED by CAS on exactly the
 * version the scan decided on (its epoch unchanged), recording the policy digest. From
 * here the root accepts no new lease. A root moved meanwhile is left for the next run.
 * A lost response is resolved by the root's move id (see moveRoot).
 */
export async function markCandidates(input: unknown, ports: Ports): Promise<GcRun> {
  const run = runOf(input, 0);
  const markedAt = ports.clock.now().toISOString();
  await eachOfPage(run.candidates, async (candidate) => {
    const root = asRoot(await ports.authority.get(gcKeys.root(run, candidate.key)));
    if (!root) return;
    if (root.state === 'MARKED' && root.epoch === candidate.epoch && root.policyDigest === run.policyDigest) return;
    if (root.state !== 'ACTIVE' || root.version !== candidate.version || root.epoch !== candidate.epoch) return;
    if (await moveRoot(ports, GC_CUT_POINTS.mark, root, { state: 'MARKED', markedAt, policyDigest: run.policyDigest }))
      run.totals.marked++;
  });
  run.candidates = [];
  return run;
}

import { randomUUID } from 'node:crypto';
import type { Ports } from '../../ports/index.js';
import { loadHead } from '../lane-store.js';
import { GC_CUT_POINTS } from './cut-points.js';
import { eligible, fateContext, graceDeadline, judge } from './liveness.js';
import { gcKeys, type DeleteJournal, type LifecycleRoot } from './model.js';
import { sweepAttemptPage } from './attempt-retention.js';
import { drainLeasesOn, retirable, retireExact, sweepLeasePage } from './retention.js';
import { moveRoot } from './roots.js';
import { countPage, eachOfPage, PAGE, runOf, type GcRun } from './state.js';

/**
 * Drain and seal: one bounded page of the lane's roots, then (phase `leases`) of its
 * leases, then (phase `attempts`) of its attempt evidence.
 * - A MARKED root is re-proven from the authority first (a fresh decision: the mark is
 *   not trusted); if it no longer holds, it goes back to ACTIVE.
 * - Leases established before the mark must drain: while any is unreleased and unexpired
 *   the root waits (a later run continues). A MARKED root never accepts a new one.
 * - Then MARKED → DELETING seals the root's delete journal: a fresh delete id, the exact
 *   object identity as HEAD sees it (size, sha256), the lifecycle epoch and the policy digest.
 * - Every DELETING root of the page (sealed now or by an earlier run) goes to Delete: a
 *   DELETING root resumes from its sealed journal.
 * - A DELETED root one grace after its delete is retired, and once the roots are swept so
 *   are the lane's expired leases, from the roots' last page on (retention.ts), then the
 *   evidence of time-marked attempts past their window whose WAL objects are gone, from the
 *   leases' last page on (attempt-retention.ts): GC's own records stay bounded.
 */
export async function drainPage(input: unknown, ports: Ports): Promise<GcRun> {
  const run = runOf(input, 0);
  run.deleting = [];
  if (run.sweep.done) return run;
  if (run.sweep.phase === 'leases') {
    countPage(run);
    await sweepLeases(ports, run, run.sweep.after);
    return run;
  }
  if (run.sweep.phase === 'attempts') {
    countPage(run);
    await sweepAttempts(ports, run, run.sweep.after);
    return run;
  }
  const items = await ports.authority.query(gcKeys.pk(run), 'root#', {
    limit: PAGE,
    ...(run.sweep.after ? { startAfterSk: gcKeys.rootAfter(run.sweep.after) } : {}),
  });
  const roots = items as unknown as LifecycleRoot[];
  countPage(run);
  const ctx = fateContext(ports, run, await loadHead(ports, run));
  await eachOfPage(roots, async (root) => {
    if (root.state === 'MARKED') {
      const now = ports.clock.now();
      const verdict = await judge(ctx, root.objectKey);
      const { fate } = verdict;
      if (!eligible(fate, now, graceDeadline(verdict, root.firstSeen, run.policy.graceSeconds))) {
        if (await moveRoot(ports, GC_CUT_POINTS.mark, root, { state: 'ACTIVE', fate })) run.totals.unmarked++;
        return;
      }
      const leases = await drainLeasesOn(ports, run, root.objectKey, now);
      run.totals.retired.leases += leases.swept;
      if (leases.active > 0) {
        run.totals.waitingOnLeases++;
        return;
      }
      const sealed = await seal(ports, run, root, now);
      if (!sealed) return;
      root = sealed;
      run.totals.sealed++;
    }
    if (root.state === 'DELETING' && root.journal)
      run.deleting.push({ key: root.objectKey, epoch: root.epoch, deleteId: root.journal.deleteId });
    if (
      retirable(root, ports.clock.now(), run.policy.graceSeconds) &&
      (await retireExact(ports, { pk: root.pk, sk: root.sk }, root.version))
    )
      run.totals.retired.roots++;
  });
  const last = roots.at(-1)?.objectKey;
  if (roots.length === PAGE && last) run.sweep = { phase: 'roots', after: last, done: false };
  else await sweepLeases(ports, run, undefined); // the roots' last page: the leases' first page in the same step
  return run;
}

/** One page of the lane's leases: the expired ones retired, the sweep moved past them (the leases' last page: the attempts' first page in the same step). */
async function sweepLeases(ports: Ports, run: GcRun, after: string | undefined): Promise<void> {
  const page = await sweepLeasePage(ports, run, after);
  run.totals.retired.leases += page.swept;
  if (page.more && page.last) run.sweep = { phase: 'leases', after: page.last, done: false };
  else await sweepAttempts(ports, run, undefined);
}

/** One page of the lane's attempt evidence: what its window settled and its WAL objects left retired, the sweep moved past it. */
async function sweepAttempts(ports: Ports, run: GcRun, after: string | undefined): Promise<void> {
  const page = await sweepAttemptPage(ports, run, after);
  run.totals.retired.attempts += page.retired;
  run.sweep = page.next ? { phase: 'attempts', after: page.next, done: false } : { phase: 'attempts', done: true };
}

async function seal(ports: Ports, run: GcRun, root: LifecycleRoot, now: Date): Promise<LifecycleRoot | undefined> {
  const head = await ports.objects.head(root.objectKey);
  const journal: DeleteJournal = {
    deleteId: randomUUID(),
    objectKey: root.objectKey,
    epoch: root.epoch,
    size: head?.size ?? 0,
    sha256: head?.metadata.sha256 ?? '',
    absent: !head,
    policyDigest: run.policyDigest,
    sealedAt: now.toISOString(),
  };
  return moveRoot(ports, GC_CUT_POINTS.seal, root, { state: 'DELETING', journal, policyDigest: run.policyDigest });
}

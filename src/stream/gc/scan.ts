import { ConfigError } from '../../domain/errors.js';
import type { Ports } from '../../ports/index.js';
import { loadHead } from '../lane-store.js';
import { GC_CUT_POINTS } from './cut-points.js';
import { eligible, fateContext, graceDeadline, judge, type Verdict } from './liveness.js';
import { gcKeys, graceFromEnv, type LifecycleRoot } from './model.js';
import { asRoot, createRoot, moveRoot } from './roots.js';
import { countFate, countPage, DRY_RUN_SAMPLE, eachOfPage, PAGE, runOf, type GcRun } from './state.js';

/**
 * Scan: one bounded page of the bucket listing under the lane's prefixes. A FRESH scanner:
 * it rebuilds every decision from the authority and the listing, never from a previous
 * run's memory.
 * - A key with no root gets one (ACTIVE, epoch 1, first seen now): its orphan grace starts.
 * - A key whose root is DELETED is a late object: epoch + 1, ACTIVE, first seen now.
 * - An ACTIVE root whose fate is TRIMMED, DEAD past first-seen + grace, or SUPERSEDED past
 *   the compaction's commit + grace, is a candidate.
 * - Every scanned object is counted by fate (a compaction's output also under `compacted`).
 * - Each page counts against the execution's page budget (state.ts, countPage).
 * - A MARKED root whose evidence no longer holds under this policy goes back to ACTIVE.
 * A dry run writes nothing: it reports what it would mark.
 */
export async function scanPage(input: unknown, ports: Ports): Promise<GcRun> {
  const run = runOf(input, graceFromEnv(process.env));
  const lane = { stream: run.stream, partition: run.partition };
  const head = await loadHead(ports, lane);
  run.candidates = [];
  if (run.scan.done) return run;
  if (!ports.objects.listPage)
    throw new ConfigError('stream.gc_listing_unsupported', 'the object store cannot list in bounded pages');
  const prefix = run.policy.prefixes[run.scan.prefix]!;
  const page = await ports.objects.listPage(prefix, {
    ...(run.scan.after ? { startAfter: run.scan.after } : {}),
    limit: PAGE,
  });
  countPage(run);
  const roots = await Promise.all(page.objects.map((o) => ports.authority.get(gcKeys.root(lane, o.key)).then(asRoot)));
  const ctx = fateContext(ports, lane, head);
  const now = ports.clock.now();
  await eachOfPage(page.objects, async (object, i) => {
    run.totals.scanned++;
    const verdict = await judge(ctx, object.key);
    const { fate } = verdict;
    countFate(run.totals, fate, verdict.compacted === true);
    let root = roots[i];
    if (run.dryRun) {
      const firstSeen = root && root.state !== 'DELETED' ? root.firstSeen : now.toISOString();
      const canMark =
        (!root || root.state === 'ACTIVE' || root.state === 'DELETED') &&
        eligible(fate, now, graceDeadline(verdict, firstSeen, run.policy.graceSeconds));
      if (canMark && run.wouldMark.length < DRY_RUN_SAMPLE) run.wouldMark.push(object.key);
      return;
    }
    root = await ensureRoot(ports, run, object.key, root, verdict, now);
    if (!root) return;
    const canMark = eligible(fate, now, graceDeadline(verdict, root.firstSeen, run.policy.graceSeconds));
    if (root.state === 'ACTIVE' && canMark)
      run.candidates.push({ key: object.key, version: root.version, epoch: root.epoch });
    else if (root.state === 'ACTIVE' && (fate === 'DEAD' || fate === 'SUPERSEDED')) run.totals.inGrace++;
    else if (root.state === 'MARKED' && !canMark) {
      if (await moveRoot(ports, GC_CUT_POINTS.mark, root, { state: 'ACTIVE', fate })) run.totals.unmarked++;
    }
  });
  run.candidates.sort((a, b) => (a.key < b.key ? -1 : 1));
  const last = page.objects.at(-1)?.key;
  if (page.more && last) run.scan = { ...run.scan, after: last };
  else if (run.scan.prefix + 1 < run.policy.prefixes.length) run.scan = { prefix: run.scan.prefix + 1, done: false };
  else run.scan = { ...run.scan, done: true };
  return run;
}

/** The root of a listed key as this scan leaves it (created, renewed, or its fate noted). */
async function ensureRoot(
  ports: Ports,
  run: GcRun,
  key: string,
  root: LifecycleRoot | undefined,
  verdict: Verdict,
  now: Date,
): Promise<LifecycleRoot | undefined> {
  const { fate } = verdict;
  const firstSeen = now.toISOString();
  const deadline = graceDeadline(verdict, firstSeen, run.policy.graceSeconds).toISOString();
  if (!root) {
    const created = await createRoot(ports, GC_CUT_POINTS.root, run, key, { firstSeen, graceDeadline: deadline, fate });
    if (created?.epoch === 1 && created.firstSeen === firstSeen) run.totals.rootsCreated++;
    return created;
  }
  if (root.state === 'DELETED') {
    // A late object under a deleted key: a new life, a fresh grace. The old journal stays
    // out of it (the new epoch has none).
    const renewed = await moveRoot(ports, GC_CUT_POINTS.root, root, {
      state: 'ACTIVE',
      epoch: root.epoch + 1,
      firstSeen,
      graceDeadline: deadline,
      fate,
      lateObject: false,
      journal: null,
      markedAt: null,
      deletedAt: null,
      policyDigest: null,
    } as unknown as Partial<LifecycleRoot>);
    if (renewed) run.totals.lateObjects++;
    return renewed;
  }
  const graceNow = graceDeadline(verdict, root.firstSeen, run.policy.graceSeconds).toISOString();
  if (root.state === 'ACTIVE' && (root.fate !== fate || root.graceDeadline !== graceNow)) {
    return (await moveRoot(ports, GC_CUT_POINTS.root, root, { fate, graceDeadline: graceNow })) ?? undefined;
  }
  return root;
}

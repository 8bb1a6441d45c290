import { describe, expect, it } from 'vitest';
import { DELIVERY_CUT_POINTS } from '../../src/delivery/cut-points.js';
import { PUBLICATION_CUT_POINTS } from '../../src/domain/publication/cut-points.js';
import type { FaultKind } from '../../src/domain/faults.js';
import { PUBLICATION_STEPS } from '../../src/publication/publication-steps.js';
import { OBSERVATION_CUT_POINTS, QUALITY_CUT_POINTS } from '../../src/domain/quality/cut-points.js';
import {
  runGovernanceCase,
  stepsThroughCheckpoint,
  type CaseContext,
  type Stop,
} from '../support/governance-matrix.js';
import { useGovernanceWorld } from '../support/governance-world.js';
import { MATRIX_LANE, sampleOf, withKinds } from '../support/matrix-lane.js';

/**
 * F2 (docs/rules.md#governance-cut-points): governance entry states × the cut points crossed by
 * observe / replay / resume / release × the six fault kinds. Each case brings its own
 * operation to the entry state without faults, arms `cut:kind*`, applies the permitted
 * actions until the first one fails (replay first whenever it is offered, so its reads
 * are crossed), disarms, applies permitted actions to a final state, then I1–I10
 * (test/support/governance-matrix.ts, governance-invariants.ts).
 *
 * Entry states: PUBLISHED + PREPARED (after Dispatch); PUBLISHED + TARGET_PENDING (an
 * observation whose deadline was already spent); PUBLISHED + COMPLETE (after ObserveTarget);
 * SUCCEEDED (after Checkpoint, before Cleanup). `quality.pending.commit` is reached by an
 * observation with its deadline spent; `quality.failed.commit` by a row that breaks the
 * probe assertion (`amount < 0`, expect 0) written into the published table before observe.
 */

const CUTS = [
  ...OBSERVATION_CUT_POINTS,
  QUALITY_CUT_POINTS.replayRead,
  PUBLICATION_CUT_POINTS.predecessorDrop,
  DELIVERY_CUT_POINTS.custodyRelease,
];
type Entry = 'PREPARED' | 'TARGET_PENDING' | 'COMPLETE' | 'SUCCEEDED';
const ENTRIES: readonly Entry[] = ['PREPARED', 'TARGET_PENDING', 'COMPLETE', 'SUCCEEDED'];

/**
 * Pruned: combinations that cannot occur. From COMPLETE (evidence recorded) and SUCCEEDED
 * the guide never offers observe (COMPLETE is final, N14), so nothing of an observation —
 * the guard, the reader child, its reap, a pending/complete/failed write, the completion
 * document and its record — is ever crossed again; only replay, resume (evidence,
 * checkpoint, cleanup) and the release remain.
 */
const OBSERVATION_ONLY: readonly string[] = OBSERVATION_CUT_POINTS;
export const PRUNED: ReadonlyArray<{ entry: Entry; cut: string; why: string }> = (
  ['COMPLETE', 'SUCCEEDED'] as const
).flatMap((entry) =>
  OBSERVATION_ONLY.map((cut) => ({ entry, cut, why: 'observe is never offered once the capsule is COMPLETE' })),
);
const pruned = (entry: Entry, cut: string): boolean => PRUNED.some((p) => p.entry === entry && p.cut === cut);
const COMBOS = ENTRIES.flatMap((entry) =>
  CUTS.filter((cut) => !pruned(entry, cut)).map((cut) => [entry, cut] as const),
);
/** What this lane runs (matrix-lane.ts): every combination, or one entry state per cut point. */
const RUN = sampleOf(COMBOS, ([, cut]) => cut);
const child = (cut: string): boolean => cut === QUALITY_CUT_POINTS.targetProbe;

/**
 * The cases docs/rules.md#governance-cut-points leaves to the operator (the guard kept after an
 * unverified end, or the terminal FAILED).
 */
function expectedStops(cut: string, kind: FaultKind): readonly Stop[] {
  if (cut === QUALITY_CUT_POINTS.failedCommit)
    return kind === 'crash-before' || kind === 'fail' || kind === 'lose-request' ? ['GUARD_HELD'] : ['FAILED'];
  if (cut === QUALITY_CUT_POINTS.workerReap && kind !== 'delay') return ['GUARD_HELD'];
  if (cut === QUALITY_CUT_POINTS.readerAcquire && kind === 'crash-after') return ['GUARD_HELD'];
  if (
    cut === QUALITY_CUT_POINTS.completeCommit &&
    (kind === 'crash-before' || kind === 'fail' || kind === 'lose-request')
  )
    return ['GUARD_HELD'];
  if (
    cut === QUALITY_CUT_POINTS.pendingCommit &&
    (kind === 'crash-before' || kind === 'fail' || kind === 'lose-request')
  )
    return ['GUARD_HELD'];
  return ['CUSTODY_RELEASED'];
}

const THROUGH_DISPATCH = PUBLICATION_STEPS.slice(0, PUBLICATION_STEPS.findIndex(([n]) => n === 'dispatch') + 1);
const THROUGH_OBSERVE = PUBLICATION_STEPS.slice(0, PUBLICATION_STEPS.findIndex(([n]) => n === 'observe-target') + 1);

async function enter(ctx: CaseContext, entry: Entry, cut: string): Promise<void> {
  if (entry === 'SUCCEEDED') return void expect(await ctx.forward(stepsThroughCheckpoint)).toBe('forward → SUCCEEDED');
  expect(await ctx.forward(entry === 'COMPLETE' ? THROUGH_OBSERVE : THROUGH_DISPATCH)).toBe('forward → PUBLISHED');
  if (cut === QUALITY_CUT_POINTS.failedCommit) {
    await ctx.world.observe.ch.client.command({
      query: `INSERT INTO pub.${ctx.table} VALUES (99998, '2026-11-02 13:00:00.000', 'late', -1, 'breaks the assertion')`,
    });
  }
  if (entry === 'TARGET_PENDING') {
    ctx.observeBudgetMs = 0;
    expect(await ctx.act('observe')).toBe('observe → TARGET_PENDING');
    delete ctx.observeBudgetMs;
  }
}

const world = useGovernanceWorld();
let tables = 0;
const spec = (cut: string, kind: FaultKind): string => `${cut}:${kind}${kind === 'delay' ? '=5' : ''}*`;

async function runCase(entry: Entry, cut: string, kind: FaultKind): Promise<void> {
  const result = await runGovernanceCase({
    world,
    table: `f2_${++tables}`,
    spec: spec(cut, kind),
    inChild: child(cut),
    prelude: (ctx) => enter(ctx, entry, cut),
    faulted: async (ctx) => {
      if (cut === QUALITY_CUT_POINTS.pendingCommit) ctx.observeBudgetMs = 0;
      return `faulted → ${(await ctx.drive({ untilError: true, limit: 6 })) ?? 'stopped'}`;
    },
  });
  expect(expectedStops(cut, kind), result.trail).toContain(result.stop);
}

describe(`F2 governance: entry state × cut point × kind, then only permitted actions, then I1–I10 (${MATRIX_LANE})`, () => {
  it('covers every entry × cut point but the pruned ones', () => {
    expect(COMBOS.length + PRUNED.length).toBe(ENTRIES.length * CUTS.length);
    expect(PRUNED.map((p) => `${p.entry} × ${p.cut}`)).toHaveLength(16);
  });
  it.concurrent.each(
    withKinds(RUN.filter(([, cut]) => !child(cut))).map(([[entry, cut], kind]) => [entry, cut, kind] as const),
  )('%s × %s × %s*', (entry, cut, kind) => runCase(entry, cut, kind), 120_000);
});

// The reader child's cut point is armed through the environment it inherits (process-wide): one at a time.
describe('F2: quality.target.probe (inside the reader child)', () => {
  it.each(withKinds(RUN.filter(([, cut]) => child(cut))).map(([[entry, cut], kind]) => [entry, cut, kind] as const))(
    '%s × %s × %s*',
    (entry, cut, kind) => runCase(entry, cut, kind),
    60_000,
  );
});

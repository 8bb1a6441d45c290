import { describe, expect, it } from 'vitest';
import { DELIVERY_CUT_POINTS } from '../../src/delivery/cut-points.js';
import { PUBLICATION_CUT_POINTS } from '../../src/domain/publication/cut-points.js';
import { FAULT_KINDS, type FaultKind } from '../../src/domain/faults.js';
import { QUALITY_CUT_POINTS } from '../../src/domain/quality/cut-points.js';
import { LOCAL_CUT_POINTS } from '../../src/local/cut-points.js';
import { runGovernanceCase, type CaseContext, type Stop } from '../support/governance-matrix.js';
import { useGovernanceWorld } from '../support/governance-world.js';
import { successorBoundaryCase } from '../support/governance-successor.js';
import { matrixCutPoints } from '../support/matrix-cut-points.js';
import { kindsAt, MATRIX_LANE, withKinds } from '../support/matrix-lane.js';

/**
 * F1 (docs/rules.md#governance-cut-points): the publish-clickhouse forward path with a persistent
 * fault (`cut:kind*`) at every cut point it crosses × every fault kind; then only the
 * actions inspect permits (reconcile, resume, observe, retire, in process, source-free)
 * to a final state, then I1–I10 (test/support/governance-matrix.ts, governance-invariants.ts).
 *
 * The forward path: every cut point of the flow in its spec's order
 * (src/registry/flow-cut-points.ts) but the ones left out below, each with why.
 * `publication.fence.rename` is not the flow's: only reconcile (delivery-reconcile) of a
 * dispatched operation that is not yet proved crosses it. Its own case below drives it by
 * `publication.exchange:crash-before` (the EXCHANGE never sent) and the fault armed on the
 * reconcile that fences. A successor's Begin with its
 * boundary legs (`delivery.custody.acquire`) runs after a first operation completed on the
 * same table. `quality.target.probe` fires inside the reader child: its own cases below.
 *
 * Ends: CUSTODY_RELEASED (capsule COMPLETE and retired, rows exactly once, one EXCHANGE) or
 * RETIRED (target still P) — or, where docs/rules.md#governance-cut-points says so, the
 * operator's stop: a reader guard held after an unverified end (INCOMPLETE; inspect offers
 * nothing; the quiescence procedure).
 */

const D = DELIVERY_CUT_POINTS;
const Q = QUALITY_CUT_POINTS;
/** The extraction is deliver-window's (the same steps, the same Map): its matrices run these. */
const EXTRACTION = 'the shared extraction: deliver-window.matrix and deliver-window-flow.matrix run it';
const FORWARD = matrixCutPoints('publish-clickhouse', {
  [D.custodyAcquire]: "its own case below: a successor's Begin whose boundary write's answer is lost",
  [D.createStaging]: EXTRACTION,
  [D.stagingRecord]: EXTRACTION,
  [D.planPut]: EXTRACTION,
  [D.journalTransition]: EXTRACTION,
  [D.partClaim]: EXTRACTION,
  [D.chunkPut]: EXTRACTION,
  [D.partReceipt]: EXTRACTION,
  [LOCAL_CUT_POINTS.mapRunResultWrite]: EXTRACTION,
  [Q.targetProbe]: 'inside the reader child: its own cases below, one at a time',
  [Q.pendingCommit]: 'a passing run never writes TARGET_PENDING: quality-governance.matrix',
  [Q.failedCommit]: 'a passing run never writes FAILED: quality-governance.matrix',
});

/**
 * The cases docs/rules.md#governance-cut-points leaves to the operator: the guard stays after
 * an unverified end of the observation (crash after the acquire; the reap not observed; the
 * observing process dying with the results only in memory). Every other case ends
 * CUSTODY_RELEASED or RETIRED.
 */
const GUARD_STOPS = new Set<string>([
  `${QUALITY_CUT_POINTS.readerAcquire}:crash-after`,
  ...FAULT_KINDS.map((k) => `${QUALITY_CUT_POINTS.workerReap}:${k}`).filter((k) => !k.endsWith(':delay')),
  `${QUALITY_CUT_POINTS.completeCommit}:crash-before`,
  `${QUALITY_CUT_POINTS.completeCommit}:fail`,
  `${QUALITY_CUT_POINTS.completeCommit}:lose-request`,
]);

const spec = (cut: string, kind: FaultKind): string => `${cut}:${kind}${kind === 'delay' ? '=5' : ''}*`;
const world = useGovernanceWorld();
let tables = 0;

function expectEnd(key: string, stop: Stop, trail: string): void {
  if (GUARD_STOPS.has(key)) expect(stop, trail).toBe('GUARD_HELD');
  else expect(['CUSTODY_RELEASED', 'RETIRED'], trail).toContain(stop);
}

describe(`F1 publish-clickhouse: a persistent fault at each cut point of the forward path, then only permitted actions, then I1–I10 (${MATRIX_LANE})`, () => {
  it.concurrent.each(withKinds(FORWARD))(
    '%s × %s*',
    async (cut, kind) => {
      const result = await runGovernanceCase({ world, table: `f1_${++tables}`, spec: spec(cut, kind) });
      expectEnd(`${cut}:${kind}`, result.stop, result.trail);
    },
    120_000,
  );

  it.concurrent.each(kindsAt(FORWARD.length))(
    'publication.fence.rename × %s* (reached by publication.exchange:crash-before, then reconcile) → fenced → retired, or proven',
    async (kind) => {
      const prelude = async (ctx: CaseContext): Promise<void> => {
        ctx.lane.chFaults.arm('publication.exchange:crash-before');
        try {
          expect(await ctx.forward()).toBe('forward → PUBLICATION_UNKNOWN');
        } finally {
          ctx.lane.chFaults.disarm();
        }
      };
      const result = await runGovernanceCase({
        world,
        table: `f1_${++tables}`,
        spec: spec(PUBLICATION_CUT_POINTS.fenceRename, kind),
        prelude,
        faulted: (ctx) => ctx.act('reconcile'),
      });
      // The EXCHANGE never ran: the only end is fenced → REEXTRACT_REQUIRED → retired, the target still P.
      expect(result.stop, result.trail).toBe('RETIRED');
      expect(result.exchangeCount).toBe(0);
      if (kind === 'lose-response') expect(result.trail).toMatch(/reconcile → REEXTRACT_REQUIRED/);
    },
    60_000,
  );

  it.concurrent(
    "a successor's Begin whose boundary write's answer is lost: begin's reload proves it; the old window closed once",
    async () => {
      await successorBoundaryCase(world, `f1_${++tables}`, 'lose-response');
    },
    120_000,
  );
});

// The reader child's cut point is armed through the environment the child inherits (process-wide): these run one at a time.
describe('F1: quality.target.probe (inside the reader child) × every kind', () => {
  it.each(kindsAt(FORWARD.length + 1))(
    'quality.target.probe × %s*',
    async (kind) => {
      const result = await runGovernanceCase({
        world,
        table: `f1_${++tables}`,
        spec: spec(QUALITY_CUT_POINTS.targetProbe, kind),
        inChild: true,
      });
      expectEnd(`${QUALITY_CUT_POINTS.targetProbe}:${kind}`, result.stop, result.trail);
    },
    60_000,
  );
});

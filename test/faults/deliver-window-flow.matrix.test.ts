import { afterAll, beforeAll, describe, it } from 'vitest';
import { DELIVERY_CUT_POINTS, TARGET_CUT_POINTS } from '../../src/delivery/cut-points.js';
import { mapCutPoints } from '../../src/registry/flow-cut-points.js';
import type { FaultKind } from '../../src/domain/faults.js';
import { runMatrixCase, WINDOW } from '../support/delivery-matrix.js';
import { generateEvents, openDeliveryWorld, windowIdsOf, type DeliveryWorld } from '../support/delivery-world.js';
import { matrixCutPoints } from '../support/matrix-cut-points.js';
import { withKinds } from '../support/matrix-lane.js';

/**
 * The parts' cut points through the deliver-window FLOW (issue 9): its Distributed Map run
 * by the local runner, each part a child execution with the ASL's own Retry and Catch.
 * Every cut point a part passes (the plan, a chunk's object, its load, its receipt batch)
 * and the Map's ResultWriter × a persistent fault of each kind that ends a Task
 * differently — a crash before or after the effect, a lost response, a definite failure —
 * then the permitted recovery actions, source-free, to CUSTODY_RELEASED or RETIRED, and the
 * invariants (test/support/delivery-matrix.ts). Among them: a Map item that keeps failing
 * (the Map Run exceeds its tolerance, the flow ends StepRefused), and a part retried by the
 * child's Retry that resumes after its last journaled chunk.
 */

const sourceRows = generateEvents(500, 864_000); // 100 a day: 200 in the window
const windowIds = windowIdsOf(sourceRows, WINDOW);
// Parts of ~100 rows, chunks of 30: 2+ parts, each with several chunks and a partial last one.
const ROUTE = { chunkRows: 30, partRows: 100, maxConcurrency: 2 };
/**
 * The part steps: the plan the Map reads (PlanParts' object), then the cut points of the
 * Map's item Tasks and its ResultWriter, from the spec (src/registry/flow-cut-points.ts).
 */
const CUT_POINTS = matrixCutPoints('deliver-window', {}, [
  DELIVERY_CUT_POINTS.planPut,
  ...mapCutPoints('deliver-window', 'ExtractLoadParts'),
]);
const KINDS: readonly FaultKind[] = ['crash-before', 'crash-after', 'lose-response', 'fail'];
const cases = withKinds(CUT_POINTS, 0, KINDS);

let world: DeliveryWorld;
let tableSeq = 0;

beforeAll(async () => {
  world = await openDeliveryWorld({ rows: sourceRows });
}, 120_000);

afterAll(() => world?.close());

describe('deliver-window flow: a persistent fault at each part cut point, then the permitted recovery actions', () => {
  it.each(cases)(
    '%s × %s* → CUSTODY_RELEASED (rows exactly once) or RETIRED (nothing published), recovery source-free',
    async (cutPoint, kind) => {
      await runMatrixCase({
        world,
        table: `fl_${++tableSeq}`,
        route: ROUTE,
        faults: cutPoint === TARGET_CUT_POINTS.loadChunk ? world.targetFaults : world.stores.faults,
        spec: `${cutPoint}:${kind}*`,
        run: async (input) => {
          const result = await world.runFlow('deliver-window', input);
          return `flow ${result.status}${result.error ? ` ${result.error}` : ''}`;
        },
        windowIds,
      });
    },
    60_000,
  );
});

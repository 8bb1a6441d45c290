import { afterAll, beforeAll, describe, it } from 'vitest';
import { TARGET_CUT_POINTS } from '../../src/delivery/cut-points.js';
import { deliverWindow } from '../../src/delivery/deliver-in-process.js';
import { LOCAL_CUT_POINTS } from '../../src/local/cut-points.js';
import { runMatrixCase, WINDOW } from '../support/delivery-matrix.js';
import { generateEvents, openDeliveryWorld, windowIdsOf, type DeliveryWorld } from '../support/delivery-world.js';
import { matrixCutPoints } from '../support/matrix-cut-points.js';
import { withKinds } from '../support/matrix-lane.js';

/**
 * The deliver-window fault matrix (issue 4): every cut point the forward path hits × every
 * fault kind, armed persistently so the in-process reruns cannot absorb it. After the
 * faulted run, the journal state must be one of the journal's (docs/rules.md#delivery-journal-states), inspect must offer exactly
 * the guide's permitted actions, and applying them (with a source armed to refuse: recovery
 * never opens ClickHouse) must end in CUSTODY_RELEASED (every window row exactly once, one
 * receipt, the checkpoint advanced once) or RETIRED (nothing published, no receipt, the
 * checkpoint not moved). Each case delivers to its own target table, so custody and
 * checkpoints are per case. Real components: DynamoDB Local and the S3 emulator, embedded
 * ClickHouse (chdb, one engine per file) as the source, embedded PostgreSQL as the target
 * (test/support/delivery-world.ts).
 */

const STEP_MS = 864_000; // 100 rows a day
const GENERATED = 500; // five days

// 200 window rows in parts of ~100 rows and chunks of 30: 2+ parts, each with a partial last chunk.
const ROUTE = { chunkRows: 30, partRows: 100, maxConcurrency: 2 };

const sourceRows = generateEvents(GENERATED, STEP_MS);
const windowIds = windowIdsOf(sourceRows, WINDOW);

/**
 * The forward path's effects: every cut point of the flow (src/registry/flow-cut-points.ts)
 * but the one the in-process run has no place for (the seal is not a separate effect of
 * the in-process run: it is begin's custody transaction).
 */
const FORWARD_CUT_POINTS = matrixCutPoints('deliver-window', {
  [LOCAL_CUT_POINTS.mapRunResultWrite]:
    'the in-process run has no Map Run: its results are deliver-window-flow.matrix.test.ts',
});
const TARGET_POINTS = new Set<string>(Object.values(TARGET_CUT_POINTS));
const cases = withKinds(FORWARD_CUT_POINTS);

let world: DeliveryWorld;
let tableSeq = 0;

beforeAll(async () => {
  world = await openDeliveryWorld({ rows: sourceRows });
}, 120_000);

afterAll(() => world?.close());

describe('deliver-window: a persistent fault at each cut point, then the permitted recovery actions', () => {
  it.each(cases)(
    '%s × %s* → CUSTODY_RELEASED (rows exactly once) or RETIRED (nothing published), recovery source-free',
    async (cutPoint, kind) => {
      await runMatrixCase({
        world,
        table: `ev_${++tableSeq}`,
        route: ROUTE,
        faults: TARGET_POINTS.has(cutPoint) ? world.targetFaults : world.stores.faults,
        spec: `${cutPoint}:${kind}${kind === 'delay' ? '=5' : ''}*`,
        run: async (input, deps) => `returned ${(await deliverWindow(input, deps)).state}`,
        windowIds,
      });
    },
    60_000,
  );
});

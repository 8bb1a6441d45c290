import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { encodeBatch } from '../../src/domain/record-batch.js';
import { walKeyOf, walMetadataOf, type LaneRef } from '../../src/domain/stream.js';
import { runFlow } from '../../src/local/flow-runner.js';
import type { Ports } from '../../src/ports/index.js';
import { STREAM_CUT_POINTS } from '../../src/stream/cut-points.js';
import { PAGE } from '../../src/stream/gc/state.js';
import { loadHead } from '../../src/stream/lane-store.js';
import { spendAttempt } from '../../src/stream/spend-attempt.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { FULL_MATRIX } from '../support/matrix-lane.js';
import { newLane } from '../support/stream-fixture.js';
import { countingPorts, listAll, MovableClock } from '../faults/stream-gc-world.js';

/**
 * One stream-gc execution is bounded (issue #11): it takes at most `pagesPerExecution`
 * pages (+1 when the scan ends on its last) and ends with `{done: false, next}`; running
 * the flow again with `next` continues the same run. The history of an execution (states
 * entered, events) does not grow with the lane; the continued run collects every object
 * exactly once and its totals are the whole run's.
 */
let stores: TestStores;
beforeAll(async () => {
  stores = await freshStores();
});

const PAGES = 1;
/** States one page takes (Scan, IsDryRun, Mark, MoreToScan or Drain, Delete, Finalize, MoreToSweep), plus Begin and Continue/Done. */
const MAX_STATES = 4 * (PAGES + 1) + 2;

async function laneWithOrphans(ports: Ports, label: string, n: number): Promise<LaneRef> {
  const { lane } = await newLane(ports, label);
  const head = await loadHead(ports, lane);
  const binding = { fenceEpoch: head.fence?.epoch ?? 0, start: head.committedEnd };
  for (let first = 0; first < n; first += 25) {
    await Promise.all(
      Array.from({ length: Math.min(25, n - first) }, async (_, i) => {
        const bytes = encodeBatch([Buffer.from(`bulk/${first + i}`)]);
        const sha = createHash('sha256').update(bytes).digest('hex');
        await ports.objects.put(
          STREAM_CUT_POINTS.wal,
          walKeyOf(lane, 'bulk', sha),
          bytes,
          walMetadataOf(lane, 'bulk', sha, 1, binding),
        );
      }),
    );
  }
  expect((await spendAttempt(ports, lane, 'bulk', 'test orphans', STREAM_CUT_POINTS.retire)).status).toBe('SPENT');
  return lane;
}

/** Runs the flow, then its continuations, to the end: per execution, states entered and events. */
async function runToEnd(ports: Ports, lane: LaneRef) {
  const executions: Array<{ transitions: number; events: number }> = [];
  let input: unknown = { ...lane, grace: '0s', pagesPerExecution: PAGES };
  for (;;) {
    const run = await runFlow('stream-gc', input, { ports, retryIntervalMs: 0 });
    expect(run.status, `${run.error}: ${run.cause}`).toBe('SUCCEEDED');
    executions.push({ transitions: run.transitions, events: run.events.length });
    const output = run.output as { done: boolean; next?: unknown; totals: Record<string, unknown> };
    if (output.done) return { executions, totals: output.totals };
    expect(output.next).toBeDefined();
    input = output.next;
    expect(executions.length, 'the run never finishes').toBeLessThan(100);
  }
}

describe('stream GC continuation', () => {
  // npm test's sizes: 18.3 s at load ~10; the full matrix's are twice as large, x4 on a busy machine.
  it(
    'bounds every execution independent of the lane size; the continued run collects each object exactly once',
    { timeout: 900_000 },
    async () => {
      // npm test: half a page and a page and a half; npm run test:matrix: one and three pages.
      const sizes = FULL_MATRIX ? [PAGE, 3 * PAGE] : [PAGE / 2, (3 * PAGE) / 2];
      const seen = [];
      for (const n of sizes) {
        const deletes = new Map<string, number>();
        const ports = countingPorts(stores.ports, new MovableClock(), deletes);
        const lane = await laneWithOrphans(ports, `gc-cont-${n}`, n);
        const { executions, totals } = await runToEnd(ports, lane);
        expect(totals).toMatchObject({ scanned: n, dead: n, marked: n, sealed: n, deleted: n, finalized: n });
        expect(await listAll(ports, lane)).toEqual([]);
        expect(deletes.size).toBe(n);
        expect([...deletes.values()].every((d) => d === 1)).toBe(true);
        for (const e of executions) expect(e.transitions).toBeLessThanOrEqual(MAX_STATES);
        seen.push({ n, executions });
      }
      const [small, large] = seen;
      // Three times the objects: at least twice the executions, none of them longer than the small lane's longest.
      expect(large!.executions.length).toBeGreaterThanOrEqual(2 * small!.executions.length);
      const longest = (s: typeof small) => Math.max(...s!.executions.map((e) => e.events));
      expect(longest(large)).toBeLessThanOrEqual(longest(small));
    },
  );

  it('refuses a page budget out of range before anything is written', async () => {
    const { lane } = await newLane(stores.ports, 'gc-cont-bad');
    for (const pagesPerExecution of [0, 201, 1.5, '2']) {
      const run = await runFlow(
        'stream-gc',
        { ...lane, pagesPerExecution },
        { ports: stores.ports, retryIntervalMs: 0 },
      );
      expect(run).toMatchObject({ status: 'FAILED', error: 'Stream.GcRefused' });
      expect(run.cause).toContain('pagesPerExecution');
    }
  });
});

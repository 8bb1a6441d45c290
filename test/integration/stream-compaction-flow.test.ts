import { beforeAll, describe, expect, it } from 'vitest';
import { runFlow, type FlowResult } from '../../src/local/flow-runner.js';
import { COMPACTION_RUN_CUT_POINTS } from '../../src/stream/compaction/cut-points.js';
import { readStream } from '../../src/stream/read.js';
import type { LaneRef } from '../../src/domain/stream.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { withKinds } from '../support/matrix-lane.js';
import { expectLaneInvariant } from '../support/stream-fixture.js';
import { compactionsOf, expectCompacted, laneWithRanges, textOf } from '../faults/stream-compaction-world.js';

/**
 * The stream-compact flow (statemachines/stream-compact.asl.json) on the local
 * state-machine runner over DynamoDB Local and the S3 emulator: the same handler Lambda
 * runs, its Retry and Catch as deployed. One fault at every cut point the run crosses
 * (kinds rotated along them), then a re-run of the flow finishes the same run: one
 * compaction, one generation, every record readable once in order.
 */
let stores: TestStores;
beforeAll(async () => {
  stores = await freshStores();
});

const compactFlow = (lane: LaneRef, knobs: Record<string, unknown> = {}): Promise<FlowResult> =>
  runFlow('stream-compact', { ...lane, ...knobs }, { ports: stores.ports, retryIntervalMs: 0 });

const CUT_POINTS = COMPACTION_RUN_CUT_POINTS;

describe('stream-compact flow', () => {
  it("compacts the next run and prints the use case's result; a second run has nothing to compact", async () => {
    const { lane, acknowledged } = await laneWithRanges(stores.ports, 'flow', 3);
    const all = acknowledged.flatMap((a) => a.records);
    const run = await compactFlow(lane);
    expect(run.status, `${run.error}: ${run.cause}`).toBe('SUCCEEDED');
    expect(run.output).toMatchObject({
      ...lane,
      compacted: { start: 0, end: all.length, ranges: 3, generation: 0, recordCount: all.length },
      next: all.length,
      taskCleaned: true,
    });
    await expectCompacted(stores.ports, lane, all, 0, all.length);
    const again = await compactFlow(lane);
    expect(again.output).toEqual({ ...lane, next: all.length, taskCleaned: false });
    expect(await compactionsOf(stores.ports, lane)).toHaveLength(1);
  }, 120_000);

  it("a refusal fails the flow with the step's own error name, and nothing is written", async () => {
    const missing = await compactFlow({ stream: 'no-such-stream', partition: 0 });
    expect(missing).toMatchObject({ status: 'FAILED', error: 'Stream.LaneMissing' });
    const { lane } = await laneWithRanges(stores.ports, 'knob', 2);
    const bad = await compactFlow(lane, { maxRanges: 1 });
    expect(bad).toMatchObject({ status: 'FAILED', error: 'Cutpoint.ValidationError' });
    expect(bad.cause).toContain('maxRanges must be at least 2');
    expect(await compactionsOf(stores.ports, lane)).toEqual([]);
  }, 120_000);

  it.each(withKinds(CUT_POINTS))(
    '%s × %s* fails or finishes the run; a re-run of the flow finishes it exactly once',
    async (cut, kind) => {
      const { lane, acknowledged } = await laneWithRanges(stores.ports, `f-${kind}`, 3);
      const all = acknowledged.flatMap((a) => a.records);
      const fault = stores.faults.arm(`${cut}:${kind}${kind === 'delay' ? '=5' : ''}*`);
      const faulted = await compactFlow(lane).finally(() => stores.faults.disarm());
      expect(fault.fired.length, `${cut} was never crossed`).toBeGreaterThan(0);
      expect(['SUCCEEDED', 'FAILED']).toContain(faulted.status);
      const clean = await compactFlow(lane);
      expect(clean.status, `${clean.error}: ${clean.cause}`).toBe('SUCCEEDED');
      expect((clean.output as { next: number }).next).toBe(all.length);
      await expectCompacted(stores.ports, lane, all, 0, all.length);
      const page = await readStream({ ...lane, from: 0, maxRecords: 1000 }, stores.ports);
      expect(textOf(page.records)).toEqual(all);
      await expectLaneInvariant(stores.ports, lane, acknowledged);
    },
    120_000,
  );
});

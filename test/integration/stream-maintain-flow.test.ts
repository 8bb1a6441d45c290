import { beforeAll, describe, expect, it } from 'vitest';
import type { LaneRef } from '../../src/domain/stream.js';
import { loadAsl, START_FLOW_SYNC, type AslDefinition } from '../../src/local/asl.js';
import { runFlow, type FlowResult } from '../../src/local/flow-runner.js';
import { readStream } from '../../src/stream/read.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { expectLaneInvariant } from '../support/stream-fixture.js';
import { compactionsOf, expectCompacted, laneWithRanges, textOf } from '../faults/stream-compaction-world.js';
import { countingPorts, listAll, MovableClock, putOrphan } from '../faults/stream-gc-world.js';

/**
 * The scheduled maintenance flow (statemachines/stream-maintain.asl.json) on the local
 * runner: per configured lane, stream-materialize, stream-compact and stream-gc as child
 * executions of the same flows (the runner runs `states:startExecution.sync:2` as a child
 * execution over the same ports). A lane whose child fails does not stop the others; the
 * execution then fails naming it.
 */
let stores: TestStores;
beforeAll(async () => {
  stores = await freshStores();
});

const maintain = (lanes: LaneRef[]): Promise<FlowResult> =>
  runFlow('stream-maintain', { lanes }, { ports: stores.ports, retryIntervalMs: 0 });

describe('stream-maintain flow', () => {
  it('materializes, compacts and collects every configured lane, in that order, and reports each lane', async () => {
    const a = await laneWithRanges(stores.ports, 'maint-a', 3);
    const b = await laneWithRanges(stores.ports, 'maint-b', 2);
    const run = await maintain([a.lane, b.lane]);
    expect(run.status, `${run.error}: ${run.cause}`).toBe('SUCCEEDED');
    const lanes = run.output as Array<Record<string, unknown>>;
    for (const [i, { lane, acknowledged }] of [a, b].entries()) {
      const all = acknowledged.flatMap((x) => x.records);
      expect(lanes[i]).toMatchObject({
        ...lane,
        status: 'MAINTAINED',
        materialize: { next: all.length },
        compact: { next: all.length },
        gc: { totals: expect.any(Object) },
      });
      expect(String((lanes[i]!.compact as { execution: string }).execution)).toContain(':stream-compact:');
      // Materialized first (every range has generation 0), then compacted into one generation.
      await expectCompacted(stores.ports, lane, all, 0, all.length);
      const page = await readStream({ ...lane, from: 0, maxRecords: 1000 }, stores.ports);
      expect(textOf(page.records)).toEqual(all);
      await expectLaneInvariant(stores.ports, lane, acknowledged);
    }
    expect(run.transitions).toBeGreaterThan(10); // the children's transitions are counted
  });

  it('a bounded GC execution that ends {done: false, next} is continued from next until the lane is collected', async () => {
    // The same flow with a page budget of 1 per GC execution (the deployed default is 200).
    const definition = structuredClone(loadAsl('stream-maintain')) as AslDefinition & {
      States: { Lanes: { ItemProcessor: { States: Record<string, { Parameters?: Record<string, unknown> }> } } };
    };
    definition.States.Lanes.ItemProcessor.States.StartCollect!.Parameters = {
      'stream.$': '$.stream',
      'partition.$': '$.partition',
      grace: '0s',
      pagesPerExecution: 1,
    };
    const deletes = new Map<string, number>();
    const ports = countingPorts(stores.ports, new MovableClock(), deletes);
    const { lane } = await laneWithRanges(ports, 'maint-cont', 2);
    const orphans = await putOrphan(ports, lane, 'dead-bulk', 130); // two listing pages
    const run = await runFlow('stream-maintain', { lanes: [lane] }, { ports, retryIntervalMs: 0, definition });
    expect(run.status, `${run.error}: ${run.cause}`).toBe('SUCCEEDED');
    // One execution covers one page: every orphan collected proves the lane went on from `next`.
    const [summary] = run.output as Array<{ gc: { totals: { deleted: number } } }>;
    expect(summary!.gc.totals.deleted).toBeGreaterThanOrEqual(orphans.length);
    const left = new Set(await listAll(ports, lane));
    for (const key of orphans) {
      expect(left.has(key), `${key} not collected`).toBe(false);
      expect(deletes.get(key)).toBe(1);
    }
  }, 240_000); // 13.1 s at load ~10 (one GC execution per page, 130 orphans): x4 and more on a busy machine

  it('a ninth lane is refused before any child starts: Stream.TooManyLanes, nothing maintained', async () => {
    const { lane } = await laneWithRanges(stores.ports, 'maint-nine', 2);
    const lanes = [lane, ...Array.from({ length: 8 }, (_, i) => ({ stream: `maint-absent-${i}`, partition: 0 }))];
    const run = await maintain(lanes);
    expect(run).toMatchObject({ status: 'FAILED', error: 'Stream.TooManyLanes' });
    expect(run.events.filter((e) => e.type === 'StateEntered').map((e) => e.state)).toEqual([
      'CheckInput',
      'CheckLanes',
      'TooManyLanes',
    ]);
    expect(await compactionsOf(stores.ports, lane)).toHaveLength(0);
  });

  it('a lane whose child fails is reported with its error; the other lanes are maintained and the execution fails naming it', async () => {
    const good = await laneWithRanges(stores.ports, 'maint-good', 2);
    const missing = { stream: 'no-such-stream', partition: 0 };
    const run = await maintain([missing, good.lane]);
    expect(run).toMatchObject({ status: 'FAILED', error: 'Stream.MaintenanceIncomplete' });
    // The cause is every lane's summary (States.JsonToString of the Map's results; the local
    // library does not escape the strings nested in it, so it is checked as text here).
    expect(run.cause).toContain(
      `{"stream":"no-such-stream","partition":0,"status":"FAILED","failure":{"Error":"States.TaskFailed"`,
    );
    expect(run.cause).toMatch(/"Error":"Stream\.LaneMissing","Cause":"lane no-such-stream\/0 does not exist/);
    expect(run.cause).toContain(`{"stream":"${good.lane.stream}","partition":0,"status":"MAINTAINED"`);
    expect(await compactionsOf(stores.ports, good.lane)).toHaveLength(1);
  });

  it("the runner starts a child flow from its own ASL (not a fixture definition given for the parent), with the parent's step overrides", async () => {
    const definition: AslDefinition = {
      StartAt: 'TrimChild',
      States: {
        TrimChild: {
          Type: 'Task',
          Resource: START_FLOW_SYNC,
          Parameters: { StateMachineArn: '${StreamTrimStateMachineArn}', 'Input.$': '$' },
          TimeoutSeconds: 60,
          End: true,
        },
      },
    };
    const trimmed: unknown[] = [];
    const run = await runFlow(
      'fixture-parent',
      { stream: 'x', partition: 0, to: 1 },
      {
        ports: stores.ports,
        retryIntervalMs: 0,
        definition,
        taskHandlers: { StreamTrimFunctionArn: async (input) => (trimmed.push(input), { trimmedTo: 1 }) },
      },
    );
    expect(run.status, `${run.error}: ${run.cause}`).toBe('SUCCEEDED');
    // stream-trim's own ASL ran: its Trim step got its execution input (the context object's), its Done state output $.trim.
    expect(trimmed).toEqual([{ flow: 'stream-trim', executionInput: { stream: 'x', partition: 0, to: 1 } }]);
    expect(run.output).toMatchObject({
      Status: 'SUCCEEDED',
      Output: { trimmedTo: 1 },
      ExecutionArn: expect.stringContaining(':stream-trim:'),
    });
  }, 60_000);
});

import { beforeAll, describe, expect, it } from 'vitest';
import { laneKeys, rangeRootOf, type CommitRecord, type IndexEntry, type LaneRef } from '../../src/domain/stream.js';
import { GENERATION_CUT_POINTS } from '../../src/generation/cut-points.js';
import { loadRecord } from '../../src/generation/load.js';
import { runFlow, type FlowResult } from '../../src/local/flow-runner.js';
import { STREAM_CUT_POINTS } from '../../src/stream/cut-points.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { withKinds } from '../support/matrix-lane.js';
import { expectLaneInvariant } from '../support/stream-fixture.js';
import { expectCompacted, laneWithRanges } from '../faults/stream-compaction-world.js';
import { compactLane } from '../../src/stream/compaction/compact-lane.js';
import { generationKeys } from '../../src/domain/generation.js';

/**
 * The stream-materialize flow (statemachines/stream-materialize.asl.json) on the local
 * state-machine runner over DynamoDB Local and the S3 emulator. One fault at every cut
 * point a generation-0 run crosses (kinds rotated along them), then a re-run of the flow
 * finishes it: every range has exactly one committed generation 0 (slot 0, the attempt's
 * task) linked into its index entry, and the lane reads exactly its committed records.
 */
let stores: TestStores;
beforeAll(async () => {
  stores = await freshStores();
});

const materializeFlow = (lane: LaneRef, knobs: Record<string, unknown> = {}): Promise<FlowResult> =>
  runFlow('stream-materialize', { ...lane, ...knobs }, { ports: stores.ports, retryIntervalMs: 0 });

async function expectEveryRangeMaterialized(lane: LaneRef): Promise<void> {
  const commits = (await stores.ports.authority.query(laneKeys.pk(lane), 'commit#')) as unknown as CommitRecord[];
  for (const c of commits) {
    const record = await loadRecord(stores.ports, rangeRootOf(lane, c.start), 0);
    expect(record, `generation 0 of [${c.start}, ${c.end})`).toMatchObject({ state: 'COMMITTED', taskId: c.attemptId });
    expect(await loadRecord(stores.ports, rangeRootOf(lane, c.start), 1)).toBeUndefined();
    const entry = (await stores.ports.authority.get(laneKeys.index(lane, c.end))) as unknown as IndexEntry;
    expect(entry).toMatchObject({
      start: c.start,
      walKey: c.walKey,
      gen0Key: record!.objectKey,
      gen0Sha256: record!.sha256,
    });
  }
}

const CUT_POINTS = [
  GENERATION_CUT_POINTS.taskPut,
  GENERATION_CUT_POINTS.objectCopy,
  GENERATION_CUT_POINTS.recordPut,
  GENERATION_CUT_POINTS.commitCas,
  STREAM_CUT_POINTS.gen0,
];

describe('stream-materialize flow', () => {
  it("materializes max ranges per run from the mark and prints the use case's result", async () => {
    const { lane, acknowledged } = await laneWithRanges(stores.ports, 'm-flow', 3);
    const ends = acknowledged.reduce<number[]>((e, a) => [...e, (e.at(-1) ?? 0) + a.records.length], []);
    const first = await materializeFlow(lane, { max: 2 });
    expect(first.status, `${first.error}: ${first.cause}`).toBe('SUCCEEDED');
    expect(first.output).toMatchObject({
      ...lane,
      next: ends[1],
      materialized: [
        { start: 0, end: ends[0] },
        { start: ends[0], end: ends[1] },
      ],
    });
    const rest = await materializeFlow(lane);
    expect(rest.output).toMatchObject({ next: ends[2], materialized: [{ start: ends[1], end: ends[2] }] });
    expect((await materializeFlow(lane)).output).toEqual({
      ...lane,
      next: ends[2],
      materialized: [],
      cleanup: { tasks: 0 },
    });
    await expectEveryRangeMaterialized(lane);
  }, 120_000);

  it('a range whose generation 0 fails ends the execution Stream.Gen0Incomplete naming it; the next run resumes there', async () => {
    const { lane, acknowledged } = await laneWithRanges(stores.ports, 'm-incomplete', 3);
    const ends = acknowledged.reduce<number[]>((e, a) => [...e, (e.at(-1) ?? 0) + a.records.length], []);
    expect((await materializeFlow(lane, { max: 1 })).status).toBe('SUCCEEDED');
    stores.faults.arm(`${GENERATION_CUT_POINTS.objectCopy}:fail*`);
    const failed = await materializeFlow(lane).finally(() => stores.faults.disarm());
    expect(failed, String(failed.cause)).toMatchObject({ status: 'FAILED', error: 'Stream.Gen0Incomplete' });
    expect(failed.cause).toBe(
      `generation 0 of lane ${lane.stream} partition ${lane.partition}: the range from offset ${ends[0]} to ${ends[1]} failed with Cutpoint.EffectFailed; the ranges before it are materialized and the next run resumes at it`,
    );
    const clean = await materializeFlow(lane);
    expect(clean.status, `${clean.error}: ${clean.cause}`).toBe('SUCCEEDED');
    expect(clean.output).toMatchObject({
      next: ends[2],
      materialized: [
        { start: ends[0], end: ends[1] },
        { start: ends[1], end: ends[2] },
      ],
    });
    await expectEveryRangeMaterialized(lane);
  }, 120_000);

  it('a range whose generation 0 is proven ABORTED is passed: the execution fails naming it once, later runs go on, a compaction gives it its copy', async () => {
    const { lane, acknowledged } = await laneWithRanges(stores.ports, 'm-aborted', 3);
    const ends = acknowledged.reduce<number[]>((e, a) => [...e, (e.at(-1) ?? 0) + a.records.length], []);
    const commitAt = async (end: number) =>
      (await stores.ports.authority.get(laneKeys.commit(lane, end))) as unknown as CommitRecord;
    // The middle range's WAL object goes bad: its generation 0 copy fails its checksum and aborts.
    const bad = await commitAt(ends[1]!);
    const good = (await stores.ports.objects.get(bad.walKey))!;
    await stores.ports.objects.delete('test.rot', bad.walKey);
    await stores.ports.objects.put('test.rot', bad.walKey, new TextEncoder().encode('rot'), good.metadata);

    const first = await materializeFlow(lane);
    expect(first, String(first.cause)).toMatchObject({ status: 'FAILED', error: 'Stream.Gen0Incomplete' });
    expect(first.cause).toBe(
      `generation 0 of lane ${lane.stream} partition ${lane.partition}: the range from offset ${ends[0]} to ${ends[1]} is ABORTED (Cutpoint.ChecksumMismatch), and 1 range(s) in all: passed, the mark is at ${ends[2]}; its WAL object is its only copy until a compaction covers it: restore its exact bytes if it does not verify (docs/runbook/stream/QUARANTINED.md)`,
    );
    const task = await stores.ports.authority.get(generationKeys.task(rangeRootOf(lane, ends[0]!), bad.attemptId));
    expect(task).toMatchObject({ state: 'ABORTED' });
    for (const start of [0, ends[1]!])
      expect(await loadRecord(stores.ports, rangeRootOf(lane, start), 0)).toMatchObject({ state: 'COMMITTED' });

    // The next run is not stopped there: the mark is past it.
    const next = await materializeFlow(lane);
    expect(next.status, `${next.error}: ${next.cause}`).toBe('SUCCEEDED');
    expect(next.output).toMatchObject({ next: ends[2], materialized: [] });

    // Its exact bytes restored, a compaction over the three ranges reads its WAL object.
    await stores.ports.objects.delete('test.restore', bad.walKey);
    await stores.ports.objects.put('test.restore', bad.walKey, good.bytes, good.metadata);
    const compacted = await compactLane({ ...lane, maxRanges: 3 }, stores.ports);
    expect(compacted.compacted).toMatchObject({ start: 0, end: ends[2] });
    await expectCompacted(
      stores.ports,
      lane,
      acknowledged.flatMap((a) => a.records),
      0,
      ends[2]!,
    );
    await expectLaneInvariant(stores.ports, lane, acknowledged);
  }, 120_000);

  it("a bad lane fails the flow with the step's own error name", async () => {
    const run = await materializeFlow({ stream: '', partition: -1 });
    expect(run).toMatchObject({ status: 'FAILED', error: 'Cutpoint.ValidationError' });
  }, 60_000);

  it.each(withKinds(CUT_POINTS, 1))(
    '%s × %s* stops the run; a re-run of the flow finishes every range exactly once',
    async (cut, kind) => {
      const { lane, acknowledged } = await laneWithRanges(stores.ports, `m-${kind}`, 3);
      const fault = stores.faults.arm(`${cut}:${kind}${kind === 'delay' ? '=5' : ''}*`);
      const faulted = await materializeFlow(lane).finally(() => stores.faults.disarm());
      expect(fault.fired.length, `${cut} was never crossed`).toBeGreaterThan(0);
      expect(['SUCCEEDED', 'FAILED']).toContain(faulted.status);
      const clean = await materializeFlow(lane);
      expect(clean.status, `${clean.error}: ${clean.cause}`).toBe('SUCCEEDED');
      expect(clean.output).toMatchObject({ next: acknowledged.reduce((n, a) => n + a.records.length, 0) });
      await expectEveryRangeMaterialized(lane);
      await expectLaneInvariant(stores.ports, lane, acknowledged);
    },
    120_000,
  );
});

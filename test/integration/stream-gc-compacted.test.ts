import { beforeAll, describe, expect, it } from 'vitest';
import { commitGenerationInProcess } from '../../src/generation/commit-in-process.js';
import { registerGenerationTask } from '../../src/generation/register-task.js';
import type { Ports } from '../../src/ports/index.js';
import { compactLane } from '../../src/stream/compaction/compact-lane.js';
import { writeCompactedObject } from '../../src/stream/compaction/output.js';
import { DEFAULT_MAX_BYTES, planCompaction } from '../../src/stream/compaction/plan.js';
import { describeStream } from '../../src/stream/describe.js';
import { fateContext, fateOf } from '../../src/stream/gc/liveness.js';
import { loadHead } from '../../src/stream/lane-store.js';
import { readStream } from '../../src/stream/read.js';
import { trimLane } from '../../src/stream/trim.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { compactedGcWorld } from '../faults/stream-gc-compacted-world.js';
import { compactionsOf, laneWithRanges, textOf } from '../faults/stream-compaction-world.js';
import { countingPorts, expectGcInvariant, gcFlow, listAll, MovableClock, rootOf } from '../faults/stream-gc-world.js';

/**
 * GC of compacted objects (issue #11): a compaction's output gets an exact fate from the
 * authority — LIVE while a COMMITTED generation and `compaction#` name that exact object
 * above the trim, TRIMMED once its range is below the trim, DEAD when its task or slot
 * record is ABORTED and nothing names it, MAY_COMMIT (kept) while PREPARED. Superseded
 * copies get their grace from the compaction's commit, not from when GC first saw them.
 */
let stores: TestStores;
beforeAll(async () => {
  stores = await freshStores();
});

const MINUTE = 60_000;

describe('GC of compacted objects', () => {
  it('judges each compaction output exactly, collects the trimmed and aborted ones once, keeps the live and PREPARED ones, and every committed range stays readable', async () => {
    const world = await compactedGcWorld(stores.ports, 'gcc-fates');
    const { compacted } = world;
    const ctx = fateContext(world.ports, world.lane, await loadHead(world.ports, world.lane));
    expect(await fateOf(ctx, compacted.trimmed)).toBe('TRIMMED');
    expect(await fateOf(ctx, compacted.aborted)).toBe('DEAD');
    expect(await fateOf(ctx, compacted.live)).toBe('LIVE');
    expect(await fateOf(ctx, compacted.prepared), 'a PREPARED generation may still commit').toBe('MAY_COMMIT');

    const run = await gcFlow(world, { grace: '0s' });
    expect(run.status, `${run.error}: ${run.cause}`).toBe('SUCCEEDED');
    expect(run.output).toMatchObject({
      totals: { trimmed: 3, dead: 2, superseded: 2, compacted: { live: 1, trimmed: 1, dead: 1, mayCommit: 1 } },
    });
    await expectGcInvariant(world);
    // A fresh run deletes nothing more.
    expect((await gcFlow(world, { grace: '0s' })).output).toMatchObject({ totals: { deleted: 0 } });
    await expectGcInvariant(world);
  });

  it("counts a superseded copy's grace from the compaction's commit, shows it in totals, the dry run and describe", async () => {
    const clock = new MovableClock();
    const deletes = new Map<string, number>();
    const ports: Ports = countingPorts(stores.ports, clock, deletes);
    const { lane } = await laneWithRanges(ports, 'gcc-grace', 2);
    const before = await listAll(ports, lane);
    // GC first sees the WAL objects (LIVE) long before the compaction.
    expect((await gcFlow({ lane, ports })).status).toBe('SUCCEEDED');
    clock.advance(60 * MINUTE);
    await compactLane(lane, ports);
    const [c] = await compactionsOf(ports, lane);
    expect(c).toBeDefined();

    const dry = await gcFlow({ lane, ports }, { dryRun: true });
    expect(dry.output).toMatchObject({ totals: { superseded: 2, live: 1, compacted: { live: 1 } }, wouldMark: [] });
    // First seen an hour ago: a grace counted from first seen would collect them now.
    const run = await gcFlow({ lane, ports });
    expect(run.output).toMatchObject({ totals: { superseded: 2, inGrace: 2, marked: 0 } });
    expect([...deletes.keys()]).toEqual([]);
    const deadline = new Date(Date.parse(c!.compactedAt) + 10 * MINUTE).toISOString();
    for (const key of before)
      expect(await rootOf({ lane, ports }, key)).toMatchObject({
        state: 'ACTIVE',
        fate: 'SUPERSEDED',
        graceDeadline: deadline,
      });
    const described = await describeStream({ stream: lane.stream, partitions: 1 }, ports);
    expect(described.lanes[0]?.lifecycle).toMatchObject({
      fates: { SUPERSEDED: 2, LIVE: 1 },
      superseded: before.map((key) => ({ key, graceDeadline: deadline })),
    });

    clock.advance(11 * MINUTE);
    const later = await gcFlow({ lane, ports });
    expect(later.output).toMatchObject({ totals: { superseded: 2, marked: 2, deleted: 2 } });
    for (const key of before) expect(deletes.get(key), key).toBe(1);
    expect(await listAll(ports, lane)).toEqual([c!.objectKey]);
  });

  it('a compaction that COMMITTED but never wrote compaction# is kept while the trim is inside it, TRIMMED once the trim passes its end', async () => {
    const deletes = new Map<string, number>();
    const ports: Ports = countingPorts(stores.ports, new MovableClock(), deletes);
    const { lane, acknowledged } = await laneWithRanges(ports, 'gcc-unnamed', 3); // [0,2) [2,5) [5,9)
    const plan = (await planCompaction(ports, lane, 2, DEFAULT_MAX_BYTES))!;
    await registerGenerationTask(plan.spec, ports);
    const written = await writeCompactedObject(ports, plan.spec, plan.commits);
    expect(await commitGenerationInProcess(plan.spec, ports)).toMatchObject({ outcome: 'COMMITTED' });
    expect(await compactionsOf(ports, lane)).toEqual([]); // the run stopped before compaction#
    const fate = async () => fateOf(fateContext(ports, lane, await loadHead(ports, lane)), written.objectKey);
    expect(await fate(), 'unnamed above the trim: the run may still name it').toBe('MAY_COMMIT');
    await trimLane({ ...lane, to: 2 }, ports);
    expect(await fate(), 'the trim inside its range').toBe('MAY_COMMIT');
    await trimLane({ ...lane, to: 5 }, ports);
    expect(await fate()).toBe('TRIMMED');
    expect((await gcFlow({ lane, ports }, { grace: '0s' })).status).toBe('SUCCEEDED');
    expect(deletes.get(written.objectKey)).toBe(1);
    const page = await readStream({ ...lane, from: 5 }, ports);
    expect(textOf(page.records)).toEqual(acknowledged[2]!.records);
  });
});

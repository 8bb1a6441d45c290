import { beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/domain/digest.js';
import { generationKeys } from '../../src/domain/generation.js';
import { encodeBatch } from '../../src/domain/record-batch.js';
import { laneKeys, rangeRootOf, type CommitRecord } from '../../src/domain/stream.js';
import { cleanupCommittedTask } from '../../src/generation/cleanup-task.js';
import { GENERATION_CUT_POINTS } from '../../src/generation/cut-points.js';
import { loadRecord } from '../../src/generation/load.js';
import { runFlow } from '../../src/local/flow-runner.js';
import type { Ports } from '../../src/ports/index.js';
import { materializeGen0Batch } from '../../src/stream/append/gen0-batch.js';
import { compactLane } from '../../src/stream/compaction/compact-lane.js';
import { COMPACTION_CUT_POINTS } from '../../src/stream/compaction/cut-points.js';
import { compactionKeys } from '../../src/stream/compaction/model.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { newGenerationCase } from '../support/generation-fixture.js';
import { replaceObject } from '../support/replace-object.js';
import { appendOne, compactionsOf, laneWithRanges } from '../faults/stream-compaction-world.js';

/**
 * Task cleanup, task-first and plan-second, for every task kind (docs/stream-log.md "The
 * generation-commit flow", task cleanup): a generic commit-generation task, a stream range's generation
 * 0, a compaction — one cleanup (src/generation/cleanup-task.ts). The task item is deleted
 * only after the committed generation, its root, its output, the checkpoint and the
 * protections verify; a failed check refuses and keeps the task, and the plan (a mark's
 * cleanup cursor) is advanced only past cleaned tasks, so a later run finds it again.
 */
let stores: TestStores;
beforeAll(async () => {
  stores = await freshStores();
});

const taskOf = (ports: Ports, root: string, taskId: string) => ports.authority.get(generationKeys.task(root, taskId));

/** Replaces an object's bytes (a corruption), returning a function that puts the original back. */
async function corrupt(key: string): Promise<() => Promise<void>> {
  const original = (await stores.ports.objects.get(key))!;
  const evil = encodeBatch([new TextEncoder().encode('EVIL')]);
  expect(await replaceObject(stores.ports.objects, key, evil, { ...original.metadata, sha256: sha256Hex(evil) })).toBe(
    'APPLIED',
  );
  return async () =>
    void expect(await replaceObject(stores.ports.objects, key, original.bytes, original.metadata)).toBe('APPLIED');
}

describe('the commit-generation flow', () => {
  it('cleans its committed task after Committed; a failed check refuses and keeps it, and the commit stands', async () => {
    const c = await newGenerationCase(stores.ports, 'cleanup-flow');
    const run = await runFlow('commit-generation', c.input, { ports: stores.ports, retryIntervalMs: 0 });
    expect(run.output).toMatchObject({ outcome: 'COMMITTED', cleanup: { taskCleaned: true } });
    expect(await taskOf(stores.ports, c.root, 'task-1'), 'the committed task was left behind').toBeUndefined();

    // Another task whose cleanup cannot run: the flow still ends Committed, the task stays.
    const d = await newGenerationCase(stores.ports, 'cleanup-refused');
    stores.faults.arm(`${GENERATION_CUT_POINTS.taskCleanup}:fail*`);
    const kept = await runFlow('commit-generation', d.input, { ports: stores.ports, retryIntervalMs: 0 });
    stores.faults.disarm();
    expect(kept).toMatchObject({ status: 'SUCCEEDED', output: { outcome: 'COMMITTED' } });
    expect(await taskOf(stores.ports, d.root, 'task-1')).toMatchObject({ state: 'COMMITTED' });
    // Its output stops verifying: the cleanup refuses, the task stays.
    const record = (await loadRecord(stores.ports, d.root, 0))!;
    const restore = await corrupt(record.objectKey);
    const refused = await cleanupCommittedTask({ root: d.root, generation: 0, taskId: 'task-1' }, stores.ports);
    expect(refused).toMatchObject({ taskCleaned: false, refused: expect.stringContaining(record.objectKey) });
    expect(await taskOf(stores.ports, d.root, 'task-1')).toMatchObject({ state: 'COMMITTED' });
    await restore();
    expect(await cleanupCommittedTask({ root: d.root, generation: 0, taskId: 'task-1' }, stores.ports)).toEqual({
      taskCleaned: true,
    });
    expect(await taskOf(stores.ports, d.root, 'task-1')).toBeUndefined();
  });
});

describe('generation 0 of a stream range', () => {
  it('a run cleans the tasks below its mark; a refused one is kept and the cursor waits before it until it verifies', async () => {
    const { lane } = await laneWithRanges(stores.ports, 'cleanup-gen0', 4);
    const commits = (await stores.ports.authority.query(laneKeys.pk(lane), 'commit#')) as unknown as CommitRecord[];
    const gen0Task = (c: CommitRecord) => taskOf(stores.ports, rangeRootOf(lane, c.start), c.attemptId);
    // The first run materializes all four; its cleanup fails (tasks left, the run not failed).
    stores.faults.arm(`${GENERATION_CUT_POINTS.taskCleanup}:crash-before*`);
    const first = await materializeGen0Batch(lane, stores.ports);
    stores.faults.disarm();
    expect(first).toMatchObject({
      next: commits.at(-1)!.end,
      cleanup: { tasks: 0, failed: expect.stringContaining('Cutpoint.WorkerCrashed') },
    });
    for (const c of commits) expect(await gen0Task(c)).toMatchObject({ state: 'COMMITTED' });

    // The third range's generation 0 stops verifying: the next run cleans the first two, refuses it, and stops there.
    const third = (await loadRecord(stores.ports, rangeRootOf(lane, commits[2]!.start), 0))!;
    const restore = await corrupt(third.objectKey);
    const second = await materializeGen0Batch(lane, stores.ports);
    expect(second.cleanup).toMatchObject({
      tasks: 2,
      refused: { end: commits[2]!.end, reason: expect.stringContaining(third.objectKey) },
    });
    expect(await gen0Task(commits[0]!)).toBeUndefined();
    expect(await gen0Task(commits[1]!)).toBeUndefined();
    expect(await gen0Task(commits[2]!), 'a refused task must stay').toMatchObject({ state: 'COMMITTED' });
    expect(await gen0Task(commits[3]!), 'the cursor passed a task still there').toMatchObject({ state: 'COMMITTED' });
    expect(await stores.ports.authority.get({ pk: laneKeys.pk(lane), sk: 'gen0#mark' })).toMatchObject({
      cleanedTo: commits[1]!.end,
    });

    await restore();
    expect((await materializeGen0Batch(lane, stores.ports)).cleanup).toEqual({ tasks: 2 });
    for (const c of commits) expect(await gen0Task(c)).toBeUndefined();
  });
});

describe('a compaction', () => {
  it("every run whose cleanup failed is found again from the mark's cleanup cursor, not only the last one", async () => {
    const { lane, writer } = await laneWithRanges(stores.ports, 'cleanup-compact', 2);
    const compactFailingCleanup = async () => {
      stores.faults.arm(`${COMPACTION_CUT_POINTS.compactCleanup}:fail*`);
      const run = await compactLane(lane, stores.ports);
      stores.faults.disarm();
      expect(run).toMatchObject({ taskCleaned: false });
    };
    await compactFailingCleanup();
    for (const n of [2, 3]) await appendOne(writer, n);
    await compactFailingCleanup();
    const runs = await compactionsOf(stores.ports, lane);
    expect(runs).toHaveLength(2);
    for (const c of runs) expect(await taskOf(stores.ports, c.root, c.taskId)).toMatchObject({ state: 'COMMITTED' });

    // The first run's output stops verifying: the next run refuses its task and keeps both.
    const restore = await corrupt(runs[0]!.objectKey);
    expect(await compactLane(lane, stores.ports)).toMatchObject({ taskCleaned: false });
    for (const c of runs) expect(await taskOf(stores.ports, c.root, c.taskId)).toMatchObject({ state: 'COMMITTED' });
    await restore();
    // A run with nothing to compact cleans both: the older one too (the cursor), not only the one at the mark.
    await compactLane(lane, stores.ports);
    for (const c of runs)
      expect(await taskOf(stores.ports, c.root, c.taskId), `${c.taskId} left behind`).toBeUndefined();
    expect(await stores.ports.authority.get(compactionKeys.mark(lane))).toMatchObject({ cleanedTo: runs[1]!.end });
  });
});

import { beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/domain/digest.js';
import { generationKeys, outputKeyOf } from '../../src/domain/generation.js';
import { abortGeneration } from '../../src/generation/abort.js';
import { commitGeneration } from '../../src/generation/commit.js';
import { GENERATION_CUT_POINTS } from '../../src/generation/cut-points.js';
import { probeGeneration } from '../../src/generation/probe.js';
import { recordPreparedGeneration } from '../../src/generation/record-prepared.js';
import { registerTask } from '../../src/generation/register-task.js';
import { writeGenerationObject } from '../../src/generation/write-object.js';
import { runFlow, type FlowResult } from '../../src/local/flow-runner.js';
import { expectExactlyOneCommitted, expectProvenAbort, newGenerationCase } from '../support/generation-fixture.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { landBeforeRead } from '../support/intercept-ports.js';
import { matrixCutPoints } from '../support/matrix-cut-points.js';
import { withKinds } from '../support/matrix-lane.js';
import { replaceObject } from '../support/replace-object.js';

/**
 * The generation-commit fault matrix: every cut point × every fault kind, then recovery
 * (re-running the same durable task, as the EventBridge recovery rule does), then the
 * invariant — exactly one COMMITTED generation or a proven abort, never a second
 * generation, the object's bytes verified.
 */
let stores: TestStores;
beforeAll(async () => {
  stores = await freshStores();
});

const run = (input: unknown): Promise<FlowResult> =>
  runFlow('commit-generation', input, { ports: stores.ports, retryIntervalMs: 0 });
const recoveryInput = (input: unknown) => ({
  recoveryOf: 'arn:local:execution:failed',
  originalInput: JSON.stringify(input),
});
const outcomeOf = (r: FlowResult) => (r.output as { outcome?: string } | undefined)?.outcome;

/** The commit path: the flow's cut points in its spec's order (src/registry/flow-cut-points.ts) but these. */
const COMMIT_PATH = matrixCutPoints('commit-generation', {
  [GENERATION_CUT_POINTS.objectCopy]:
    "a single-source task's copy: these tasks have several sources (concatenated); stream-gen0.matrix runs the copy",
  [GENERATION_CUT_POINTS.taskCleanup]:
    'after COMMITTED, and an error there never fails the flow (the commit stands): generation-task-cleanup.test.ts',
  [GENERATION_CUT_POINTS.abortCas]: 'a task that lost its slot: its own cases below',
});
const cases = withKinds(COMMIT_PATH);
const persistentCases = withKinds(COMMIT_PATH, 3);

describe('one fault at each cut point of the commit path', () => {
  it.each(cases)('%s × %s → exactly one COMMITTED generation', async (cutPoint, kind) => {
    const c = await newGenerationCase(stores.ports, `${cutPoint}-${kind}`);
    const injector = stores.faults.arm(`${cutPoint}:${kind}`);
    const first = await run(c.input);
    stores.faults.disarm();
    expect(injector.fired.map((f) => `${f.cutPoint}:${f.kind}`)).toEqual([`${cutPoint}:${kind}`]);
    expect(first.status, `${first.error}: ${first.cause}`).toBe('SUCCEEDED');
    expect(outcomeOf(first)).toBe('COMMITTED');
    await expectExactlyOneCommitted(stores.ports, c);

    // Recovery: the same task again (a new worker) reloads the exact winner.
    const again = await run(recoveryInput(c.input));
    expect(again.status).toBe('SUCCEEDED');
    expect(again.output).toMatchObject({ outcome: 'COMMITTED', sha256: (first.output as { sha256: string }).sha256 });
    await expectExactlyOneCommitted(stores.ports, c);
  });
});

describe('a fault that persists at each cut point, then recovery once it clears', () => {
  it.each(persistentCases)(
    '%s × %s* → failed or committed, then recovery commits exactly once',
    async (cutPoint, kind) => {
      const c = await newGenerationCase(stores.ports, `persist-${cutPoint}-${kind}`);
      stores.faults.arm(`${cutPoint}:${kind}${kind === 'delay' ? '=5' : ''}*`);
      const first = await run(c.input);
      stores.faults.disarm();
      if (kind === 'crash-before' || kind === 'fail' || kind === 'lose-request') {
        // Nothing can apply, retries run out: the execution fails, leaving durable state.
        expect(first.status).toBe('FAILED');
        expect([
          'Cutpoint.WorkerCrashed',
          'Cutpoint.EffectFailed',
          'Cutpoint.OutcomeUnknown',
          'Generation.Undecided',
        ]).toContain(first.error);
      } else {
        // The effect applies every time; exact-identity reloads turn that into progress.
        expect(first.status, `${first.error}: ${first.cause}`).toBe('SUCCEEDED');
      }
      const recovered = await run(recoveryInput(c.input));
      expect(recovered.status, `${recovered.error}: ${recovered.cause}`).toBe('SUCCEEDED');
      expect(outcomeOf(recovered)).toBe('COMMITTED');
      await expectExactlyOneCommitted(stores.ports, c);
    },
  );
});

describe('faults at the abort cut point (a task that lost its slot)', () => {
  it.each(withKinds(['generation.abort.cas']).map(([, k]) => [k]))(
    'generation.abort.cas × %s → proven abort, the winner untouched',
    async (kind) => {
      const c = await newGenerationCase(stores.ports, `abort-${kind}`);
      expect(outcomeOf(await run(c.input))).toBe('COMMITTED');
      const loser = { ...c.input, taskId: 'task-2' };
      const injector = stores.faults.arm(`${GENERATION_CUT_POINTS.abortCas}:${kind}`);
      const result = await run(loser);
      stores.faults.disarm();
      expect(injector.fired).toHaveLength(1);
      expect(result.status, `${result.error}: ${result.cause}`).toBe('SUCCEEDED');
      expect(result.output).toMatchObject({ outcome: 'ABORTED', taskId: 'task-2' });
      await expectProvenAbort(stores.ports, c, 'task-2');
      await expectExactlyOneCommitted(stores.ports, c, 'task-1');
      const again = await run(loser);
      expect(again.output).toMatchObject({ outcome: 'ABORTED', taskId: 'task-2' });
    },
  );
});

describe('races', () => {
  it('two workers on the same task: one generation, both see the same winner', async () => {
    const c = await newGenerationCase(stores.ports, 'race-same');
    const [a, b] = await Promise.all([run(c.input), run(c.input)]);
    expect([a.status, b.status]).toEqual(['SUCCEEDED', 'SUCCEEDED']);
    expect(a.output).toMatchObject({ outcome: 'COMMITTED' });
    expect((a.output as { sha256: string }).sha256).toBe((b.output as { sha256: string }).sha256);
    await expectExactlyOneCommitted(stores.ports, c);
  });

  it("a commit that lands between a worker's reads is seen whole: task, record and head are one snapshot", async () => {
    // Two separate reads could straddle the commit transaction: the head read before it, the
    // record after it. The worker then saw its own won commit as "COMMITTED, head behind" and
    // failed Generation.Inconsistent (seen once in 150 runs of the race above).
    const c = await newGenerationCase(stores.ports, 'race-straddle');
    const ref = { root: c.root, taskId: c.input.taskId };
    const task = await registerTask(c.input, stores.ports);
    const object = await writeGenerationObject(ref, stores.ports, task);
    await recordPreparedGeneration({ ...ref, ...object }, stores.ports);
    // Worker A reloads; just before its read of the record goes out, worker B commits.
    const recordKey = generationKeys.record(c.root, c.input.generation);
    const race = landBeforeRead(stores.ports, recordKey, async () => {
      expect(await commitGeneration(ref, stores.ports)).toMatchObject({ outcome: 'COMMITTED', resolvedBy: 'applied' });
    });
    const outcome = await commitGeneration(ref, race.ports);
    expect(race.landed()).toBe(1);
    expect(outcome).toMatchObject({ outcome: 'COMMITTED', sha256: object.sha256, resolvedBy: 'exact-winner-reload' });
    await expectExactlyOneCommitted(stores.ports, c);
  });

  it('a late worker of a task committed and cleaned under it reloads the winner at every step', async () => {
    // The race above, one worker far behind: the first runs to Committed and its CleanupTask
    // deletes the task item; the second's next step found no task and failed
    // Generation.Rejected (CI's test:matrix, about 1 run in 50 of that race).
    const c = await newGenerationCase(stores.ports, 'race-cleaned');
    const first = await run(c.input);
    expect(first.output).toMatchObject({ outcome: 'COMMITTED', cleanup: { taskCleaned: true } });
    const winner = first.output as { objectKey: string; sha256: string; size: number };
    const ref = { root: c.root, generation: c.input.generation, taskId: c.input.taskId };
    const reload = { outcome: 'COMMITTED', sha256: winner.sha256, resolvedBy: 'exact-winner-reload' };
    expect(await writeGenerationObject(ref, stores.ports)).toEqual({
      objectKey: winner.objectKey,
      sha256: winner.sha256,
      size: winner.size,
      reused: true,
    });
    expect(
      await recordPreparedGeneration(
        { ...ref, objectKey: winner.objectKey, sha256: winner.sha256, size: winner.size },
        stores.ports,
      ),
    ).toMatchObject({ state: 'COMMITTED', reused: true });
    expect(await commitGeneration(ref, stores.ports)).toMatchObject(reload);
    expect(await probeGeneration(ref, stores.ports)).toMatchObject({ state: 'COMMITTED', ...reload });
    expect(await abortGeneration({ ...ref, reason: 'late' }, stores.ports)).toMatchObject(reload);
    // The whole flow again: registration sees the COMMITTED record and writes no task again.
    const second = await run(c.input);
    expect(second.output).toMatchObject({ outcome: 'COMMITTED', sha256: winner.sha256 });
    expect(await stores.ports.authority.get(generationKeys.task(c.root, c.input.taskId))).toBeUndefined();
    await expectExactlyOneCommitted(stores.ports, c);
    // Without the generation, or for a task the record does not name, the task is missing.
    await expect(commitGeneration({ root: c.root, taskId: c.input.taskId }, stores.ports)).rejects.toMatchObject({
      name: 'Generation.TaskMissing',
    });
    await expect(commitGeneration({ ...ref, taskId: 'task-9' }, stores.ports)).rejects.toMatchObject({
      name: 'Generation.TaskMissing',
    });
  });

  it('two tasks for the same slot: one commits, the other proves its abort', async () => {
    const c = await newGenerationCase(stores.ports, 'race-slot');
    const [a, b] = await Promise.all([run(c.input), run({ ...c.input, taskId: 'task-2' })]);
    const outcomes = [outcomeOf(a), outcomeOf(b)].sort();
    expect(outcomes).toEqual(['ABORTED', 'COMMITTED']);
    const winner = outcomeOf(a) === 'COMMITTED' ? 'task-1' : 'task-2';
    await expectExactlyOneCommitted(stores.ports, c, winner);
    await expectProvenAbort(stores.ports, c, winner === 'task-1' ? 'task-2' : 'task-1');
  });
});

describe('hostile durable state', () => {
  it('a foreign object under the output key is never adopted: the task proves its abort', async () => {
    const c = await newGenerationCase(stores.ports, 'foreign-object');
    const key = outputKeyOf(c.input);
    const bytes = new TextEncoder().encode('not ours');
    await stores.ports.objects.put('test.object.put', key, bytes, { sha256: sha256Hex(bytes), 'task-id': 'intruder' });
    const result = await run(c.input);
    expect(result.output).toMatchObject({ outcome: 'ABORTED', reason: 'Cutpoint.IdentityConflict' });
    await expectProvenAbort(stores.ports, c, 'task-1');
  });

  it('a source whose bytes fail their checksum is never materialized', async () => {
    const c = await newGenerationCase(stores.ports, 'bad-source');
    const first = c.input.sources[0]!;
    expect(
      await replaceObject(stores.ports.objects, first.key, new TextEncoder().encode('tampered'), {
        sha256: first.sha256,
      }),
    ).toBe('APPLIED');
    const result = await run(c.input);
    expect(result.output).toMatchObject({ outcome: 'ABORTED', reason: 'Cutpoint.ChecksumMismatch' });
    expect(await stores.ports.objects.head(outputKeyOf(c.input))).toBeUndefined();
    await expectProvenAbort(stores.ports, c, 'task-1');
  });

  it('the same task id with another source set is refused, and nothing changes', async () => {
    const c = await newGenerationCase(stores.ports, 'identity');
    expect((await run(c.input)).status).toBe('SUCCEEDED');
    const result = await run({ ...c.input, sources: c.input.sources.slice(0, 1) });
    expect(result).toMatchObject({ status: 'FAILED', error: 'Generation.Rejected' });
    await expectExactlyOneCommitted(stores.ports, c);
  });
});
